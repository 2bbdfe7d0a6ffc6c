#!/bin/sh
# End-to-end: the managed blocks stackie.postgres and stackie.redis with the host's real
# servers and clients (Debian: postgresql, redis-server), the real stackie and stackied, a
# temporary STACKIE_HOME. Runs unprivileged (postgres refuses root). Everything here goes through
# `stackie exec` (inside the block's sandbox); the host-side clients over forwarded ports are in
# managed_network_test.sh. Checks: a missing program fails `up` before anything starts; initdb,
# health, exec psql/redis-cli with the block's environment (peer auth on the socket, SCRAM on
# TCP, no secret on a command line); postgres's own log lines; isolation from the home, redis's
# volume and another stack's postgres (which runs at the same time on the same port); data
# through down/up; kill -9 of stackied leaves no process and postgres recovers on the next up.
set -u
B=${STACKIE_BUILD_ROOT:?}/src
S=$B/stackie
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" = 0 ]; then
  bail_out "run as an unprivileged user: postgres refuses to run as root (CI runs this as stackie-test)"
fi
# Like the block definitions: the newest Debian-layout postgres, else PATH.
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [ ! -x "$pg_bin/postgres" ] && ! command -v postgres >/dev/null; then
  skip_all "no postgres on this host (apt-get install postgresql)"
fi
if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
  skip_all "no redis-server/redis-cli on this host (apt-get install redis-server redis-tools)"
fi

T=$(mktemp -d /tmp/stackie-managed-e2e-XXXXXX)
export STACKIE_HOME=$T/home
unset XDG_RUNTIME_DIR
STORAGE=$STACKIE_HOME/storage
cleanup() {
  timeout 60 "$S" down shop >/dev/null 2>&1
  stop_daemon "$S" 20
  rm -rf "$T"
}
trap cleanup EXIT
run() { timeout 30 "$S" "$@"; }
up() { timeout 240 "$S" up; }
psql_in() { run exec stackie.postgres -- psql -X -v ON_ERROR_STOP=1 -At "$@"; }
# "state health" of BLOCK from `stackie ps --json`.
state_of() {
  run ps --json | python3 -c '
import json, sys
for row in json.load(sys.stdin)["blocks"]:
    if row["name"] == sys.argv[1]:
        print(row["state"], row["health"])' "$1"
}
# Every descendant of PID (from each process's parent in /proc/*/stat), one "pid comm" a line.
descendants() {
  python3 - "$1" <<'PY'
import os, sys
parent = {}
comm = {}
for entry in os.listdir("/proc"):
    if not entry.isdigit():
        continue
    try:
        stat = open(f"/proc/{entry}/stat").read()
    except OSError:
        continue
    # comm may hold spaces and parentheses: the fields after the last ')' are fixed.
    name = stat[stat.index("(") + 1:stat.rindex(")")]
    fields = stat[stat.rindex(")") + 2:].split()
    parent[int(entry)] = int(fields[1])
    comm[int(entry)] = name
todo, seen = [int(sys.argv[1])], []
while todo:
    pid = todo.pop()
    for child, ppid in parent.items():
        if ppid == pid and child not in seen:
            seen.append(child)
            todo.append(child)
for pid in seen:
    print(pid, comm[pid])
PY
}
# Which of the "pid comm" lines on stdin still name a live process with the same comm. A zombie
# is dead: it waits only for its new parent (the machine's init) to reap it, which a loaded
# host may do late.
still_alive() {
  while read -r pid name; do
    [ -r "/proc/$pid/stat" ] || continue
    now=$(sed 's/^[0-9]* (\(.*\)) \([A-Za-z]\) .*/\2 \1/' "/proc/$pid/stat" 2>/dev/null)
    [ "${now#Z }" != "$now" ] && continue
    [ "${now#? }" = "$name" ] && echo "$pid $name"
  done
}

cd "$T" || exit 1
cat > stackie-stack.yml <<'YML'
shop:
  blocks:
    stackie.postgres:
      vars:
        database: shop
    stackie.redis:
YML
PASSWORD=e2e-secret-$$
printf 'secrets:\n  POSTGRES_PASSWORD: %s\n' "$PASSWORD" > stackie-stack.secrets.yml

# --- a missing program fails the up before anything starts, naming the package -------------
mkdir missing && cat > missing/stackie-stack.yml <<'YML'
broken:
  blocks:
    stackie.redis:
    fixture.missing:
YML
out=$(cd missing && STACKIE_BLOCK_PATH=${STACKIE_SOURCE_ROOT:?}/tests/fixtures/blocks up 2>&1)
check "up with a missing program exits 1" 1 $?
contains "it names the package to install" "$out" \
  "fixture.missing: program 'stackie-no-such-program' not found; install it with: apt-get install stackie-no-such-package"
out=$(run ps --json); contains "nothing of that stack started (not even redis)" "$out" '"blocks":\[\]'

# --- up: initdb inside the sandbox, both blocks healthy -------------------------------------
out=$(up 2>&1); check "up of postgres + redis" 0 $?
contains "up names the stack" "$out" "stack shop is up"
equals "postgres is running and healthy" "$(state_of stackie.postgres)" "running healthy"
equals "redis is running and healthy" "$(state_of stackie.redis)" "running healthy"
out=$(run ps); contains "ps shows postgres in its sandbox" "$out" "stackie.postgres.*running.*linux-namespaces"

# --- exec: psql and redis-cli inside, with the block's environment --------------------------
out=$(psql_in -c 'select 1'); check "exec psql -c 'select 1'" 0 $?
equals "select 1 answers 1" "$out" "1"
out=$(psql_in -c 'select current_database(), current_user'); check "psql with no options" 0 $?
equals "PGDATABASE and PGUSER come from the block" "$out" "shop|postgres"
psql_in -c "create table items (id int primary key, name text);
            insert into items values (1, 'one'), (2, 'two');" >/dev/null
check "exec psql creates a table and inserts rows" 0 $?
# --- log severity: postgres's own ERROR line is classified, filtered and counted --------------
psql_in -c 'select * from no_such_table' >/dev/null 2>&1; check "a failing query fails" 1 $?
sleep 0.5
out=$(run logs -n 400 --level error stackie.postgres)
contains "logs --level error shows postgres's ERROR line" "$out" 'ERROR: *relation "no_such_table" does not exist'
if printf '%s\n' "$out" | grep -q ' LOG: '; then bad "logs --level error leaves out LOG lines"
else ok "logs --level error leaves out LOG lines"; fi
out=$(run logs -n 400 --json stackie.postgres)
contains "logs --json gives each line its level" "$out" '"level":"error","text":"[^"]*ERROR: *relation'
contains "and postgres's LOG lines are info" "$out" '"level":"info","text":"[^"]*LOG: '
out=$(run status stackie.postgres)
contains "status counts the block's error lines" "$out" "log lines: .*[1-9][0-9]* error"
out=$(run logs --level loud stackie.postgres 2>&1); check "an unknown level is a usage error" 2 $?

out=$(run exec stackie.redis -- redis-cli ping); check "exec redis-cli ping" 0 $?
equals "redis answers PONG" "$out" "PONG"
out=$(run exec stackie.redis -- redis-cli set k v); equals "redis-cli set k v" "$out" "OK"
run exec stackie.redis -- redis-cli set counter 41 >/dev/null
# The socket authenticates by uid (peer), the host's TCP port by password (SCRAM).
hba=$(run exec stackie.postgres -- sh -c 'grep -v "^#" "$PGDATA/pg_hba.conf"')
contains "the unix socket takes peer auth" "$hba" "^local all all peer map=stackie"
contains "127.0.0.1 takes SCRAM" "$hba" "^host all all 127.0.0.1/32 scram-sha-256"
if printf '%s' "$hba" | grep -Eq 'trust|md5'; then bad "no trust or md5 rule: $hba"; else ok "no trust or md5 rule"; fi
out=$(run exec stackie.postgres -- sh -c 'psql -X -w -At -h 127.0.0.1 -c "select 1" </dev/null 2>&1')
check "psql over 127.0.0.1 without the password is refused" 2 $?
contains "refused for want of a password" "$out" "password"
out=$(run exec stackie.postgres -- sh -c 'stat -c %a "$PGHOST"'); equals "the socket directory is private" "$out" "700"

out=$(SSH_AUTH_SOCK=/caller/agent TERM=stackie-term run exec stackie.redis -- \
  sh -c 'echo "${SSH_AUTH_SOCK:-unset} $TERM"')
equals "exec: the block's environment, not the caller's (TERM aside)" "$out" "unset stackie-term"
# While an exec runs, the secret is in no command line (every user can read those); the names
# passed with --pass-env are (the control: we looked while the exec ran).
run exec stackie.postgres -- sleep 3 & exec_pid=$!
sleep 1.5
scan=$(SECRET=$PASSWORD python3 -c '
import os
secret, names = os.environ["SECRET"].encode(), b""
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        line = open(f"/proc/{pid}/cmdline", "rb").read()
    except OSError:
        continue
    if secret in line:
        print("secret in the command line of", pid)
    if b"--pass-env\0POSTGRES_PASSWORD" in line:
        names = b"seen"
print("pass-env", names.decode() or "not seen")')
wait $exec_pid
equals "exec passes the secret by environment, not by command line" "$scan" "pass-env seen"

# --- logs: postgres's own startup lines ------------------------------------------------------
out=$(run logs -n 200 stackie.postgres); check "logs stackie.postgres" 0 $?
contains "postgres's own startup line" "$out" "database system is ready to accept connections"
out=$(run logs -n 200 stackie.redis); contains "redis's own startup line" "$out" "Ready to accept connections"

# --- isolation, checked from inside postgres's sandbox ---------------------------------------
redis_volume=$STORAGE/volumes/shop/redis/data
[ -d "$HOME" ] && [ "$HOME" != / ]; check "the caller's home exists outside ($HOME)" 0 $?
[ -d "$redis_volume" ]; check "redis's volume exists outside" 0 $?
run exec stackie.postgres -- sh -c 'test -f "$PGDATA/PG_VERSION"'
check "control: postgres sees its own volume" 0 $?
out=$(run exec stackie.postgres -- ls -a "$HOME" 2>&1); check "postgres cannot list the caller's home" 2 $?
contains "the home does not exist inside" "$out" "No such file or directory"
out=$(run exec stackie.postgres -- ls -a "$redis_volume" 2>&1); check "postgres cannot list redis's volume" 2 $?
contains "redis's volume does not exist inside" "$out" "No such file or directory"
out=$(run exec stackie.postgres -- ls "$STORAGE/volumes/shop"); check "the stack's volumes directory inside" 0 $?
equals "only postgres's own volume is there" "$out" "postgres"
out=$(run exec stackie.postgres -- sh -c 'echo x > /usr/stackie-probe' 2>&1)
check "the system view is read-only" 2 $?
contains "denied by a read-only mount" "$out" "Read-only file system"

# --- a second stack with its own postgres at the same time: both on 5432, each in its own
# network namespace (the host ports are managed_network_test.sh's) --------------------------
mkdir annex && cat > annex/stackie-stack.yml <<'YML'
annex:
  blocks:
    stackie.postgres:
YML
printf 'secrets:\n  POSTGRES_PASSWORD: annex-%s\n' "$$" > annex/stackie-stack.secrets.yml
out=$(cd annex && up 2>&1); check "up of a second stack with postgres" 0 $?
out=$(run exec annex/stackie.postgres -- psql -X -At -c "show port"); equals "annex's postgres on 5432" "$out" "5432"
out=$(run exec shop/stackie.postgres -- psql -X -At -c "show port"); equals "shop's postgres on 5432 too" "$out" "5432"
run exec annex/stackie.postgres -- psql -X -v ON_ERROR_STOP=1 -c "create table only_annex (x int)" >/dev/null
check "annex's postgres takes writes" 0 $?
out=$(run exec shop/stackie.postgres -- psql -X -At -c "select to_regclass('only_annex') is null, count(*) from items")
equals "shop's postgres is another cluster, its rows intact" "$out" "t|2"
annex_volume=$STORAGE/volumes/annex/postgres/data
[ -f "$annex_volume/PG_VERSION" ]; check "annex's volume exists outside" 0 $?
out=$(run exec shop/stackie.postgres -- ls "$annex_volume" 2>&1); check "shop's postgres cannot list annex's volume" 2 $?
contains "annex's volume does not exist inside" "$out" "No such file or directory"
out=$(cd annex && timeout 120 "$S" down 2>&1); check "down of the second stack" 0 $?

# --- down, up: rows and keys survive ----------------------------------------------------------
out=$(timeout 120 "$S" down 2>&1); check "down" 0 $?
sleep 1
equals "no process of the stack after down" "$(pgrep -u "$(id -u)" -f "$STORAGE" | wc -l)" "0"
[ -d "$redis_volume/appendonlydir" ]; check "redis's append-only file is in its volume" 0 $?
[ -f "$redis_volume/dump.rdb" ]; check "redis saved its RDB on SIGTERM" 0 $?
out=$(up 2>&1); check "up again" 0 $?
out=$(psql_in -c 'select count(*), string_agg(name, $$,$$ order by id) from items')
equals "the rows survived down and up" "$out" "2|one,two"
out=$(run exec stackie.redis -- redis-cli get k); equals "the key survived down and up" "$out" "v"
out=$(run exec stackie.redis -- redis-cli incr counter); equals "and its value" "$out" "42"

# --- kill -9 of the daemon: nothing survives; postgres recovers on the next up ---------------
psql_in -c "insert into items values (3, 'after the last checkpoint')" >/dev/null
check "a row written just before the crash" 0 $?
daemon=$(cat "$STACKIE_HOME/stackied.pid")
tree=$(descendants "$daemon")
contains "the daemon's tree holds postgres" "$tree" " postgres$"
contains "the daemon's tree holds redis" "$tree" " redis-server$"
kill -9 "$daemon"
left=$tree
for _ in $(seq 30); do
  left=$(printf '%s\n' "$tree" | still_alive)
  [ -z "$left" ] && break
  sleep 0.3
done
equals "no postgres or redis process survives kill -9 of stackied (9 s)" "$left" ""
sleep 0.5
out=$(up 2>&1); check "up after the crash" 0 $?
out=$(psql_in -c 'select count(*) from items'); equals "crash recovery kept every row" "$out" "3"
out=$(run exec stackie.redis -- redis-cli get k); equals "redis kept its key" "$out" "v"
out=$(run logs -n 400 stackie.postgres)
contains "postgres ran its own crash recovery" "$out" "was not properly shut down; automatic recovery in progress"
out=$(psql_in -c 'select 1'); equals "select 1 after recovery" "$out" "1"

out=$(timeout 120 "$S" down 2>&1); check "final down" 0 $?
done_testing
