#!/bin/bash
# test/tools/04-build-postgresql-inside-make.t — tools/build-postgresql
# builds as well from inside a make recipe (as `make test` starts it) as
# from a shell.
#
# Under `make test` the harness, and so the build, inherits MAKELEVEL=1 and
# MAKEFLAGS from our make; PostgreSQL's src/Makefile.global generates
# utils/errcodes.h and its other headers only when MAKELEVEL is 0, so the
# build failed on every fresh machine.  The real PostgreSQL build takes
# minutes, so this runs the real tool on a small source tree that keeps
# PostgreSQL's rule (headers generated only at the top level), served by
# stand-ins of Debian's apt-get and apt-cache that answer as the archive
# does (a Sources index entry with the tarball's SHA-256, the tarball).
# It checks that the tool builds it from a shell and from a make recipe
# (with -j2, so MAKEFLAGS carries a jobserver too), into a cache of its own.

set -euo pipefail

RO_ROOT=${RO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)}
# shellcheck source=test/lib/common.sh
. "$RO_ROOT/test/lib/common.sh"

tap_plan 6

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ro-build-pg-test.XXXXXX")
ro_on_exit "rm -rf -- '$WORK'"

# source_tarball DIR NAME — pack DIR as NAME in $WORK/pool
mkdir -p "$WORK/pool" "$WORK/bin"
source_tarball() {
	tar -czf "$WORK/pool/$2" -C "$1/.." "$(basename "$1")"
}

# a PostgreSQL-like tree: configure writes the prefix, the Makefile
# generates its header only at MAKELEVEL 0 and the program needs it
pg=$WORK/src/postgresql-99.1
mkdir -p "$pg"
cat >"$pg/configure" <<'EOS'
#!/bin/sh
for arg; do
	case $arg in --prefix=*) echo "prefix = ${arg#--prefix=}" >Makefile.prefix ;; esac
done
EOS
chmod +x "$pg/configure"
cat >"$pg/prog.c" <<'EOS'
#include "errcodes.h"
int main(void) { return GENERATED - 1; }
EOS
printf '#!/bin/sh\necho PostgreSQL 99.1\n' >"$pg/pg_config"
chmod +x "$pg/pg_config"
cat >"$pg/Makefile" <<'EOS'
include Makefile.prefix
# as PostgreSQL's src/Makefile.global: the generated headers are made only
# by the top-level make
ifeq ($(MAKELEVEL),0)
GENERATED_HEADERS = errcodes.h
endif
all: prog
errcodes.h:
	echo '#define GENERATED 1' >$@
prog: prog.c | $(GENERATED_HEADERS)
	$(CC) -o $@ prog.c
install: all
	mkdir -p $(prefix)/bin
	cp prog pg_config $(prefix)/bin/
EOS
source_tarball "$pg" postgresql-99_99.1.orig.tar.gz

tap=$WORK/src/pgtap-1.0
mkdir -p "$tap"
printf 'all:\n\t@true\ninstall:\n\t@true\n' >"$tap/Makefile"
source_tarball "$tap" pgtap_1.0.orig.tar.gz

# stand-ins of apt-cache (showsrc: one Sources entry per tarball of the
# pool) and apt-get (update: nothing; source --download-only P=V: the
# tarball into the current directory), as the private apt state answers
cat >"$WORK/bin/apt-cache" <<EOS
#!/bin/bash
pool=$WORK/pool
EOS
cat >>"$WORK/bin/apt-cache" <<'EOS'
pkg=${*: -1}
for file in "$pool/${pkg}_"*.orig.tar.gz; do
	[[ -f $file ]] || exit 0
	name=${file##*/}
	version=${name#"${pkg}_"}
	version=${version%.orig.tar.gz}-1
	printf 'Package: %s\nVersion: %s\nChecksums-Sha256:\n %s %s %s\n\n' "$pkg" "$version" \
		"$(sha256sum "$file" | cut -d' ' -f1)" "$(stat -c %s "$file")" "$name"
done
EOS
cat >"$WORK/bin/apt-get" <<EOS
#!/bin/bash
pool=$WORK/pool
EOS
cat >>"$WORK/bin/apt-get" <<'EOS'
case " $* " in
*" update "*) exit 0 ;;
*" source "*)
	want=${*: -1}
	cp "$pool/${want%%=*}_${want#*=}" . 2>/dev/null ||
		cp "$pool/${want%%=*}_$(v=${want#*=}; echo "${v%-1}").orig.tar.gz" .
	;;
esac
EOS
chmod +x "$WORK/bin/apt-cache" "$WORK/bin/apt-get"

# build CACHE [make] — run the tool for major 99 into CACHE, from a shell or
# from a make recipe; its output in CACHE.out
build() {
	local cache=$1 status=0
	if [[ ${2:-} == make ]]; then
		printf 'all:\n\t%s/tools/build-postgresql 99\n' "$RO_ROOT" >"$WORK/outer.mk"
		PATH=$WORK/bin:$PATH RO_PG_CACHE=$cache make -j2 -f "$WORK/outer.mk" \
			>"$cache.out" 2>&1 || status=$?
	else
		PATH=$WORK/bin:$PATH RO_PG_CACHE=$cache "$RO_ROOT/tools/build-postgresql" 99 \
			>"$cache.out" 2>&1 || status=$?
	fi
	return "$status"
}

# 1-2: from a shell, as a developer runs it by hand
status=0
build "$WORK/shell" || status=$?
tap_is "$status" 0 "from a shell, tools/build-postgresql builds the source tree"
[[ $status == 0 ]] || tap_diag "$(tail -n 30 "$WORK/shell.out" "$WORK/shell/pg99.build.log" 2>/dev/null)"
tap_ok "$([[ -x $WORK/shell/pg99/bin/prog && -f $WORK/shell/pg99/.ro-built ]] && echo 0 || echo 1)" \
	"its program is installed and the build is stamped"

# 3-5: from a make recipe, as make test runs it
status=0
build "$WORK/make" make || status=$?
tap_is "$status" 0 "from inside make -j2 (MAKELEVEL and MAKEFLAGS inherited), it builds too"
[[ $status == 0 ]] || tap_diag "$(tail -n 30 "$WORK/make.out" "$WORK/make/pg99.build.log" 2>/dev/null)"
tap_ok "$([[ -x $WORK/make/pg99/bin/prog && -f $WORK/make/pg99/.ro-built ]] && echo 0 || echo 1)" \
	"its program is installed and the build is stamped"
tap_cmd "the program built from inside make runs (its generated header was made)" \
	"$WORK/make/pg99/bin/prog"

# 6: a second call reuses the stamped build without fetching
rm -f "$WORK/pool/"*
status=0
build "$WORK/make" make || status=$?
tap_is "$status" 0 "a stamped build is reused from inside make with nothing to fetch"

tap_done
