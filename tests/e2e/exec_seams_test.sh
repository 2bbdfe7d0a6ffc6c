#!/bin/sh
# End-to-end, hostile blocks against `stackie exec` and exec health checks (issue 14), with the
# real daemon, sandboxed, as an unprivileged user:
# - a racer block spins on ns_last_pid and tries to write /proc/N/mem of every process entering
#   its pid namespace while it still runs stackie-lockbox, during 100 exec health checks and 20
#   `stackie exec`s: it must never succeed;
# - a hunter block scans /proc/*/fd for a terminal while `stackie exec` runs under script(1),
#   and writes to each one it finds: it must find nothing of the caller's terminal;
# - exec and exec health checks on a `network: host` block;
# - exec's exit status, stdin piping, signal forwarding, ^C, window size and SIGWINCH on the
#   pty, the caller's terminal mode restored.
set -u
B=${STACKIE_BUILD_ROOT:?}/src
S=$B/stackie
PROBE=$STACKIE_BUILD_ROOT/tests/sandbox/probe
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" = 0 ]; then
  echo "FAIL - run as an unprivileged user (CI runs this as stackie-test)"
  exit 1
fi
if [ ! -x "$PROBE" ]; then
  echo "FAIL - no probe at $PROBE (ninja tests/sandbox/probe)"
  exit 1
fi
if ! command -v script >/dev/null 2>&1; then
  echo "skip: script(1) from util-linux is missing"
  exit 77
fi

T=$(mktemp -d /tmp/stackie-exec-seams-XXXXXX)
export STACKIE_HOME=$T/home STACKIE_BLOCK_PATH=$T/blocks
unset XDG_RUNTIME_DIR
cleanup() {
  (cd "$T" && timeout 60 "$S" down >/dev/null 2>&1)
  stop_daemon "$S" 20
  rm -rf "$T"
}
trap cleanup EXIT
run() { timeout 30 "$S" "$@"; }
# Lines of BLOCK's log matching PATTERN.
log_count() { run logs -n 1000000 "$1" 2>/dev/null | grep -c -- "$2"; }

mkdir -p "$T/proj" "$T/blocks"
# script(1)'s stdin: a FIFO opened read-write never ends, so script never injects an end of
# file (a ^D or NUL) into the terminal of what it runs.
mkfifo "$T/never"
cp "$PROBE" "$T/proj/probe"
cat > "$T/blocks/hostnet.yml" <<'YML'
hostnet:
  description: a service on the host's network (no network namespace of its own)
  command: [sleep, "600"]
  sandbox: {network: host}
  health: {exec: ["true"], interval: 200ms}
YML
cat > "$T/stackie-stack.yml" <<'YML'
seams:
  blocks:
    racer:
      path: ./proj
      command: [./probe, mem-racer]
      health: {exec: ["true"], interval: 100ms, retries: 50}
    hunter:
      path: ./proj
      command: [./probe, tty-hunter]
    plain:
      command: [sleep, "600"]
    hostnet:
YML
cd "$T"
out=$(timeout 180 "$S" up 2>&1); rc=$?
check "up (with an exec health check on a network: host block)" 0 $rc
[ $rc = 0 ] || printf '%s\n' "$out" | sed 's/^/# /'

# --- network: host ------------------------------------------------------------------------------
out=$(run exec hostnet -- sh -c 'echo joined; exit 4' 2>&1); rc=$?
check "exec on a network: host block returns CMD's status" 4 $rc
contains "exec on a network: host block runs CMD" "$out" "^joined"
contains "its exec health check passes" "$(run status hostnet)" "health: *healthy"

# --- stdio, status, signals ---------------------------------------------------------------------
run exec plain -- sh -c 'exit 7' </dev/null; check "exec keeps CMD's exit status" 7 $?
out=$(echo hi | run exec plain -- cat); check "stdin piped through" 0 $?
equals "echo hi | exec cat" "$out" "hi"
out=$(run exec plain -- sh -c 'echo out; echo err >&2' 2>"$T/err" </dev/null)
equals "stdout relayed" "$out" "out"
equals "stderr relayed apart" "$(cat "$T/err")" "err"
out=$(head -c 300000 /dev/zero | tr '\0' x | run exec plain -- wc -c); check "large stdin" 0 $?
equals "every byte of a large stdin arrives" "$(echo $out)" "300000"
out=$( (run exec plain -- yes </dev/null; echo "status $?" >"$T/yes") | head -n 1)
equals "exec ... | head: output" "$out" "y"
equals "exec ... | head: CMD dies of SIGPIPE as it would outside" "$(cat "$T/yes")" "status 141"
# What CMD leaves behind may write on (here faster than the relay reads): exec still returns
# when CMD ends, and the leftover writer then dies of SIGPIPE.
run exec plain -- sh -c 'yes & sleep 0.3' </dev/null >/dev/null
check "exec returns when CMD does, whatever it left writing" 0 $?
"$S" exec plain -- sh -c 'trap "echo got-term; exit 9" TERM; echo ready; while :; do sleep 0.1; done' \
  >"$T/sig" </dev/null & pid=$!
n=0; while ! grep -q ready "$T/sig" && [ $n -lt 200 ]; do sleep 0.1; n=$((n + 1)); done
kill -TERM $pid; wait $pid; rc=$?
check "SIGTERM to stackie exec is forwarded to CMD" 9 $rc
contains "CMD's trap ran" "$(cat "$T/sig")" "got-term"

# ^C typed on the caller's terminal reaches CMD through its own pty (raw mode passes the key).
( n=0; while ! grep -q ready "$T/ctrlc" 2>/dev/null && [ $n -lt 200 ]; do sleep 0.1; n=$((n + 1)); done
  printf '\003'; sleep 5 ) |
  TERM=xterm timeout 60 script -q -e -c "$S exec plain -- sh -c 'trap \"echo got-int; exit 5\" INT; echo ready; while :; do sleep 0.1; done'" /dev/null >"$T/ctrlc" 2>&1
check "^C on the terminal interrupts CMD, status kept" 5 $?
contains "CMD saw SIGINT" "$(cat "$T/ctrlc")" "got-int"
out=$(TERM=xterm timeout 60 script -q -e -c "$S exec plain -- sh -c 'test -t 0 && test -t 1 && echo on-a-tty'" /dev/null <>"$T/never" 2>&1)
contains "CMD has a terminal when the caller has one" "$out" "on-a-tty"
out=$(TERM=xterm timeout 60 script -q -e -c "$S exec plain -- sh -c 'exit 3'; echo status \$?; stty -a" /dev/null <>"$T/never" 2>&1)
contains "exec status on a terminal" "$out" "status 3"
contains "the caller's terminal is back in canonical mode after exec" "$out" " icanon"
contains "the caller's terminal echoes again after exec" "$out" " echo "
out=$(TERM=xterm timeout 60 script -q -e -c "$S exec plain -- sh -c 'test -t 1 || echo out-not-a-tty' | cat" /dev/null <>"$T/never" 2>&1)
contains "CMD's stdout is a pipe when the caller's is" "$out" "out-not-a-tty"

# The pty has the caller's size, and follows it (SIGWINCH to stackie, the new size on the pty,
# SIGWINCH to CMD). Backgrounded with the terminal as stdin (a non-interactive shell would give
# it /dev/null), resized once CMD's trap is set.
cat > "$T/winch.sh" <<SH
exec 3<&0
stty rows 40 cols 100
"$S" exec plain -- sh -c 'rm -f /tmp/winch-ready; stty size; trap "stty size; exit 0" WINCH; touch /tmp/winch-ready; n=0; while [ \$n -lt 300 ]; do sleep 0.1; n=\$((n + 1)); done; exit 1' <&3 &
n=0
until "$S" exec plain -- test -f /tmp/winch-ready </dev/null; do
  sleep 0.2; n=\$((n + 1)); [ \$n -gt 150 ] && break
done
stty rows 50 cols 120
wait \$!
echo "winch status \$?"
SH
out=$(TERM=xterm timeout 90 script -q -e -c "sh $T/winch.sh" /dev/null <>"$T/never" 2>&1)
contains "CMD's pty has the caller's window size" "$out" "40 100"
contains "a window size change reaches CMD (SIGWINCH)" "$out" "^50 120"
contains "CMD ended by its WINCH trap" "$out" "winch status 0"

# --- the caller's terminal stays out of the sandbox ---------------------------------------------
before=$(log_count hunter '^tty ')
TERM=xterm timeout 60 script -q -e -c "sh -c 'stat -L -c \"caller %t:%T\" /dev/stdin; $S exec hunter -- sh -c \"sleep 3; echo exec-done\"'" /dev/null <>"$T/never" >"$T/transcript" 2>&1
check "exec under script" 0 $?
caller=$(sed -n 's/^caller \([0-9a-f]*:[0-9a-f]*\).*/\1/p' "$T/transcript" | head -n 1)
found=$(run logs -n 1000000 hunter | grep '^tty ')
printf '%s\n' "caller's terminal: $caller; the hunter found:" "$found" | sed 's/^/# /'
[ -n "$caller" ]; check "the caller's terminal is known" 0 $?
[ "$(log_count hunter '^tty ')" -gt "$before" ]
check "the hunter was hunting (it found exec's own pty)" 0 $?
printf '%s\n' "$found" | grep -q "^tty $caller "
check "the hunter found no fd of the caller's terminal" 1 $?
grep -q "HUNTER $caller WAS HERE" "$T/transcript"
check "the hunter wrote nothing to the caller's terminal" 1 $?
contains "CMD ran to its end" "$(cat "$T/transcript")" "exec-done"

# --- the racer: 100 exec health checks and 20 stackie execs -------------------------------------
n=0
while [ "$(log_count racer '^saw \|^WON ')" -lt 100 ] && [ $n -lt 600 ]; do sleep 0.5; n=$((n + 1)); done
raced=$(log_count racer '^saw \|^WON ')
[ "$raced" -ge 100 ]; check "the racer raced 100 health checks (raced $raced)" 0 $?
i=0
while [ $i -lt 20 ]; do
  run exec racer -- true </dev/null || bad "exec $i in the racer block"
  i=$((i + 1))
done
sleep 1
won=$(log_count racer '^WON ')
check "no process entering the racer's namespace had its lockbox memory written" 0 "$won"
[ "$(log_count racer '^saw \|^WON ')" -ge $((raced + 20)) ]
check "the racer raced the 20 execs too" 0 $?

# TAP's plan where lib.sh has it (done_testing), else the plain verdict.
if command -v done_testing >/dev/null 2>&1; then done_testing; else [ $fails = 0 ]; fi
