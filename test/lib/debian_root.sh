#!/bin/bash
# test/lib/debian_root.sh — enter a Debian root made by debootstrap
# (tools/build-trixie-root) to run a command there, with only what a run
# needs bind-mounted, and nothing left mounted afterwards.
#
# Sourced (bash, after common.sh), or run as a program: test/lib/debian_root.sh
# ROOT ... is dr_run ROOT ... (test/run runs it so, under its time limit).
#
#   dr_run ROOT [--overlay DIR] [--bind DIR]... -- [VAR=VALUE]... CMD...
#                            run CMD chrooted into ROOT as root, with /proc,
#                            /dev, /dev/pts and /dev/shm of this machine
#                            bind-mounted at the same places inside, and
#                            each DIR (a work directory) at its own path;
#                            return CMD's status.  The mounts are made in a
#                            mount namespace of the run's own (unshare
#                            --mount, private propagation): nobody outside
#                            sees them, and the kernel drops them when the
#                            last process of the run ends, however it ends;
#                            they are also unmounted when CMD returns, and
#                            the empty directories made inside ROOT for
#                            them removed.  With --overlay DIR, CMD runs in
#                            a copy of ROOT that costs nothing: an overlay
#                            mount of ROOT (read only beneath) and DIR/up,
#                            which receives every change (DIR/work and
#                            DIR/merged are the overlay's own); ROOT stays
#                            as it was, and another run with the same DIR
#                            sees what the first one changed.  The
#                            network is this machine's: a server the run
#                            starts listens on this machine's 127.0.0.1.
#   dr_mounts_under DIR      print the mount points of this namespace at or
#                            under DIR (none: nothing printed); a root is
#                            removed only when this prints nothing
#
# CMD's environment is a clean one (PATH Debian's default, HOME=/root,
# LANG=C.UTF-8, TERM) and the VAR=VALUE words given: nothing of the
# caller's, whose paths name this machine's files.
# shellcheck shell=bash

# dr_run — see the header
dr_run() {
	local root=$1 overlay= binds=() env=() made=() dir top status=0
	shift
	while [[ $# -ge 2 && ($1 == --bind || $1 == --overlay) ]]; do
		if [[ $1 == --bind ]]; then
			binds+=("$2")
		else
			overlay=$2
		fi
		shift 2
	done
	[[ ${1:-} == -- ]] || { ro_log "dr_run: usage: dr_run ROOT [--overlay DIR] [--bind DIR]... -- CMD..."; return 2; }
	shift
	[[ -x $root/bin/sh ]] || { ro_log "dr_run: $root is not a root (no bin/sh)"; return 1; }
	[[ -z $overlay ]] || mkdir -p "$overlay/up" "$overlay/work" "$overlay/merged"
	# the mount points that do not exist yet, to remove when empty afterwards
	for dir in "${binds[@]}"; do
		top=
		dir=$root$dir
		while [[ ! -e $dir ]]; do
			top=$dir
			dir=$(dirname "$dir")
		done
		[[ -z $top ]] || made+=("$top")
	done
	env=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
		LANG=C.UTF-8 TERM="${TERM:-dumb}")
	unshare --mount --propagation private -- /bin/bash -c '
		set -e
		root=$1
		overlay=$2
		shift 2
		if [[ -n $overlay ]]; then
			mount -t overlay overlay -o "lowerdir=$root,upperdir=$overlay/up,workdir=$overlay/work" "$overlay/merged"
			root=$overlay/merged
		fi
		binds=()
		while [[ $1 != -- ]]; do binds+=("$1"); shift; done
		shift
		mounted=()
		undo() {
			local i
			for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
				umount -l "${mounted[i]}" 2>/dev/null || true
			done
		}
		trap undo EXIT
		for dir in /proc /dev /dev/pts /dev/shm "${binds[@]}"; do
			mkdir -p "$root$dir"
			mount --bind "$dir" "$root$dir"
			mounted+=("$root$dir")
		done
		status=0
		chroot "$root" /usr/bin/env -i "$@" || status=$?
		exit "$status"
	' dr_run "$root" "$overlay" "${binds[@]}" -- "${env[@]}" "$@" || status=$?
	for dir in "${made[@]}"; do
		[[ -d $dir ]] && find "$dir" -depth -type d -empty -delete 2>/dev/null
	done
	return "$status"
}

# dr_mounts_under — see the header
dr_mounts_under() {
	local dir
	dir=$(realpath -m -- "$1")
	findmnt -rn -o TARGET | awk -v dir="$dir" '$0 == dir || index($0, dir "/") == 1'
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	set -euo pipefail
	# shellcheck source=test/lib/common.sh
	. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
	dr_run "$@"
fi
