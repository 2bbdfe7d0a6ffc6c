#!/bin/sh
# End-to-end, `mode: shared` (stackie-stack.yml(5), SHARED BLOCKS): two stacks in two project
# directories both ask for stackie.redis in shared mode, each under its own name for it. One
# redis-server runs (counted in /proc); each stack's consumer reaches it through its own
# `consumes` (a key written from one is read from the other); `ps` lists it once with both
# users; a daemon restart brings both users back; a third stack asking for it with another var
# is refused before anything of it starts; the first stack's down leaves it serving the second;
# `down @shared` is refused; the last down stops it; a later up finds the data. Hostile: a link
# planted where the instance's volume belongs fails its start, and nothing is written through
# it. Real binaries, a real daemon, a temporary STACKIE_HOME; runs unprivileged.
set -u
B=${STACKIE_BUILD_ROOT:?}/src
S=$B/stackie
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" = 0 ]; then
  bail_out "run as an unprivileged user (CI runs this as stackie-test)"
fi
if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
  skip_all "no redis-server/redis-cli on this host (apt-get install redis-server redis-tools)"
fi

T=$(mktemp -d /tmp/stackie-shared-e2e-XXXXXX)
export STACKIE_HOME=$T/home
unset XDG_RUNTIME_DIR
cleanup() {
  for project in one two three; do
    (cd "$T/$project" 2>/dev/null && timeout 60 "$S" down >/dev/null 2>&1)
  done
  stop_daemon "$S" 20
  rm -rf "$T"
}
trap cleanup EXIT
run() { timeout 30 "$S" "$@"; }
up() { timeout 120 "$S" up --wait; }
# redis-server processes with a file open below this test's STACKIE_HOME: the instances of
# this test, whatever else of the user runs (redis rewrites its command line, not its fds).
count_servers() {
  n=0
  for proc in /proc/[0-9]*; do
    [ "$(cat "$proc/comm" 2>/dev/null)" = redis-server ] || continue
    if ls -l "$proc/fd" 2>/dev/null | grep -q -- "$T/home/"; then n=$((n + 1)); fi
  done
  echo "$n"
}
# The rows of `ps --json` named stackie.redis: "STACK PID USED_BY" each.
redis_rows() {
  run ps --json | python3 -c '
import json, sys
for row in json.load(sys.stdin)["blocks"]:
    if row["name"] == "stackie.redis":
        print(row["stack"], row["pid"], ",".join(row["used_by"]))'
}
# redis-cli inside PROJECT's consumer, through its consumes address: PROJECT ARGS...
rc() {
  project=$1; shift
  run exec "$project/app" -- sh -c 'redis-cli -h "$CACHE_HOST" -p "$CACHE_PORT" "$@"' sh "$@"
}

# Two projects. The second names the instance in its own way (catalog: + a name of its own).
mkdir -p "$T/one" "$T/two" "$T/three"
cat > "$T/one/stackie-stack.yml" <<'YML'
one:
  blocks:
    stackie.redis: {mode: shared}
    app:
      path: .
      command: [sh, -c, 'exec sleep 100000']
      tools: [redis-cli]
      consumes: {cache: stackie.redis}
      environment:
        CACHE_HOST: ${consumes.cache.HOST}
        CACHE_PORT: ${consumes.cache.PORT}
YML
cat > "$T/two/stackie-stack.yml" <<'YML'
two:
  blocks:
    kv: {catalog: stackie.redis, mode: shared}
    app:
      path: .
      command: [sh, -c, 'exec sleep 100000']
      tools: [redis-cli]
      consumes: {store: kv}
      environment:
        CACHE_HOST: ${consumes.store.HOST}
        CACHE_PORT: ${consumes.store.PORT}
YML
# The same instance asked for with another setting.
cat > "$T/three/stackie-stack.yml" <<'YML'
three:
  blocks:
    stackie.redis: {mode: shared, vars: {appendonly: "no"}}
    app:
      path: .
      command: [sh, -c, 'exec sleep 100000']
      consumes: {cache: stackie.redis}
YML

# --- the first stack starts the instance ---------------------------------------------------------
out=$(cd "$T/one" && up 2>&1); status=$?
check "up of stack one (shared redis, a consumer)" 0 $status
[ $status -eq 0 ] || note "$out"
equals "one redis-server runs" "$(count_servers)" 1
rows=$(redis_rows)
equals "ps lists the instance once, in @shared, used by one" "$(echo "$rows" | cut -d' ' -f1,3)" "@shared one"
pid=$(echo "$rows" | cut -d' ' -f2)
out=$(rc one set shared-key from-one 2>&1); equals "one's consumer writes through its consumes" "$out" "OK"
[ -d "$T/home/storage/volumes/@shared/redis/data" ]
check "its data are in the shared volume, not below a stack" 0 $?
[ ! -e "$T/home/storage/volumes/one" ] || [ -z "$(ls -A "$T/home/storage/volumes/one" 2>/dev/null)" ]
check "nothing of it below stack one's volumes" 0 $?

# --- the second attaches -------------------------------------------------------------------------
out=$(cd "$T/two" && up 2>&1); status=$?
check "up of stack two attaches" 0 $status
[ $status -eq 0 ] || note "$out"
equals "still one redis-server" "$(count_servers)" 1
rows=$(redis_rows)
equals "ps: once, used by one and two" "$(echo "$rows" | cut -d' ' -f1,3)" "@shared one,two"
equals "the same process as before" "$(echo "$rows" | cut -d' ' -f2)" "$pid"
out=$(rc two get shared-key 2>&1); equals "two's consumer reads what one wrote" "$out" "from-one"
out=$(run ps 2>&1); contains "ps shows USED BY" "$out" "USED BY"
contains "ps names both users" "$out" "@shared .*one,two"
out=$(run ps two 2>&1); contains "ps of stack two lists the instance it uses" "$out" "stackie.redis"
out=$(run status two/kv 2>&1); check "status of two's name for it answers" 0 $?
contains "with the instance" "$out" "@shared/stackie.redis"

# --- a daemon restart brings back both users -----------------------------------------------------
run daemon stop >/dev/null 2>&1
for try in $(seq 1 30); do [ "$(count_servers)" = 0 ] && break; sleep 1; done
equals "the daemon's stop stopped the instance" "$(count_servers)" 0
out=$(cd "$T/two" && up 2>&1); check "up after a daemon restart" 0 $?
users=""
for try in $(seq 1 60); do
  users=$(redis_rows | cut -d' ' -f3)
  [ "$users" = "one,two" ] && break
  sleep 1
done
equals "the restored stacks use it again" "$users" "one,two"
equals "one redis-server after the restore" "$(count_servers)" 1
out=$(rc one get shared-key 2>&1); equals "the key survived (its append-only file)" "$out" "from-one"

# --- other settings are refused, naming them -----------------------------------------------------
out=$(cd "$T/three" && up 2>&1); status=$?
[ "$status" -ne 0 ]; check "up with another var is refused (exit $status)" 0 $?
contains "the refusal names the block, the setting and the starter" "$out" \
  "block 'stackie.redis' of stack 'three' (mode shared) asks for vars.appendonly other than shared instance stackie.redis started by stack '"
out=$(run ps three 2>&1); check "nothing of stack three runs" 1 $?
equals "still one redis-server" "$(count_servers)" 1

# --- down of the first leaves it serving the second ---------------------------------------------
out=$(cd "$T/one" && timeout 60 "$S" down 2>&1); check "down of stack one" 0 $?
equals "the instance still runs" "$(count_servers)" 1
equals "used by two alone" "$(redis_rows | cut -d' ' -f1,3)" "@shared two"
out=$(rc two set after-one-left yes 2>&1); equals "two still writes to it" "$out" "OK"
out=$(run down @shared 2>&1); status=$?
[ "$status" -ne 0 ]; check "down @shared is refused (exit $status)" 0 $?
contains "and says why" "$out" "stops with the"
equals "the refusal stopped nothing" "$(count_servers)" 1

# --- down of the last stops it; the data stay ----------------------------------------------------
out=$(cd "$T/two" && timeout 60 "$S" down 2>&1); check "down of stack two" 0 $?
equals "no redis-server left" "$(count_servers)" 0
equals "ps lists no instance" "$(redis_rows)" ""
out=$(cd "$T/two" && up 2>&1); check "up of stack two again" 0 $?
out=$(rc two get shared-key 2>&1); equals "a later up finds the data" "$out" "from-one"
out=$(rc two get after-one-left 2>&1); equals "and what was written after one left" "$out" "yes"
out=$(cd "$T/two" && timeout 60 "$S" down 2>&1); check "down of stack two again" 0 $?
equals "stopped again" "$(count_servers)" 0

# --- hostile: a link where the instance's volume belongs ----------------------------------------
# Anything that can write the shared storage (the instance itself) could leave a link there for
# the daemon to follow at the next start: it must fail the start and write nothing through it.
mkdir -p "$T/victim"
rm -rf "$T/home/storage/volumes/@shared/redis"
ln -s "$T/victim" "$T/home/storage/volumes/@shared/redis"
out=$(cd "$T/one" && up 2>&1); status=$?
[ "$status" -ne 0 ]; check "a planted link fails the start (exit $status)" 0 $?
contains "naming the path" "$out" "volumes/@shared/redis"
equals "nothing was written through the link" "$(ls -A "$T/victim")" ""
equals "no redis-server runs" "$(count_servers)" 0
(cd "$T/one" && timeout 60 "$S" down >/dev/null 2>&1)

done_testing
