#!/bin/sh
# End-to-end, compose compatibility (issue 22): the web corpus (tests/fixtures/compose/web:
# postgres + redis + a python app, as a project writes its compose.yaml) is discovered with no
# -f and brought up for real with Debian's postgres and redis; the app reaches them by their
# service names (db:5432, cache:6379 through the sandbox's /etc/hosts and its consumes); each
# unmapped key is a warning with its line; `stackie convert` prints a stack file that loads.
# Real binaries, a real daemon, a temporary STACKIE_HOME; unprivileged (postgres refuses root).
set -u
B=${STACKIE_BUILD_ROOT:?}/src
S=$B/stackie
SRC=${STACKIE_SOURCE_ROOT:?}
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" = 0 ]; then
  bail_out "run as an unprivileged user: postgres refuses to run as root (CI runs this as stackie-test)"
fi
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [ ! -x "$pg_bin/postgres" ] && ! command -v postgres >/dev/null; then
  skip_all "no postgres on this host (apt-get install postgresql)"
fi
if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
  skip_all "no redis-server/redis-cli on this host (apt-get install redis-server redis-tools)"
fi

T=$(mktemp -d /tmp/stackie-compose-e2e-XXXXXX)
export STACKIE_HOME=$T/home
unset XDG_RUNTIME_DIR POSTGRES_PASSWORD
cleanup() {
  (cd "$T/web" && timeout 60 "$S" down >/dev/null 2>&1)
  stop_daemon "$S" 20
  rm -rf "$T"
}
trap cleanup EXIT
run() { timeout 30 "$S" "$@"; }
host_port() {  # STACK BLOCK: the host port of its first served port
  run ps --json | python3 -c '
import json, sys
for row in json.load(sys.stdin)["blocks"]:
    if row["stack"] == sys.argv[1] and row["name"] == sys.argv[2] and row["ports"]:
        print(row["ports"][0]["host"].rsplit(":", 1)[1])' "$1" "$2"
}

cp -r "$SRC/tests/fixtures/compose/web" "$T/web"
out=$(cd "$T/web" && timeout 240 "$S" up 2>&1); check "up of the web compose.yaml, found with no -f" 0 $?
[ $? = 0 ] || note "$out"
contains "the db's healthcheck is a warning at its line" "$out" \
  "compose.yaml:16:7: warning: 'healthcheck' of 'db' is not mapped"
contains "the image tag is a warning at its line" "$out" \
  "compose.yaml:5:12: warning: image tag '16-alpine' is not a version constraint"

app_port=$(host_port web app)
[ -n "$app_port" ]; check "ps --json gives the app's host port ($app_port)" 0 $?
answer=""
for _ in 1 2 3 4 5 6 7 8 9 10; do
  answer=$(python3 -c 'import sys, urllib.request
print(urllib.request.urlopen("http://127.0.0.1:%s/" % sys.argv[1], timeout=10).read().decode().strip())' \
    "$app_port" 2>&1) && break
  sleep 1
done
equals "the app reached db:5432 and cache:6379 by name" "$answer" "postgres ok, redis ok"
hosts=$(cd "$T/web" && run exec app -- cat /etc/hosts 2>&1)
contains "the app's /etc/hosts names db" "$hosts" "^127.0.0.1	db$"
contains "the app's /etc/hosts names cache" "$hosts" "^127.0.0.1	cache$"
db_hosts=$(cd "$T/web" && run exec db -- cat /etc/hosts 2>&1)
contains "the db block can read an /etc/hosts" "$db_hosts" "localhost"
printf '%s\n' "$db_hosts" | grep -q "cache"; check "the db, which consumes nothing, has no such names" 1 $?

# convert: the stack file it prints loads (validate) to the same three blocks
conv=$(cd "$T/web" && run convert 2>&1); check "convert" 0 $?
contains "convert maps db onto the catalog" "$conv" "catalog: stackie.postgres"
contains "convert comments what did not map, by line" "$conv" "^#   16: 'healthcheck' of 'db' is not mapped"
printf '%s\n' "$conv" > "$T/web/stackie-stack.yml"
out=$(cd "$T/web" && run validate 2>&1); check "the converted stack file validates" 0 $?
contains "validate reads the converted file, not compose.yaml" "$out" "stackie-stack.yml"
rm -f "$T/web/stackie-stack.yml"

out=$(cd "$T/web" && timeout 120 "$S" down 2>&1); check "down" 0 $?

done_testing
