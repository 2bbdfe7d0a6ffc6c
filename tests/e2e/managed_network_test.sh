#!/bin/sh
# End-to-end, through the network forwarder (DESIGN.md §6): the host's real psql and redis-cli
# reach stackie.postgres and stackie.redis through their forwarded host ports (read from
# `stackie ps --json`); data survives down/up; two stacks each run postgres at the same time on
# different host ports; a first-party block consumes both and queries each through
# ${consumes.NAME.HOST}/${consumes.NAME.PORT}. Real binaries, a real daemon, a temporary
# STACKIE_HOME; runs unprivileged (postgres refuses root).
set -u
B=${STACKIE_BUILD_ROOT:?}/src
S=$B/stackie
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" = 0 ]; then
  bail_out "run as an unprivileged user: postgres refuses to run as root (CI runs this as stackie-test)"
fi
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [ -x "$pg_bin/psql" ]; then PSQL=$pg_bin/psql; else PSQL=$(command -v psql); fi
if [ -z "$PSQL" ] || { [ ! -x "$pg_bin/postgres" ] && ! command -v postgres >/dev/null; }; then
  skip_all "no postgres/psql on this host (apt-get install postgresql)"
fi
if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
  skip_all "no redis-server/redis-cli on this host (apt-get install redis-server redis-tools)"
fi

T=$(mktemp -d /tmp/stackie-network-e2e-XXXXXX)
export STACKIE_HOME=$T/home
unset XDG_RUNTIME_DIR PGHOST PGPORT PGUSER PGDATABASE PGPASSWORD PGSERVICE
cleanup() {
  (cd "$T/a" && timeout 60 "$S" down >/dev/null 2>&1)
  (cd "$T/b" && timeout 60 "$S" down >/dev/null 2>&1)
  stop_daemon "$S" 20
  rm -rf "$T"
}
trap cleanup EXIT
run() { timeout 30 "$S" "$@"; }
up() { timeout 240 "$S" up; }
# The host port of BLOCK's first served port in STACK, from `stackie ps --json`
# (ports: [{name, host: "127.0.0.1:PORT", sandbox}]).
host_port() {
  run ps --json | python3 -c '
import json, sys
for row in json.load(sys.stdin)["blocks"]:
    if row["stack"] == sys.argv[1] and row["name"] == sys.argv[2] and row["ports"]:
        print(row["ports"][0]["host"].rsplit(":", 1)[1])' "$1" "$2"
}
# psql from the host: PASSWORD PORT SQL...
host_psql() {
  pw=$1 port=$2; shift 2
  PGPASSWORD=$pw PGCONNECT_TIMEOUT=10 "$PSQL" -X -w -v ON_ERROR_STOP=1 -At \
    -h 127.0.0.1 -p "$port" -U postgres -d shop "$@"
}

# Stack a: postgres, redis and a first-party block that consumes both.
mkdir -p "$T/a/probe" "$T/b"
cat > "$T/a/stackie-stack.yml" <<YML
shop-a:
  blocks:
    stackie.postgres:
      vars:
        database: shop
    stackie.redis:
    probe:
      path: ./probe
      command: [sh, ./probe.sh]
      consumes:
        db: stackie.postgres
        cache: {port_type: redis}
      environment:
        PATH: $pg_bin:/usr/local/bin:/usr/bin:/bin
        DB_HOST: \${consumes.db.HOST}
        DB_PORT: \${consumes.db.PORT}
        CACHE_HOST: \${consumes.cache.HOST}
        CACHE_PORT: \${consumes.cache.PORT}
        PGPASSWORD: \${secrets.POSTGRES_PASSWORD}
      health:
        exec: [test, -s, $T/a/probe/result]
        interval: 500ms
        retries: 60
YML
# The probe: one query to each provider through its consumes address, the answers in ./result.
# A few tries: the first connection may race the forwarder's listener coming up.
cat > "$T/a/probe/probe.sh" <<'SH'
set -u
rm -f result
for try in 1 2 3 4 5 6 7 8 9 10; do
  db=$(psql -X -w -At -h "$DB_HOST" -p "$DB_PORT" -U postgres -d shop -c "
    create table if not exists probed (who text); insert into probed values ('probe');
    select 'db ok ' || count(*) from probed" 2>&1)
  cache=$(redis-cli -h "$CACHE_HOST" -p "$CACHE_PORT" set probed-by probe 2>&1)
  echo "try $try: db=[$db] via $DB_HOST:$DB_PORT cache=[$cache] via $CACHE_HOST:$CACHE_PORT" |
    tee result.tmp
  case "$db$cache" in *"db ok"*OK) mv result.tmp result; break ;; esac
  sleep 1
done
exec sleep 100000
SH
printf 'secrets:\n  POSTGRES_PASSWORD: pw-a-%s\n' "$$" > "$T/a/stackie-stack.secrets.yml"
cat > "$T/b/stackie-stack.yml" <<'YML'
shop-b:
  blocks:
    stackie.postgres:
      vars:
        database: shop
YML
printf 'secrets:\n  POSTGRES_PASSWORD: pw-b-%s\n' "$$" > "$T/b/stackie-stack.secrets.yml"
PW_A=pw-a-$$
PW_B=pw-b-$$

# --- stack a: the consumer queried both providers ---------------------------------------------
out=$(cd "$T/a" && up 2>&1); check "up of stack a (postgres, redis, probe)" 0 $?
result=$(cat "$T/a/probe/result" 2>/dev/null)
contains "the probe queried postgres through \${consumes.db}" "$result" "db ok [0-9]*\] via 127.0.0.1:5432"
contains "the probe queried redis through \${consumes.cache}" "$result" "cache=\[OK\] via 127.0.0.1:6379"
out=$(run ps); contains "ps shows the forwarded port" "$out" "127.0.0.1:[0-9]*->5432"

pg_a=$(host_port shop-a stackie.postgres); redis_a=$(host_port shop-a stackie.redis)
[ -n "$pg_a" ] && [ -n "$redis_a" ]; check "ps --json gives the host ports ($pg_a, $redis_a)" 0 $?

# --- host clients through the forwarded ports -------------------------------------------------
host_psql "$PW_A" "$pg_a" -c "create table items (id int primary key, name text);
  insert into items values (1, 'one'), (2, 'two');" >/dev/null
check "host psql creates a table and inserts rows" 0 $?
out=$(host_psql "$PW_A" "$pg_a" -c "select distinct who from probed"); equals "host psql sees the probe's row" "$out" "probe"
out=$(host_psql wrong-password "$pg_a" -c "select 1" 2>&1); check "a wrong password is refused" 2 $?
contains "refused by SCRAM" "$out" "password authentication failed"
out=$(redis-cli -h 127.0.0.1 -p "$redis_a" set hk hv); equals "host redis-cli sets a key" "$out" "OK"
out=$(redis-cli -h 127.0.0.1 -p "$redis_a" get probed-by); equals "host redis-cli sees the probe's key" "$out" "probe"

# --- stack b at the same time: its own postgres on another host port --------------------------
out=$(cd "$T/b" && up 2>&1); check "up of stack b while a runs" 0 $?
pg_b=$(host_port shop-b stackie.postgres)
[ -n "$pg_b" ] && [ "$pg_b" != "$pg_a" ]; check "two postgres, two host ports ($pg_a, $pg_b)" 0 $?
host_psql "$PW_B" "$pg_b" -c "create table only_b (x int); insert into only_b values (7)" >/dev/null
check "host psql into stack b" 0 $?
out=$(host_psql "$PW_B" "$pg_b" -c "select x from only_b"); equals "stack b answers" "$out" "7"
out=$(host_psql "$PW_A" "$pg_a" -c "select count(*) from items"); equals "stack a still answers" "$out" "2"
out=$(host_psql "$PW_A" "$pg_a" -c "select to_regclass('only_b') is null"); equals "the clusters are separate" "$out" "t"
out=$(host_psql "$PW_A" "$pg_b" -c "select 1" 2>&1); check "stack a's password does not open stack b" 2 $?

# --- down, up: rows and keys survive, seen from the host ----------------------------------------
out=$(cd "$T/a" && timeout 120 "$S" down 2>&1); check "down of stack a" 0 $?
out=$(cd "$T/a" && up 2>&1); check "up of stack a again" 0 $?
pg_a=$(host_port shop-a stackie.postgres); redis_a=$(host_port shop-a stackie.redis)
out=$(host_psql "$PW_A" "$pg_a" -c "select string_agg(name, ',' order by id) from items")
equals "the rows survived down and up" "$out" "one,two"
out=$(redis-cli -h 127.0.0.1 -p "$redis_a" get hk); equals "the key survived down and up" "$out" "hv"
out=$(host_psql "$PW_B" "$pg_b" -c "select x from only_b"); equals "stack b kept running meanwhile" "$out" "7"

out=$(cd "$T/a" && timeout 120 "$S" down 2>&1); check "final down of a" 0 $?
out=$(cd "$T/b" && timeout 120 "$S" down 2>&1); check "final down of b" 0 $?
done_testing
