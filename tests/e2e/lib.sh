# Sourced by the end-to-end scripts (sh): the verdict helpers, and stopping the daemon of
# $STACKIE_HOME for sure. Each check prints "ok - NAME" or "FAIL - NAME: why" and counts.
fails=0
ok() { echo "ok - $1"; }
bad() { echo "FAIL - $1"; fails=$((fails + 1)); }
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
