#!/bin/bash
# test/sanitize/01-asan-ubsan.t — the pgTAP and fuzz suites on a build of
# the extension (and feeder) with AddressSanitizer and
# UndefinedBehaviorSanitizer, the server started with the ASan runtime
# preloaded, with a negative control that the sanitizers do report (see
# test/sanitize/run; `make sanitize` adds the unit and end-to-end suites).
#
# TAP on stdout.  Builds and starts everything it needs itself.

exec "$(dirname "$0")/run" pgtap fuzz
