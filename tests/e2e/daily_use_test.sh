#!/bin/sh
# End-to-end, issue 16 ("daily use"): what a developer meets in the first hour, with the real
# stackie CLI, a real stackied and real sandboxes, as the unprivileged user. Ports that stay
# put (a taken port is said, kept next time, never a reason to restart), commands checked before
# they run (validate, command: 42, exit 127 not retried), health that teaches (start_period),
# stack identity (name + project directory, -p), one-shot tasks (depends_on conditions), down -v
# and volume ls|rm, and blocks named as STACK/BLOCK or by their sandbox id.
set -u
B=${STACKIE_BUILD_ROOT:?}/src
S=$B/stackie
T=$(mktemp -d /tmp/stackie-daily-e2e-XXXXXX)
export STACKIE_HOME=$T/home
unset XDG_RUNTIME_DIR
. "$(dirname "$0")/lib.sh"
holder_pid=
cleanup() {
  [ -n "$holder_pid" ] && kill "$holder_pid" 2>/dev/null
  stop_daemon "$S" 10
  rm -rf "$T"
}
trap cleanup EXIT
run() { timeout 60 "$S" "$@"; }
chmod 755 "$T"  # the sandboxes bind the project directories below it

# A free port: 20000-29999, as this process's pid picks.
P=$((20000 + $$ % 9000))
while ! python3 -c "import socket,sys; s=socket.socket(); s.bind(('127.0.0.1',$P))" 2>/dev/null ||
  ! python3 -c "import socket,sys; s=socket.socket(); s.bind(('127.0.0.1',$((P + 1))))" 2>/dev/null; do
  P=$((P + 2))
done

# --- 1. ports that stay put ---------------------------------------------------------------
mkdir -p "$T/shop/app" && cd "$T/shop"
cat > stackie.yml <<YML
shop:
  blocks:
    web:
      path: app
      command: [python3, -m, http.server, "$P", --bind, 127.0.0.1]
      serves: {http: {port: $P}}
      health: {http: {port: http, path: /}, interval: 200ms}
    other:
      command: [sleep, "600"]
      environment: {MOOD: calm}
YML
# Someone else listens on P: a plain python listener on the host.
python3 -c "import socket,time; s=socket.socket(); s.bind(('127.0.0.1',$P)); s.listen(); time.sleep(600)" &
holder_pid=$!
sleep 0.5
out=$(run up 2>&1); check "up with the declared port taken" 0 $?
contains "up says which port was taken, by whom, and what it used" "$out" \
  "^web: $P is taken by pid $holder_pid (python3); using $((P + 1))$"
contains "up lists the endpoints, a URL for http" "$out" "web  *http  *http://127.0.0.1:$((P + 1))/"
out=$(run ps); contains "ps marks the moved port" "$out" "127.0.0.1:$((P + 1))->$P (moved from $P)"
curl -sf -o /dev/null "http://127.0.0.1:$((P + 1))/"; check "the moved port reaches the block" 0 $?
pid_before=$(run ps --json | python3 -c 'import json,sys; print([b["pid"] for b in json.load(sys.stdin)["blocks"] if b["name"]=="web"][0])')
# An unrelated edit: web keeps running.
sed -i 's/MOOD: calm/MOOD: cheerful/' stackie.yml
run up >/dev/null 2>&1; check "up after an unrelated edit" 0 $?
pid_after=$(run ps --json | python3 -c 'import json,sys; print([b["pid"] for b in json.load(sys.stdin)["blocks"] if b["name"]=="web"][0])')
equals "an unrelated edit does not restart a block with a moved port" "$pid_after" "$pid_before"
# The holder goes away; down and up again: the port stays put, and up says why.
kill "$holder_pid"; wait "$holder_pid" 2>/dev/null; holder_pid=
run down >/dev/null; check "down" 0 $?
out=$(run up 2>&1); check "up again with the declared port free" 0 $?
contains "the port stays put across ups" "$out" "^web: using $((P + 1)) as before ($P was taken when it was first given)"
contains "the summary shows the kept port" "$out" "http://127.0.0.1:$((P + 1))/"
run down >/dev/null

# --- 2. commands checked before they run ------------------------------------------------------
mkdir -p "$T/cmd/app" && cd "$T/cmd"
cat > stackie.yml <<'YML'
cmd:
  blocks:
    web:
      path: app
      command: ./serve.sh
      restart: on-failure
YML
out=$(run validate 2>&1); check "validate of a missing command exits 1" 1 $?
contains "validate names the missing command with its position" "$out" \
  "stackie.yml:5:16: block 'web': command not found: ./serve.sh"
printf '#!/bin/sh\nexec sleep 600\n' > app/serve.sh
out=$(run validate 2>&1); check "validate of a non-executable command exits 1" 1 $?
contains "validate says it is not executable" "$out" "command not executable: ./serve.sh"
chmod +x app/serve.sh
run validate >/dev/null 2>&1; check "validate once it exists and is executable" 0 $?
# Outside the sandbox's view: a program of the project's parent, which the block does not see.
printf '#!/bin/sh\nexec sleep 600\n' > "$T/cmd/outside.sh"; chmod +x "$T/cmd/outside.sh"
sed -i "s|command: ./serve.sh|command: ../outside.sh|" stackie.yml
out=$(run validate 2>&1); check "validate of a command outside the sandbox's view exits 1" 1 $?
contains "validate says it is outside the view" "$out" \
  "stackie.yml:5:16: block 'web': command outside the sandbox's view: ../outside.sh ($T/cmd/outside.sh is not among the paths the block sees)"
sed -i "s|command: ../outside.sh|command: 42|" stackie.yml
out=$(run validate 2>&1); check "validate of command: 42 exits 1" 1 $?
contains "command: 42 is refused with its position" "$out" "stackie.yml:5:16: 'command' must be a string or a list of strings, got '42'"
sed -i 's|command: 42|command: ./serve.sh\n      health: {exec: [no-such-check]}|' stackie.yml
out=$(run validate 2>&1); check "validate of a missing health program exits 1" 1 $?
contains "the health program is looked for on the sandbox's PATH" "$out" "command not found: no-such-check (not in the sandbox's PATH"
# At run time: a line whose program cannot be told before it runs fails once, named.
cat > stackie.yml <<YML
cmd:
  blocks:
    web:
      path: app
      command: "cd . && ./gone.sh"
      restart: on-failure
      serves: {http: {port: $P}}
      health: {tcp: http}
YML
start=$(date +%s)
out=$(run up 2>&1); check "up of a command that is not found exits 1" 1 $?
contains "up says command not found, with block and position" "$out" \
  "command not found: cd . && ./gone.sh (block web, stackie.yml:5:17; exit status 127, not retried)"
restarts=$(run ps --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["blocks"][0]["restarts"])')
equals "exit 127 is not retried" "$restarts" "0"
run down >/dev/null 2>&1

# --- 3. health that teaches -------------------------------------------------------------------
mkdir -p "$T/slow/app" && cd "$T/slow"
cat > app/boot.sh <<YML
#!/bin/sh
sleep 4
exec python3 -m http.server $P --bind 127.0.0.1
YML
chmod +x app/boot.sh
cat > stackie.yml <<YML
slow:
  blocks:
    app:
      path: app
      command: [./boot.sh]
      restart: "no"
      serves: {http: {port: $P}}
      health: {http: {port: http}, start_period: 0s}
YML
out=$(run up 2>&1); check "a slow app with no start period fails" 1 $?
contains "the failure says how long it ran without passing" "$out" "killed by its health check after running [0-9.]* s without passing once"
contains "the failure suggests start_period" "$out" "raise health.start_period, e.g. start_period: [0-9]*s"
run down >/dev/null 2>&1
sed -i '/start_period/d; s/      health: {http: {port: http}, start_period: 0s}/      health: {http: {port: http}}/' stackie.yml
echo "      health: {http: {port: http}}" >> stackie.yml
out=$(run up 2>&1); check "the default start period lets a 4 s boot come up" 0 $?
run down >/dev/null 2>&1

# --- 4. stack identity: name + project directory -----------------------------------------------
mkdir -p "$T/one" "$T/two"
for d in one two; do
  printf 'same:\n  blocks:\n    idle: {command: [sleep, "600"]}\n' > "$T/$d/stackie.yml"
done
(cd "$T/one" && run up >/dev/null 2>&1); check "up of the first checkout" 0 $?
out=$(cd "$T/two" && run up 2>&1); check "a second checkout with the same name is refused" 1 $?
contains "the refusal names the first one's path and -p" "$out" "stack 'same' is already up from $T/one .*-p NAME"
out=$(cd "$T/two" && run up -p same-two 2>&1); check "up -p NAME of the second checkout" 0 $?
out=$(run ps --json)
contains "both stacks run" "$out" '"stack":"same-two"'
contains "both stacks run (first)" "$out" '"stack":"same"'

# --- 5. every verb takes STACK/BLOCK and the sandbox id ----------------------------------------
out=$(run status same--two-idle 2>&1); check "status by sandbox id (the stack's - doubled)" 0 $?
contains "status by sandbox id finds the block" "$out" "idle"
run status same/idle >/dev/null 2>&1; check "status STACK/BLOCK" 0 $?
run status idle >/dev/null 2>&1; check "a block name in two stacks is ambiguous" 1 $?
run logs same-idle >/dev/null 2>&1; check "logs by sandbox id" 0 $?
run exec same--two-idle -- true; check "exec by sandbox id" 0 $?
# Last: restart returns before the block runs again (issue 16 item 5, not this script's).
run restart same-two/idle >/dev/null 2>&1; check "restart STACK/BLOCK" 0 $?
run down same >/dev/null; run down same-two >/dev/null

# --- 6. one-shot tasks -------------------------------------------------------------------------
mkdir -p "$T/tasks/app" && cd "$T/tasks"
cat > stackie.yml <<'YML'
tasks:
  blocks:
    migrate:
      path: app
      command: "sleep 1; echo migrated; touch migrated"
      restart: "no"
    app:
      path: app
      command: "test -e migrated || { echo started too early; exit 3; }; exec sleep 600"
      restart: "no"
      depends_on: {migrate: {condition: completed_successfully}}
YML
out=$(run up 2>&1); check "up with a task gating its dependant" 0 $?
contains "up shows the task's result" "$out" "task migrate completed (exit status 0)"
out=$(run ps); contains "the dependant runs" "$out" "app *running"
run down >/dev/null
sed -i 's/sleep 1; echo migrated; touch migrated/echo migration 7 failed; exit 4/' stackie.yml
rm -f app/migrated
out=$(run up 2>&1); check "a failed task fails up" 1 $?
contains "the failure names the task" "$out" "block migrate failed"
contains "the failure shows the task's log tail" "$out" "migration 7 failed"
out=$(run ps); contains "the dependant never started" "$out" "app *created"
run down >/dev/null 2>&1
sed -i 's/condition: completed_successfully/condition: finished/' stackie.yml
out=$(run validate 2>&1); check "an unknown condition is refused" 1 $?
contains "the unknown condition has its position" "$out" "stackie.yml:11:41: unknown condition 'finished'"

# --- 7. down -v and volume ls|rm ---------------------------------------------------------------
mkdir -p "$T/vol" && cd "$T/vol"
cat > stackie.yml <<'YML'
vol:
  blocks:
    keeper:
      command: "head -c 300000 /dev/zero > ${paths.data}/blob; exec sleep 600"
      volumes: {data: }
YML
run up >/dev/null 2>&1; check "up of a stack with a volume" 0 $?
sleep 0.5
out=$(run volume ls); check "volume ls" 0 $?
contains "volume ls lists the stack's volumes with a size" "$out" "^vol  *[0-9.]* KB  *$STACKIE_HOME/storage/volumes/vol$"
run volume rm vol --yes >/dev/null 2>err; check "volume rm of a stack that is up is refused" 1 $?
contains "volume rm says to use down -v" "$(cat err)" "stackie down -v vol"
run down -v </dev/null >/dev/null 2>err; check "down -v without a terminal and without --yes is refused" 1 $?
contains "down -v asks for --yes" "$(cat err)" "add --yes"
[ -e "$STACKIE_HOME/storage/volumes/vol/keeper/data/blob" ]; check "nothing was removed unasked" 0 $?
out=$(run ps vol); contains "and nothing was stopped unasked" "$out" "keeper *running"
out=$(run down -v --yes); check "down -v --yes" 0 $?
contains "down -v says what it removed" "$out" "removed its volumes: $STACKIE_HOME/storage/volumes/vol ([0-9.]* KB)"
[ ! -e "$STACKIE_HOME/storage/volumes/vol" ]; check "down -v removed the volumes" 0 $?
run up >/dev/null 2>&1 && run down >/dev/null; check "plain down keeps the volumes" 0 $?
[ -e "$STACKIE_HOME/storage/volumes/vol/keeper/data/blob" ]; check "the volume is still there after down" 0 $?
run volume rm vol --yes >/dev/null; check "volume rm of a stack that is down" 0 $?
[ ! -e "$STACKIE_HOME/storage/volumes/vol" ]; check "volume rm removed them" 0 $?
run volume rm nosuch --yes >/dev/null 2>&1; check "volume rm of an unknown stack exits 1" 1 $?
run volume frob >/dev/null 2>&1; check "volume with an unknown subcommand exits 2" 2 $?

# --- 8. network: outbound -----------------------------------------------------------------
# The only network here is the host's loopback: the upstream listens on the host's 127.0.0.1,
# which a block in its own namespace cannot reach except through the daemon's egress proxy.
U=$P
mkdir -p "$T/up" "$T/out/app" && echo "egress works" > "$T/up/hello.txt"
(cd "$T/up" && exec python3 -m http.server "$U" --bind 127.0.0.1 >/dev/null 2>&1) &
holder_pid=$!
cd "$T/out"
cat > stackie.yml <<YML
out:
  blocks:
    api:
      path: app
      command: [sleep, "600"]
      network: outbound
      egress: ["127.0.0.1:$U"]
    plain:
      path: app
      command: [sleep, "600"]
YML
run up >/dev/null 2>&1; check "up of an outbound block" 0 $?
sleep 0.5
out=$(run ps); contains "ps marks the outbound block" "$out" "api .*linux-namespaces (outbound)"
contains "ps leaves a localhost block as it is" "$out" "plain .*linux-namespaces$"
curl -sf -o /dev/null "http://127.0.0.1:$U/hello.txt"; check "the upstream serves on the host" 0 $?
out=$(run exec api -- sh -c 'echo "$HTTP_PROXY $https_proxy"')
contains "the block gets HTTP(S)_PROXY" "$out" "^http://127.0.0.1:3128 http://127.0.0.1:3128$"
out=$(run exec api -- env NO_PROXY= no_proxy= curl -sf "http://127.0.0.1:$U/hello.txt")
equals "plain http goes out through the proxy" "$out" "egress works"
out=$(run exec api -- env NO_PROXY= no_proxy= curl -sf -p "http://127.0.0.1:$U/hello.txt")
equals "a CONNECT tunnel goes out through the proxy" "$out" "egress works"
out=$(run exec api -- env NO_PROXY= no_proxy= curl -s -w ' %{http_code}' "http://127.0.0.1:$((U + 1))/")
contains "a destination outside the allowlist is refused with 403" "$out" "403$"
contains "the refusal names the destination" "$out" "egress to 127.0.0.1:$((U + 1)) is not in this block's egress allowlist"
run exec api -- curl -sf --noproxy '*' --max-time 5 "http://127.0.0.1:$U/hello.txt" >/dev/null 2>&1
check "without the proxy the host stays out of reach (localhost isolation kept)" 7 $?
run exec plain -- env NO_PROXY= no_proxy= curl -sf --max-time 5 -x http://127.0.0.1:3128 "http://127.0.0.1:$U/hello.txt" >/dev/null 2>&1
check "a localhost block has no proxy to go out through" 7 $?
out=$(run logs api); contains "the block's log notes each outbound connection" "$out" "egress: 127.0.0.1:$U"
run down >/dev/null
kill "$holder_pid"; wait "$holder_pid" 2>/dev/null; holder_pid=

# --- up right after the daemon was killed -----------------------------------------------------
# A killed daemon can keep its socket open for a while (a process closes its files only once the
# system call it was in returns), and the kernel queues connections on it that nobody answers.
# Played by a stand-in: a process makes the daemon's socket, a child of it keeps the socket for
# 2 s, and the maker is killed. `up` must wait for it to be gone and start a real daemon, not
# send its request into the dead socket ("the daemon closed the connection").
timeout 10 "$S" daemon stop >/dev/null 2>&1
mkdir -p "$T/revive/app" && cd "$T/revive"
printf 'revive:\n  blocks:\n    idle:\n      path: app\n      command: [sleep, "600"]\n' > stackie.yml
python3 - "$STACKIE_HOME/run/stackied.sock" <<'PY' &
import os, signal, socket, sys, time
listener = socket.socket(socket.AF_UNIX)
listener.bind(sys.argv[1])
listener.listen(16)
if os.fork() == 0:
    time.sleep(2)  # the socket lives on in this child, queueing connections
    os._exit(0)
os.kill(os.getpid(), signal.SIGKILL)
PY
maker=$!
sleep 0.3
out=$(run up 2>&1); check "up right after the daemon was killed while its socket lived on" 0 $?
contains "and the stack came up on a new daemon" "$out" "revive is up"
wait "$maker" 2>/dev/null
run down >/dev/null 2>&1

echo "$fails failures"
[ "$fails" -eq 0 ]
