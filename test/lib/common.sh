# test/lib/common.sh — shared shell helpers for the harness and the suites:
# repository root, logging, exit handlers, TAP output and TAP counting.
#
# Sourced (bash); expects the caller to run under `set -euo pipefail`.
# Functions:
#
#   ro_log MSG...            progress line on stderr ("==> MSG")
#   ro_die MSG...            message on stderr, exit 1
#   ro_on_exit COMMAND       run COMMAND (a string, eval'ed) when the shell
#                            exits, also on INT, TERM and HUP; handlers run
#                            last-registered first.  A script that sets its
#                            own `trap ... EXIT` replaces this: call
#                            ro_run_exit_handlers from it.
#   ro_run_exit_handlers     run (once) every handler registered so far; a
#                            signal arriving meanwhile does not cut them short
#   ro_require_commands CMD...
#                            return 1 at once when a CMD is not on the PATH,
#                            naming each missing one, its Debian package and
#                            what installs it (`make deps` or
#                            `tools/install-deps test`): a tool calls it
#                            before it starts anything that would wait for
#                            the command
#   ro_free_port             print a TCP port free on 127.0.0.1; 1 if none
#   ro_processes_naming TEXT print "PID COMMAND LINE" of every process whose
#                            command line holds TEXT (a test's own temporary
#                            directory: what a tool it ran left running)
#   ro_forget_outer_make     unset what an outer make exports (MAKELEVEL,
#                            MAKEFLAGS, ...) before a sub-build of another
#                            project: PostgreSQL's Makefile.global generates
#                            its headers only at MAKELEVEL 0
#
#   tap_plan N               print the plan "1..N"
#   tap_ok STATUS DESC       "ok"/"not ok" by STATUS (0 = pass), numbered
#   tap_is GOT WANT DESC     pass when the strings are equal; else show a diff
#   tap_like GOT REGEX DESC  pass when GOT matches the extended REGEX
#   tap_cmd DESC CMD...      pass when CMD exits 0; else show its output
#                            (assertions return 0 so `set -e` goes on to the
#                            next one; tap_last_ok tells whether it passed)
#   tap_last_ok              true when the latest assertion passed, e.g.
#                            `tap_cmd ...; tap_last_ok || tap_bail "why"`
#   tap_diag MSG...          "# MSG" on stderr
#   tap_bail MSG             "Bail out! MSG", exit 1 (setup impossible)
#   tap_done                 exit 1 when any assertion failed or the plan
#                            does not match, 0 otherwise
#
#   tap_count FILE STATUS    read TAP output FILE of a program that exited
#                            with STATUS; set TAP_PASSED and TAP_FAILED
#                            (missing plan, missing tests, bail-out and a
#                            non-zero exit without a failed test each count
#                            as one failure) and print why on stdout

if [[ -z ${RO_ROOT:-} ]]; then
	RO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
fi
export RO_ROOT

RO__EXIT_HANDLERS=()
RO__EXIT_TRAP_SET=
TAP__NUMBER=0
TAP__FAILED=0
TAP__PLAN=
TAP__LAST=0

# ro_wait_until SECONDS CMD... — poll CMD every 0.05 s until it succeeds;
# after SECONDS one last try decides
ro_wait_until() {
	local deadline=$((SECONDS + $1))
	shift
	while ((SECONDS < deadline)); do
		"$@" && return 0
		sleep 0.05
	done
	"$@"
}

# ro_feeder_bin — the feeder binary: $RO_FEEDER_BIN when set (another build,
# e.g. to show that a test fails on an older release), else the one built in
# the tree, else PATH's
ro_feeder_bin() {
	if [[ -n ${RO_FEEDER_BIN:-} ]]; then
		printf '%s\n' "$RO_FEEDER_BIN"
	elif [[ -x $RO_ROOT/feeder/received-orders-feeder ]]; then
		printf '%s\n' "$RO_ROOT/feeder/received-orders-feeder"
	else
		command -v received-orders-feeder || printf '%s\n' received-orders-feeder
	fi
}

# ro_log — one progress line on stderr, so it never mixes into TAP on stdout
ro_log() {
	printf '==> %s\n' "$*" >&2
}

# ro_die — report a fatal problem and leave; exit handlers still run
ro_die() {
	printf 'error: %s\n' "$*" >&2
	exit 1
}

# ro_on_exit — register a cleanup command; the first call installs the EXIT
# trap, and INT, TERM and HUP are turned into exits so the trap runs on them
# too
ro_on_exit() {
	RO__EXIT_HANDLERS+=("$1")
	if [[ -z $RO__EXIT_TRAP_SET ]]; then
		trap ro_run_exit_handlers EXIT
		ro__trap_signals
		RO__EXIT_TRAP_SET=1
	fi
}

# ro__trap_signals — INT, TERM and HUP leave through ro__exit_on_signal
ro__trap_signals() {
	trap 'ro__exit_on_signal 130' INT
	trap 'ro__exit_on_signal 143' TERM
	trap 'ro__exit_on_signal 129' HUP
}

# ro__exit_on_signal STATUS — exit with STATUS from a signal's trap.  The
# trap runs inside the builtin the signal interrupted; when that was a timed
# read (`read -t`, a sleep that starts no process, as bench/feeder's
# wait_logged), bash 5.2 leaves the read's timeout armed after the exit
# unwinds it, and once the timeout passes, bash jumps back into the read's
# frame that no longer exists and dies of SIGSEGV half-way through the exit
# handlers, leaving PostgreSQL and the rest running.  A timed read that
# completes at once, run here first, takes over that timeout and clears it.
ro__exit_on_signal() {
	read -r -t 1 _ <<<'' || true
	exit "$1"
}

# ro_run_exit_handlers — run every registered handler once, newest first,
# whatever each of them returns; while they run, INT, TERM and HUP are
# noted and ignored (a second Ctrl-C, or a supervisor's repeated TERM, must
# not stop the cleanup half-way), then trapped again
ro_run_exit_handlers() {
	local i
	trap : INT TERM HUP
	for ((i = ${#RO__EXIT_HANDLERS[@]} - 1; i >= 0; i--)); do
		eval "${RO__EXIT_HANDLERS[i]}" || true
	done
	RO__EXIT_HANDLERS=()
	if [[ -n $RO__EXIT_TRAP_SET ]]; then
		ro__trap_signals
	else
		trap - INT TERM HUP
	fi
}

# ro__command_package CMD — the Debian package of test/packages.txt that
# brings CMD; empty when none does
ro__command_package() {
	case $1 in
	kcat | curl | unzip | openssl | pgbouncer | zzuf | npm) echo "$1" ;;
	java | javac | keytool) echo openjdk-17-jdk-headless ;;
	mvn) echo maven ;;
	node) echo nodejs ;;
	psql | pg_config) echo postgresql-15 ;;
	pg_prove) echo libtap-parser-sourcehandler-pgtap-perl ;;
	promtool) echo prometheus ;;
	pkg-config) echo pkgconf ;;
	make | cc | gcc) echo build-essential ;;
	esac
}

# ro__package_section PACKAGE — the section of test/packages.txt (build or
# test) that names PACKAGE; empty when none does
ro__package_section() {
	sed -e 's/#.*//' -e 's/[[:space:]]//g' -e 's/@.*//' "$RO_ROOT/test/packages.txt" |
		awk -v want="$1" '/^\[[a-z]+\]$/ { section = substr($0, 2, length($0) - 2); next }
			$0 == want { print section; exit }'
}

# ro_require_commands CMD... — see the header.  The tool named is the
# script that runs (relative to the repository when inside it)
ro_require_commands() {
	local cmd package how tool=${0#"$RO_ROOT"/} missing=0
	for cmd in "$@"; do
		command -v "$cmd" >/dev/null 2>&1 && continue
		package=$(ro__command_package "$cmd")
		case ${package:+$(ro__package_section "$package")} in
		build) how="run \`make deps\` (Debian package $package)" ;;
		test) how="run \`tools/install-deps test\` (Debian package $package)" ;;
		*) how="install the package that provides it" ;;
		esac
		printf 'error: %s needs %s, which is not on the PATH: %s\n' "$tool" "$cmd" "$how" >&2
		missing=1
	done
	return "$missing"
}

# ro_forget_outer_make — make test runs the harness from a recipe, so make
# has exported MAKELEVEL=1, MAKEFLAGS (its options and jobserver) and the
# like; a sub-build of another project (PostgreSQL, pgTAP, librdkafka) must
# start as from a shell: PostgreSQL's src/Makefile.global generates
# utils/errcodes.h and its other headers only when MAKELEVEL is 0
ro_forget_outer_make() {
	unset MAKELEVEL MAKEFLAGS MFLAGS MAKEOVERRIDES GNUMAKEFLAGS MAKE_TERMOUT MAKE_TERMERR
}

# ro_processes_naming TEXT — see the header (the perl process itself is
# left out)
ro_processes_naming() {
	perl -e '
		for my $f (glob "/proc/[0-9]*/cmdline") {
			my ($pid) = $f =~ m{/proc/(\d+)/} or next;
			next if $pid == $$;
			open(my $fh, "<", $f) or next;
			local $/;
			my $c = <$fh> // next;
			$c =~ tr/\0/ /;
			print "$pid $c\n" if index($c, $ARGV[0]) >= 0;
		}' "$1"
}

# ro_free_port — a TCP port nobody listens on, checked by binding it, and
# drawn below Linux's ephemeral range: a port the kernel hands out for
# outgoing connections could be taken by another server's connections
# before the one it is chosen for binds it.  Returns 1 when 200 tries found
# none.
ro_free_port() {
	perl -MIO::Socket::INET -e '
		for (1 .. 200) {
			my $port = 15000 + int(rand(17000));
			my $sock = IO::Socket::INET->new(LocalAddr => "127.0.0.1",
				LocalPort => $port, Proto => "tcp", Listen => 1) or next;
			close $sock;
			print "$port\n";
			exit 0;
		}
		exit 1;'
}

# tap_plan — announce how many assertions this script makes
tap_plan() {
	TAP__PLAN=$1
	printf '1..%s\n' "$1"
}

# tap_diag — a TAP diagnostic on stderr, each line prefixed with "# "
tap_diag() {
	printf '%s\n' "$*" | sed 's/^/# /' >&2
}

# tap_ok — print the next numbered result from an exit status (0 = pass)
tap_ok() {
	local status=$1 desc=$2
	TAP__NUMBER=$((TAP__NUMBER + 1))
	if [[ $status == 0 ]]; then
		TAP__LAST=0
		printf 'ok %d - %s\n' "$TAP__NUMBER" "$desc"
	else
		TAP__LAST=1
		TAP__FAILED=$((TAP__FAILED + 1))
		printf 'not ok %d - %s\n' "$TAP__NUMBER" "$desc"
	fi
	return 0
}

# tap_last_ok — whether the latest assertion passed
tap_last_ok() {
	return "$TAP__LAST"
}

# tap_is — compare two strings; on a difference show a unified diff
tap_is() {
	local got=$1 want=$2 desc=$3
	if [[ $got == "$want" ]]; then
		tap_ok 0 "$desc"
	else
		tap_ok 1 "$desc"
		tap_diag "$(diff -u --label want --label got <(printf '%s\n' "$want") <(printf '%s\n' "$got") || true)"
	fi
}

# tap_like — match a string against an extended regular expression
tap_like() {
	local got=$1 regex=$2 desc=$3
	if [[ $got =~ $regex ]]; then
		tap_ok 0 "$desc"
	else
		tap_ok 1 "$desc"
		tap_diag "got: $got" "does not match: $regex"
	fi
}

# tap_cmd — run a command as an assertion; its output is shown on failure
tap_cmd() {
	local desc=$1 out status=0
	shift
	out=$("$@" 2>&1) || status=$?
	tap_ok "$status" "$desc"
	if [[ $status != 0 ]]; then
		tap_diag "command failed (exit $status): $*" "$out"
	fi
}

# tap_bail — stop the script when the rest of it cannot mean anything
tap_bail() {
	printf 'Bail out! %s\n' "$*"
	exit 1
}

# tap_done — the script's verdict: failure when an assertion failed or the
# number of assertions differs from the plan
tap_done() {
	if [[ -n $TAP__PLAN && $TAP__PLAN != "$TAP__NUMBER" ]]; then
		tap_diag "planned $TAP__PLAN tests but ran $TAP__NUMBER"
		exit 1
	fi
	[[ $TAP__FAILED == 0 ]] || exit 1
	exit 0
}

# tap_count — count passes and failures in a TAP stream (see header); a
# "not ok" marked TODO counts as a pass, a SKIP as a pass
tap_count() {
	local file=$1 status=$2 counts
	counts=$(awk -v status="$status" '
		/^1\.\.[0-9]+/ { plan = substr($1, 4) + 0; has_plan = 1; next }
		/^ok [0-9]+/ { pass++; seen++; next }
		/^not ok [0-9]+/ {
			seen++
			if ($0 ~ /#[ \t]*[Tt][Oo][Dd][Oo]/) pass++; else fail++
			next
		}
		/^Bail out!/ { bail = 1 }
		END {
			why = ""
			if (bail) { fail++; why = why " bailed out;" }
			if (!has_plan) { fail++; why = why " no plan;" }
			else if (plan > seen) { fail += plan - seen; why = why " " (plan - seen) " planned test(s) did not run;" }
			else if (plan < seen) { fail++; why = why " ran " seen " tests, planned " plan ";" }
			if (status != 0 && fail == 0) { fail++; why = why " exit status " status " without a failed test;" }
			printf "%d %d%s\n", pass, fail, why
		}' "$file")
	TAP_PASSED=${counts%% *}
	counts=${counts#* }
	TAP_FAILED=${counts%% *}
	if [[ $counts == *" "* ]]; then
		printf '# harness: %s\n' "${counts#* }"
	fi
}
