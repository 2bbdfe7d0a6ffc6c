#!/bin/sh
# End-to-end, issue 14 (seams a hostile block or a careless flag could open), with the real
# stackie, stackied and stackie-lockbox in a temporary STACKIE_HOME:
# - `up --no-sandbox` unsandboxes first-party blocks only: stackie.redis stays sandboxed (ps's
#   SANDBOX column), in the daemon as in `validate`;
# - state.json keeps of the client's environment only what the stack referenced (PATH, a secret
#   found there) and STACKIE_* variables: an unrelated SECRET_TOKEN_XYZ of the shell is absent;
#   the file is mode 0600;
# - a restore never runs unsandboxed a block the last `up` ran sandboxed: after the stack file
#   was edited to opt a block out, the restarted daemon refuses to restore it and says why.
set -u
B=${STACKIE_BUILD_ROOT:?}/src
S=$B/stackie
. "$(dirname "$0")/lib.sh"
if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
  echo "skip: no redis-server/redis-cli on this host (apt-get install redis-server redis-tools)"
  exit 77
fi

T=$(mktemp -d /tmp/stackie-seams-e2e-XXXXXX)
export STACKIE_HOME=$T/home
unset XDG_RUNTIME_DIR
cleanup() {
  timeout 60 "$S" down seams >/dev/null 2>&1
  stop_daemon "$S" 20
  rm -rf "$T"
}
trap cleanup EXIT
run() { timeout 60 "$S" "$@"; }
# "SANDBOX" column of BLOCK from `stackie ps --json`.
sandbox_of() {
  run ps --json | python3 -c '
import json, sys
for row in json.load(sys.stdin)["blocks"]:
    if row["name"] == sys.argv[1]:
        print(row["sandbox"])' "$1"
}

mkdir -p "$T/app"
cd "$T/app" || exit 1
cat >stackie.yml <<'YML'
seams:
  blocks:
    stackie.redis:
    app:
      path: .
      command: [/bin/sh, -c, 'echo "token=$TOKEN"; exec sleep 1000']
      environment:
        TOKEN: ${secrets.APP_TOKEN}
YML

APP_TOKEN=app-secret-1 SECRET_TOKEN_XYZ=hunter2-unrelated run up --no-sandbox >"$T/up.out" 2>&1
check "up --no-sandbox" 0 $?
contains "up warns about the unsandboxed first-party block" "$(cat "$T/up.out")" \
  "block app runs without a sandbox"
if grep -q "block stackie.redis runs without a sandbox" "$T/up.out"; then
  bad "no warning for stackie.redis: it must stay sandboxed"
else
  ok "no warning for stackie.redis: it stays sandboxed"
fi
redis_box=$(sandbox_of stackie.redis)
app_box=$(sandbox_of app)
if [ -n "$redis_box" ] && [ "$redis_box" != passthrough ]; then
  ok "ps: stackie.redis is sandboxed ($redis_box) under --no-sandbox"
else
  bad "ps: stackie.redis runs '$redis_box' under --no-sandbox"
fi
equals "ps: the first-party block is unsandboxed" "$app_box" passthrough

state=$STACKIE_HOME/state.json
if grep -q SECRET_TOKEN_XYZ "$state" || grep -q hunter2-unrelated "$state"; then
  bad "state.json holds an unrelated variable of the client's environment: $(cat "$state")"
else
  ok "state.json holds no unrelated variable of the client's environment"
fi
contains "state.json keeps the secret the stack referenced from the environment" \
  "$(cat "$state")" '"APP_TOKEN"'
contains "state.json keeps PATH (program discovery)" "$(cat "$state")" '"PATH"'
contains "state.json records the blocks the up ran unsandboxed" \
  "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["stacks"][0]["unsandboxed"])' "$state")" \
  "\['app'\]"
equals "state.json is mode 0600" "$(stat -c %a "$state")" 600

# A restore with the file unchanged brings the stack back, app unsandboxed as accepted.
pid=$(cat "$STACKIE_HOME/stackied.pid")
kill -9 "$pid"
sleep 1
run daemon start >/dev/null 2>&1
for _ in $(seq 1 100); do
  [ "$(sandbox_of app)" = passthrough ] && break
  sleep 0.2
done
equals "restored: app runs as the last up accepted it" "$(sandbox_of app)" passthrough
redis_box=$(sandbox_of stackie.redis)
if [ -n "$redis_box" ] && [ "$redis_box" != passthrough ]; then
  ok "restored: stackie.redis is still sandboxed"
else
  bad "restored: stackie.redis runs '$redis_box'"
fi

# The stack file now opts stackie.redis out of its sandbox (as a block that could write it
# would have done): the restore refuses instead of running it unsandboxed unseen.
pid=$(cat "$STACKIE_HOME/stackied.pid")
kill -9 "$pid"
sleep 1
cat >stackie.yml <<'YML'
seams:
  blocks:
    stackie.redis:
      platforms: {linux: {sandbox: false}}
    app:
      path: .
      command: [/bin/sh, -c, 'echo "token=$TOKEN"; exec sleep 1000']
      environment:
        TOKEN: ${secrets.APP_TOKEN}
YML
run daemon start >/dev/null 2>&1
sleep 3
rows=$(run ps --json)
if printf '%s' "$rows" | grep -q '"stackie.redis"'; then
  bad "a restore ran the stack with stackie.redis newly unsandboxed: $rows"
else
  ok "the restore refused a stack whose file newly unsandboxes stackie.redis"
fi
log=$(cat "$STACKIE_HOME/stackied.log" 2>/dev/null)
contains "the daemon says why" "$log" "would run without a sandbox"

stop_daemon "$S" 20
[ "$fails" -eq 0 ] || exit 1
