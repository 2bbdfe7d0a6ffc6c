# Sourced by the end-to-end scripts (sh): TAP output, the verdict helpers, and stopping the
# daemon of $STACKIE_HOME for sure. meson runs the scripts with protocol 'tap', so every check is
# a result of its own: "ok N - NAME", "not ok N - NAME: why", "ok N - # SKIP why". A script ends
# with done_testing (the plan line "1..N"; exit status 1 when a check failed).
fails=0
tests=0
ok() { tests=$((tests + 1)); echo "ok $tests - $1"; }
bad() { tests=$((tests + 1)); fails=$((fails + 1)); echo "not ok $tests - $1"; }
skip() { tests=$((tests + 1)); echo "ok $tests - # SKIP $1"; }
note() { echo "# $*"; }
# The whole script cannot run on this host (say what is missing): one skipped plan.
skip_all() { echo "1..0 # SKIP $1"; exit 0; }
# The script cannot run at all for a reason that is an error, not a missing host feature.
bail_out() { echo "Bail out! $1"; exit 1; }
done_testing() {
  echo "1..$tests"
  [ "$fails" -eq 0 ]
}
check() {  # check NAME EXPECTED ACTUAL (an exit status, a word...)
  if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: got '$3', wanted '$2'"; fi
}
equals() {  # equals NAME ACTUAL EXPECTED
  if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: got '$2', wanted '$3'"; fi
}
contains() {  # contains NAME TEXT PATTERN (grep)
  if printf '%s' "$2" | grep -q -- "$3"; then ok "$1"; else bad "$1: no '$3' in: $2"; fi
}
# The daemon of $STACKIE_HOME, asked to stop by the stackie binary $1, then SIGKILLed if it
# lingers (a failed test must not leave it running).
stop_daemon() {
  [ -n "$1" ] && timeout "${2:-10}" "$1" daemon stop >/dev/null 2>&1
  pid=$(cat "$STACKIE_HOME/stackied.pid" 2>/dev/null)
  [ -n "$pid" ] && sleep 1 && kill -9 "$pid" 2>/dev/null
  return 0
}
