#!/bin/sh
# End-to-end, with the real stackie, stackied and stackie-lockbox in a temporary STACKIE_HOME:
# two blocks never share a sandbox, whatever their names.
# - Stack "web" with block "api-db" and stack "web-api" with block "db": a plain
#   "<stack>-<block>" gave both the sandbox id web-api-db, and so one /tmp (storage/tmp/<id>),
#   one log directory and one cgroup. The hostile block of web-api looks for the secret the
#   other block left in its /tmp, and must not find it; each block's log holds its own lines.
# - A stack with "cache" and "stackie.cache" is refused before anything starts: both would be
#   the sandbox "<stack>-cache" and share its volumes too.
set -u
B=${STACKIE_BUILD_ROOT:?}/src
S=$B/stackie
. "$(dirname "$0")/lib.sh"

T=$(mktemp -d /tmp/stackie-names-e2e-XXXXXX)
export STACKIE_HOME=$T/home
unset XDG_RUNTIME_DIR
cleanup() {
  timeout 60 "$S" down web-api >/dev/null 2>&1
  timeout 60 "$S" down web >/dev/null 2>&1
  stop_daemon "$S" 20
  rm -rf "$T"
}
trap cleanup EXIT
run() { timeout 60 "$S" "$@"; }

mkdir -p "$T/victim" "$T/hostile"
cat >"$T/victim/stackie.yml" <<'YML'
web:
  blocks:
    api-db:
      command: [/bin/sh, -c, 'echo victim-secret-4711 >/tmp/secret; echo victim-ready; exec sleep 1000']
YML
cat >"$T/hostile/stackie.yml" <<'YML'
web-api:
  blocks:
    db:
      command: [/bin/sh, -c, 'echo "looked: $(cat /tmp/secret 2>/dev/null || echo nothing)"; exec sleep 1000']
YML

(cd "$T/victim" && run up >"$T/up-victim.out" 2>&1)
check "up of stack web" 0 $?
for _ in $(seq 1 50); do
  run logs web/api-db 2>/dev/null | grep -q victim-ready && break
  sleep 0.2
done
(cd "$T/hostile" && run up >"$T/up-hostile.out" 2>&1)
check "up of stack web-api" 0 $?
hostile_log=""
for _ in $(seq 1 50); do
  hostile_log=$(run logs web-api/db 2>/dev/null)
  printf '%s' "$hostile_log" | grep -q "looked:" && break
  sleep 0.2
done
contains "the block of web-api ran and looked in its /tmp" "$hostile_log" "looked:"
if printf '%s' "$hostile_log" | grep -q victim-secret-4711; then
  bad "web-api/db read the /tmp of web/api-db: $hostile_log"
else
  ok "web-api/db does not see the /tmp of web/api-db"
fi
victim_log=$(run logs web/api-db 2>/dev/null)
contains "web/api-db's log has its own line" "$victim_log" victim-ready
if printf '%s' "$victim_log" | grep -q "looked:"; then
  bad "web/api-db's log holds the lines of web-api/db: $victim_log"
else
  ok "web/api-db's log holds none of web-api/db's lines"
fi
ids=$(run ps --json | python3 -c '
import json, sys
print(" ".join(sorted(row["sandbox_id"] for row in json.load(sys.stdin)["blocks"])))')
equals "the two blocks have different sandbox ids" "$ids" "web--api-db web-api-db"
if [ -d "$STACKIE_HOME/storage/logs/web-api-db" ] && [ -d "$STACKIE_HOME/storage/logs/web--api-db" ]; then
  ok "each block has a log directory of its own"
else
  bad "log directories: $(ls "$STACKIE_HOME/storage/logs" 2>&1 | tr '\n' ' ')"
fi

mkdir -p "$T/twins"
cat >"$T/twins/stackie.yml" <<'YML'
twins:
  blocks:
    cache:
      command: [/bin/sh, -c, 'exec sleep 1000']
    stackie.cache:
      command: [/bin/sh, -c, 'exec sleep 1000']
YML
out=$(cd "$T/twins" && run up 2>&1)
status=$?
if [ "$status" -ne 0 ]; then ok "a stack with cache and stackie.cache is refused"; else bad "up of twins succeeded: $out"; fi
contains "the refusal says where and why" "$out" \
  "stackie.yml:5:5: block 'stackie.cache' and block 'cache' (line 3) would share one sandbox"
if run ps --json | grep -q '"twins"'; then
  bad "the refused stack has blocks running: $(run ps 2>&1)"
else
  ok "nothing of the refused stack runs"
fi

stop_daemon "$S" 20
done_testing
