#!/bin/sh
# End-to-end: the real stackie CLI against a real stackied in a temporary STACKIE_HOME.
# Every verb, its --json, exit codes (2 usage, 3 no daemon, 1 failing block), autostart by up,
# logs -n, logs -f (bounded), logs --since, ps -f/STACK, status details, up's live status lines
# on a terminal (under script(1)) and plain lines elsewhere, exec's exit status, two racing
# ups, a stale socket.
set -u
B=${STACKIE_BUILD_ROOT:?}/src
S=$B/stackie
T=$(mktemp -d /tmp/stackie-cli-e2e-XXXXXX)
export STACKIE_HOME=$T/home
unset XDG_RUNTIME_DIR
. "$(dirname "$0")/lib.sh"
cleanup() {
  stop_daemon "$S" 10
  rm -rf "$T"
}
trap cleanup EXIT
run() { timeout 20 "$S" "$@"; }
export E2E_TOKEN=e2e-secret-value  # a secret of the api block, read by up from the environment
cd "$T"
cat > stackie.yml <<'YML'
e2e:
  blocks:
    db:
      command: "echo db up; exec sleep 600"
      restart: "no"
      health:
        exec: ["true"]
        interval: 200ms
    api:
      command: [sh, -c, "echo api up; echo api err >&2; exec sleep 600"]
      depends_on: [db]
      environment:
        GREETING: hello from api
        TOKEN: ${secrets.E2E_TOKEN}
YML
mkdir slow && cat > slow/stackie.yml <<'YML'
slow:
  blocks:
    first:
      command: "echo first up; exec sleep 600"
      health:
        exec: [sh, -c, "sleep 0.3"]
        interval: 200ms
        start_period: 1s
    second:
      command: "exec sleep 600"
      depends_on: [first]
YML
mkdir talk && cat > talk/talk.sh <<'SH'
i=0
while :; do
  i=$((i+1))
  printf 'tick %d WARN "q" \\ \t\n' "$i"
  printf 'oops %d ERROR\n' "$i" >&2
  sleep 0.05
done
SH
cat > talk/stackie.yml <<YML
talk:
  blocks:
    talker:
      command: [sh, $T/talk/talk.sh]
    echo:
      command: [sh, -c, "while :; do echo echo-line; sleep 0.05; done"]
YML
mkdir bad && cat > bad/stackie.yml <<'YML'
broken:
  blocks:
    crash:
      command: "echo about to fail; exec sleep 600"
      restart: "no"
      health:
        exec: ["false"]
        interval: 100ms
        retries: 2
YML

run ps >/dev/null 2>err; check "ps without daemon exits 3" 3 $?
contains "the one-line daemon message" "$(cat err)" "the daemon is not running"
run ps --bogus 2>err; check "unknown flag exits 2" 2 $?
contains "usage hint" "$(cat err)" "see 'stackie help ps'"
run status 2>/dev/null; check "status without BLOCK exits 2" 2 $?
run logs -n x 2>/dev/null; check "logs -n x exits 2" 2 $?
run help up | grep -q "Usage: stackie up"; check "help up" 0 $?

# Two ups racing from nothing: both autostart, one daemon wins; whichever reaches it first
# brings the stack up, the other is refused as busy (1) or finds it up (0): which one is first
# is the scheduler's choice.
run up --no-sandbox >up1 2>&1 & p1=$!
run up --no-sandbox >up2 2>&1 & p2=$!
wait $p1; r1=$?; wait $p2; r2=$?
check "one racing up brings the stack up" 0 $([ $r1 = 0 ] || [ $r2 = 0 ]; echo $?)
check "the other is busy or finds it up (0 or 1)" 0 $({ [ $r1 = 0 ] || [ $r1 = 1 ]; } && { [ $r2 = 0 ] || [ $r2 = 1 ]; }; echo $?)
contains "up names the stack" "$(cat up1 up2)" "stack e2e is up"
run up --no-sandbox >/dev/null 2>up3; check "up again once settled" 0 $?
contains "up warns for each unsandboxed block" "$(cat up3)" "warning: block db runs without a sandbox"
contains "up warns for each unsandboxed block" "$(cat up3)" "warning: block api runs without a sandbox"

out=$(run ps); check "ps" 0 $?
contains "ps header" "$out" "NAME.*STATE.*HEALTH.*PID.*UPTIME.*RESTARTS.*PORTS.*SANDBOX"
contains "ps row" "$out" "api.*running"
out=$(run ps --json); contains "ps --json versioned" "$out" '^{"v":1,"blocks":\['
out=$(run status api); check "status" 0 $?; contains "status state" "$out" "state: *running"
out=$(run status api --json); contains "status --json" "$out" '"v":1,"block":{'
contains "status --json paths" "$out" '"paths":{"volumes":\[.*\],"tmp":'
contains "status --json restart policy" "$out" '"restart":"on-failure"'
contains "status --json last exit (none yet)" "$out" '"last_exit":null'
contains "status --json log files" "$out" '"logs":{"stdout":"[^"]*/e2e-api/stdout.log"'
out=$(run status db); contains "status: the last health check" "$out" "last check: ok at 20[0-9-]*T"
contains "status: the restart policy" "$out" "restart: *no"
contains "status: the log files" "$out" "stderr log: .*/e2e-db/stderr.log"
contains "status: the sandbox policy" "$out" "policy:"
contains "status: the policy's working directory" "$out" "workdir"
# --no-sandbox: nothing bounds the block, and status says so rather than show limits.
contains "status: no limits for an unsandboxed block" "$out" "limits: *none (an unsandboxed process)"
out=$(run status db --json)
contains "status --json limits" "$out" '"limits":{"enforcement":"none (an unsandboxed process)","memory":2147483648,"pids":1024'

out=$(run ps e2e); check "ps STACK" 0 $?; contains "ps STACK lists its blocks" "$out" "db.*running"
out=$(run ps -f "$T/stackie.yml"); check "ps -f FILE" 0 $?; contains "ps -f lists the stack" "$out" "api.*running"
out=$(run ps -f stackie.yml --json); contains "ps -f FILE --json" "$out" '"stack":"e2e"'
run ps -f bad/stackie.yml >/dev/null 2>err; check "ps -f of a stack that is not up exits 1" 1 $?
contains "ps -f names the file" "$(cat err)" "no stack from .*bad/stackie.yml"
run ps -f stackie.yml e2e >/dev/null 2>&1; check "ps -f and STACK together exit 2" 2 $?
run ps nosuch >/dev/null 2>&1; check "ps of an unknown stack exits 1" 1 $?
run status nosuch >/dev/null 2>&1; check "status of unknown block exits 1" 1 $?

sleep 1
out=$(run logs -n 1 api); check "logs -n 1" 0 $?
[ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ]; check "logs -n 1 prints one line" 0 $?
out=$(run logs); contains "logs prefixes blocks" "$out" "^db | db up"
out=$(run logs --stderr api); contains "logs --stderr" "$out" "api err"
run logs --since yesterday 2>err; check "logs --since garbage exits 2" 2 $?
contains "logs --since names the bad value" "$(cat err)" "not 'yesterday'"
run logs --since 2026-02-30 2>/dev/null; check "logs --since an impossible date exits 2" 2 $?
out=$(run logs --since 10m api); contains "logs --since a duration" "$out" "api up"
out=$(run logs --since 2000-01-01 api); contains "logs --since a date" "$out" "api up"
out=$(run logs --since 2000-01-01T00:00:00Z api); contains "logs --since RFC 3339" "$out" "api up"
hour_ago=$(date '+%Y-%m-%d %H:%M:%S' -d '1 hour ago')
out=$(run logs --since "$hour_ago" api); contains "logs --since a local time" "$out" "api up"
out=$(run logs --since "$(date -u '+%Y-%m-%dT%H:%M:%SZ' -d '+1 hour')" api); check "logs --since the future" 0 $?
[ -z "$out" ]; check "logs --since the future prints nothing" 0 $?
out=$(run logs --since "$(date '+%Y-%m-%d %H:%M' -d '+1 hour')" api)
[ -z "$out" ]; check "logs --since a later local time prints nothing" 0 $?
out=$(timeout 3 "$S" logs -f api); check "logs -f runs until stopped by timeout" 124 $?
contains "logs -f printed the tail" "$out" "api up"

# logs -f of lines written after it started (each read of a block's pipe comes as one `text`
# event, cli/log_text_event.h): as they came, with timestamps, as JSON, filtered, prefixed.
(cd talk && run up --no-sandbox >/dev/null); check "up of a talking stack" 0 $?
follow() { timeout 2 "$S" logs -f -n 0 -p talk "$@"; }
follow talker --stdout >follow.plain; check "logs -f (plain) runs until stopped" 124 $?
tab=$(printf '\t')
[ "$(grep -c "^tick [0-9]* WARN \"q\" \\\\ $tab\$" follow.plain)" -ge 5 ]
check "logs -f prints new lines as written, quotes, backslash and tab kept" 0 $?
[ "$(grep -vc '^tick ' follow.plain)" -eq 0 ]; check "logs -f --stdout has only stdout" 0 $?
follow talker --stderr -t >follow.stamped
[ "$(grep -c '^20[0-9-]*T[0-9:.]*Z oops [0-9]* ERROR$' follow.stamped)" -ge 5 ]
check "logs -f -t stamps each new line" 0 $?
follow talker --json >follow.json
grep -q '"block":"talker","stream":"stdout","ts":"[^"]*","level":"warn","text":"tick [0-9]* WARN \\"q\\" \\\\ \\t"}$' follow.json
check "logs -f --json: one object a line with its level" 0 $?
grep -q '"stream":"stderr","ts":"[^"]*","level":"error","text":"oops [0-9]* ERROR"}$' follow.json
check "logs -f --json: stderr lines too" 0 $?
follow talker --level error >follow.errors
[ "$(grep -c '^oops' follow.errors)" -ge 5 ] && ! grep -q '^tick' follow.errors
check "logs -f --level error keeps the error lines only" 0 $?
follow >follow.both
grep -q '^talker | tick [0-9]* WARN' follow.both && grep -q '^echo | echo-line$' follow.both
check "logs -f of several blocks prefixes each line" 0 $?
run down talk >/dev/null; check "down of the talking stack" 0 $?

run exec api -- sh -c 'exit 7'; check "exec returns CMD's status" 7 $?
out=$(run exec api -- echo inside); contains "exec output" "$out" "inside"
run exec nosuch -- true 2>/dev/null; check "exec of unknown block exits 1" 1 $?
out=$(E2E_TOKEN= run exec api -- sh -c 'echo "$GREETING|${TOKEN:-unset}"' 2>err)
contains "exec passes the block's environment" "$out" "^hello from api|"
# The secret comes from the block (the caller's E2E_TOKEN is empty), through the launcher's
# environment: never on a command line (tests/e2e/managed_blocks_test.sh scans for that).
contains "exec passes the block's secrets too" "$out" "|e2e-secret-value$"

run stop api >/dev/null; check "stop" 0 $?
run start api >/dev/null; check "start" 0 $?
run restart db >/dev/null; check "restart" 0 $?
sleep 0.5
out=$(run status db --json); contains "status --json: the last exit after a restart" "$out" '"last_exit":{"code":0,"signal":15,"at":"20[0-9-]*T[0-9:.]*Z","message":"killed by SIGTERM"}'
out=$(run status db); contains "status: the last exit after a restart" "$out" "last exit: *killed by SIGTERM at 20"
out=$(run daemon status); check "daemon status" 0 $?; contains "daemon status lists stack" "$out" "e2e"
out=$(run doctor); contains "doctor sees the daemon" "$out" "^OK   daemon answers"
contains "doctor checks user namespaces" "$out" "unshare(CLONE_NEWUSER)"
contains "doctor says how block limits are enforced" "$out" "^OK   block limits: \(cgroup v2\|rlimits\) ("
run doctor extra 2>/dev/null; check "doctor with an argument exits 2" 2 $?
out=$(run daemon status --json); contains "daemon status --json" "$out" '"pid":'

# up's progress: plain lines when stdout is not a terminal; live lines on a terminal.
esc=$(printf '\033')
(cd slow && run up --no-sandbox >../plain 2>&1); check "up (plain) of a second stack" 0 $?
contains "plain up prints state changes" "$(cat plain)" "^second: running"
if grep -q "$esc" plain; then bad "plain up printed escape sequences"; else
  ok "plain up prints no escape sequences"; fi
run down slow >/dev/null
if command -v script >/dev/null 2>&1; then
  (cd slow && TERM=xterm timeout 30 script -q -e -c "$S up --wait --no-sandbox" /dev/null >../live 2>&1)
  check "up on a terminal" 0 $?
  live=$(cat live)
  words=$(sed "s/${esc}\[[0-9;]*[A-Za-z]//g" live | tr '\r' '\n')  # the text, without escapes
  contains "live up moves the cursor back over its lines" "$live" "${esc}\[2A"
  contains "live up clears each line it redraws" "$live" "${esc}\[2K"
  contains "live up shows a waiting block" "$words" "^second *waiting"
  contains "live up ends with every block running" "$(printf '%s\n' "$words" | grep '^second ' | tail -n 1)" "^second *running"
  contains "live up shows health and elapsed" "$words" "^first *running *healthy *[0-9.]*s"
  contains "live up colours states" "$live" "${esc}\[32mrunning"
  run down slow >/dev/null
  (cd slow && NO_COLOR=1 TERM=xterm timeout 30 script -q -e -c "$S up --wait --no-sandbox" /dev/null >../plain 2>&1)
  check "up on a terminal with NO_COLOR" 0 $?
  if grep -q "$esc" plain; then bad "NO_COLOR up printed escape sequences"; else
    ok "NO_COLOR keeps up plain on a terminal"; fi
  run down slow >/dev/null
  (cd slow && TERM=xterm timeout 30 script -q -e -c "$S up --wait --no-sandbox --color=never" /dev/null >../plain 2>&1)
  if grep -q "$esc" plain; then bad "--color=never up printed escape sequences"; else
    ok "--color=never keeps up plain on a terminal"; fi
else
  skip "live up on a terminal (script(1) from util-linux is missing)"
fi
(cd slow && run up --no-sandbox --color=always >../forced 2>&1)
contains "--color=always draws live lines into a pipe" "$(cat forced)" "${esc}\[2K"
run up --color=sometimes 2>/dev/null; check "up --color=sometimes exits 2" 2 $?
run down slow >/dev/null

(cd bad && run up --no-sandbox >/dev/null 2>../err); check "up of a failing block exits 1" 1 $?
contains "failure names the block" "$(cat err)" "block crash failed"
contains "failure prints the log tail" "$(cat err)" "about to fail"

run down >/dev/null; check "down" 0 $?
run down e2e >/dev/null 2>&1; check "down of a gone stack exits 1" 1 $?
run daemon stop >/dev/null; check "daemon stop" 0 $?
sleep 1
run daemon status >/dev/null 2>&1; check "daemon status after stop exits 3" 3 $?

# A daemon killed with SIGKILL leaves its socket: the next up starts a fresh one.
run daemon start >/dev/null; check "daemon start" 0 $?
pid=$(cat "$STACKIE_HOME/stackied.pid"); kill -9 "$pid"; sleep 0.5
run ps >/dev/null 2>&1; check "ps over a stale socket exits 3" 3 $?
run up --no-sandbox >/dev/null 2>&1; check "up over a stale socket" 0 $?
run down >/dev/null 2>&1

# A daemon told to stop closes its socket first and lets go of its single-instance lock only
# once its loop has ended (slower under the sanitizers): an up then waits for it rather than
# failing with "another stackied is running". Played by a holder of the lock that serves
# nothing and lets go after 1.5 s.
run daemon stop >/dev/null 2>&1
python3 -c '
import fcntl, sys, time
lock = open(sys.argv[1], "a")
fcntl.flock(lock, fcntl.LOCK_EX)  # once the stopped daemon has let go
open(sys.argv[2], "w").close()
time.sleep(1.5)' "$STACKIE_HOME/stackied.lock" "$T/lock-held" &
holder=$!
for try in $(seq 1 100); do [ -e "$T/lock-held" ] && break; sleep 0.1; done
out=$(run up --no-sandbox 2>&1); status=$?
check "up waits for a stopping daemon's lock" 0 $status
[ $status -eq 0 ] || note "$(echo "$out" | tail -1)"
wait "$holder"
run down >/dev/null 2>&1

done_testing
