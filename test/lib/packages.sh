# test/lib/packages.sh — the Debian packages the project needs, installed once
#
# Sourced by test/run, demo/run and `make deps` (after common.sh).  The
# list lives in test/packages.txt, one package per line, "#" starts a
# comment, a line [build] or [test] starts a section; PACKAGE@COMMAND names
# a package needed only when COMMAND is not on the PATH (another package may
# provide it).
#
#   ro_package_list [SECTION]
#                            print the packages of test/packages.txt: of
#                            SECTION (build or test), or of both
#   ro_missing_packages [SECTION]
#                            print those dpkg does not have installed
#   ro_install_packages [LOG [SECTION]]
#                            as root: apt-get update + install the missing
#                            ones (output to LOG when given and not empty);
#                            as anyone else: print the exact sudo apt-get
#                            line and fail
#   ro_install_maven SUITE...
#                            the Maven artifacts the named suites need: the
#                            pinned Apache Kafka jars (ak_install) when a
#                            suite's *.t or cluster script sources
#                            test/lib/apache_kafka.sh; Apicurio Registry
#                            (sr_apicurio_install) when a suite's *.t
#                            starts it; nothing otherwise

# ro_package_list [SECTION] — the Debian packages named in
# test/packages.txt, of one section or of all (a PACKAGE@COMMAND line as
# PACKAGE@COMMAND)
ro_package_list() {
	local section=${1:-}
	sed -e 's/#.*//' -e 's/[[:space:]]//g' "$RO_ROOT/test/packages.txt" |
		awk -v want="$section" '
			$0 == "" { next }
			/^\[[a-z]+\]$/ { current = substr($0, 2, length($0) - 2); next }
			want == "" || want == current { print }'
}

# ro_missing_packages [SECTION] — the listed packages dpkg does not report
# installed
ro_missing_packages() {
	local pkg status
	while read -r pkg; do
		if [[ $pkg == *@* ]]; then
			command -v "${pkg#*@}" >/dev/null && continue
			pkg=${pkg%@*}
		fi
		status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null) || status=
		[[ $status == ii* ]] || printf '%s\n' "$pkg"
	done < <(ro_package_list "${1:-}")
}

# ro_install_packages [LOG [SECTION]] — install what is missing (see the
# header)
ro_install_packages() {
	local log=${1:-} section=${2:-} missing
	[[ -n $log ]] || log=/dev/stdout
	if ! command -v dpkg-query >/dev/null; then
		ro_log "not a Debian system; make sure these are installed: $(ro_package_list "$section" | sed 's/@.*//' | tr '\n' ' ')"
		return 0
	fi
	mapfile -t missing < <(ro_missing_packages "$section")
	[[ ${#missing[@]} == 0 ]] && return 0
	if [[ $EUID != 0 ]]; then
		echo "missing Debian packages; run:"
		echo "sudo apt-get install -y ${missing[*]}"
		return 1
	fi
	ro_log "installing ${missing[*]}"
	if ! { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"; } \
		</dev/null >>"$log" 2>&1; then
		[[ $log == /dev/stdout ]] || tail -n 20 "$log" >&2
		ro_log "apt-get install failed"
		return 1
	fi
}

# ro_install_maven SUITE... — resolve the pinned Apache Kafka jars once, in
# the package step, when one of the suites uses a real cluster, and build
# Apicurio Registry when one starts it (so a suite's time limit never pays
# for the download)
ro_install_maven() {
	local name kafka= apicurio=
	for name in "$@"; do
		grep -qs 'lib/apache_kafka\.sh' "$RO_ROOT/test/$name"/*.t "$RO_ROOT/test/$name/cluster" && kafka=1
		grep -qs 'sr_apicurio_start' "$RO_ROOT/test/$name"/*.t && apicurio=1
	done
	if [[ -n $kafka ]]; then
		# shellcheck source=test/lib/apache_kafka.sh
		. "$RO_ROOT/test/lib/apache_kafka.sh"
		ak_install || return 1
	fi
	if [[ -n $apicurio ]]; then
		# shellcheck source=test/lib/schema_registry.sh
		. "$RO_ROOT/test/lib/schema_registry.sh"
		sr_apicurio_install || return 1
	fi
	return 0
}
