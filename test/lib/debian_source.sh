# test/lib/debian_source.sh — upstream sources from Debian's archive, as apt
# verifies them, for the builds of what Debian 12 ships too old or not at
# all (tools/build-postgresql, tools/build-librdkafka).
#
# Sourced (bash, after common.sh).  A private apt state under DS_CACHE/apt
# holds deb-src lines only, with its own lists and cache, so the system's
# apt configuration is never touched: apt checks the InRelease signatures
# against debian-archive-keyring, and the upstream tarball's SHA-256 is
# checked here against the signed Sources index before anyone unpacks it.
#
#   ds_init CACHE LOG SAY    where the state lives, the log of apt's output,
#                            the function that prints progress
#   ds_archive_uri main|security
#                            the URI the system's own apt sources use for
#                            its release's main (bookworm on Debian 12,
#                            trixie in the Debian 13 root) or security suite
#   ds_apt_update SUITE...   write the deb-src lines of SUITEs (sid, trixie,
#                            trixie-security, bookworm, bookworm-security:
#                            the archive the system's own apt uses for the
#                            main or the security suites) and fetch their
#                            signed Sources indexes
#   ds_fetch_orig PACKAGE [VERSION]
#                            download PACKAGE's upstream tarball, for
#                            VERSION (UPSTREAM-*: any Debian revision of
#                            that upstream version) or else the newest
#                            version the indexes list that the archive
#                            serves; print its path

DS_CACHE=
DS_LOG=/dev/null
DS_SAY=echo

ds_init() {
	DS_CACHE=$1
	DS_LOG=$2
	DS_SAY=$3
}

# ds__apt_opts — the private apt state: deb-src lines only, own lists and
# cache
ds__apt_opts() {
	printf '%s\n' -o "Dir::Etc::SourceList=$DS_CACHE/apt/sources.list" \
		-o Dir::Etc::SourceParts=/dev/null -o "Dir::State::Lists=$DS_CACHE/apt/lists" \
		-o "Dir::Cache=$DS_CACHE/apt" -o APT::Sandbox::User=root
}

# ds__archive_uri SUITE — the URI the system's own apt sources use for SUITE
# (the release's main suite, or its -security suite), from the deb822 files of sources.list.d or a one-line
# sources.list
ds__archive_uri() {
	local suite=$1 uri
	uri=$(awk -v want="$suite" '
		/^URIs:/ { uris = $2 }
		/^Suites:/ { for (i = 2; i <= NF; i++) if ($i == want) { print uris; exit } }
	' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
	if [[ -z $uri && -f /etc/apt/sources.list ]]; then
		uri=$(awk -v want="$suite" '$1 == "deb" && $0 !~ /^#/ {
			for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:/) { u = $i; s = $(i + 1); break }
			if (s == want) { print u; exit }
		}' /etc/apt/sources.list)
	fi
	[[ -n $uri ]] || { "$DS_SAY" "no apt source for $suite in /etc/apt: cannot find Debian's archive"; return 1; }
	printf '%s\n' "$uri"
}

# ds_archive_uri — see the header
ds_archive_uri() {
	local codename
	codename=$(. /etc/os-release && printf '%s\n' "${VERSION_CODENAME:-}")
	[[ -n $codename ]] || { "$DS_SAY" "no VERSION_CODENAME in /etc/os-release"; return 1; }
	case $1 in
	main) ds__archive_uri "$codename" ;;
	security) ds__archive_uri "$codename-security" ;;
	*) return 2 ;;
	esac
}

ds_apt_update() {
	local opts main security suite uri
	main=$(ds_archive_uri main) || return 1
	security=$(ds_archive_uri security) || return 1
	mkdir -p "$DS_CACHE/apt/lists/partial" "$DS_CACHE/apt/archives/partial"
	: >"$DS_CACHE/apt/sources.list"
	for suite in "$@"; do
		case $suite in *-security) uri=$security ;; *) uri=$main ;; esac
		printf 'deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s %s main\n' \
			"$uri" "$suite" >>"$DS_CACHE/apt/sources.list"
	done
	mapfile -t opts < <(ds__apt_opts)
	apt-get "${opts[@]}" -q update >>"$DS_LOG" 2>&1 || {
		tail -n 20 "$DS_LOG" >&2
		"$DS_SAY" "apt-get update of the deb-src indexes failed"
		return 1
	}
}

ds_fetch_orig() {
	local package=$1 only=${2:-} opts versions version line sum file
	mapfile -t opts < <(ds__apt_opts)
	mapfile -t versions < <(apt-cache "${opts[@]}" showsrc --only-source "$package" 2>/dev/null |
		sed -n 's/^Version: //p' | sort -urV | awk -v only="$only" '
			only == "" || $0 == only || (only ~ /-\*$/ && index($0, substr(only, 1, length(only) - 1)) == 1)')
	if [[ ${#versions[@]} == 0 ]]; then
		"$DS_SAY" "no deb-src entry for $package${only:+ $only}"
		return 1
	fi
	mkdir -p "$DS_CACHE/src"
	for version in "${versions[@]}"; do
		# the .dsc and Debian diff are not needed (and some pools lack them)
		(cd "$DS_CACHE/src" && apt-get "${opts[@]}" -q source --download-only "$package=$version") \
			>>"$DS_LOG" 2>&1 || true
		line=$(apt-cache "${opts[@]}" showsrc --only-source "$package" 2>/dev/null |
			awk -v version="$version" '/^Version: / { v = ($2 == version) }
			     /^Checksums-Sha256:/ { c = 1; next } /^[^ ]/ { c = 0 }
			     v && c && $3 ~ /\.orig\.tar\./ { print $1, $3; exit }')
		[[ -n $line ]] || continue
		sum=${line%% *}
		file=$DS_CACHE/src/${line#* }
		if [[ -f $file ]] && echo "$sum  $file" | sha256sum -c --quiet >/dev/null 2>&1; then
			"$DS_SAY" "$package $version: ${file##*/} (SHA-256 as in the signed index)"
			printf '%s\n' "$file"
			return 0
		fi
		rm -f -- "$file"
		"$DS_SAY" "$package $version: the archive does not serve ${line#* } (see $DS_LOG)"
	done
	return 1
}
