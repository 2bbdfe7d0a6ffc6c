#!/bin/sh
# End-to-end: the inner loop (issue 23) with the real stackie and stackied in a temporary
# STACKIE_HOME: env_file merged under environment (and validate saying where each variable came
# from), profiles (compose's meaning), `up BLOCK...` with what it depends on, the blocks already
# up staying up, `down BLOCK` taking its dependants with it, `restart BLOCK...`.
set -u
B=${STACKIE_BUILD_ROOT:?}/src
S=$B/stackie
T=$(mktemp -d /tmp/stackie-inner-e2e-XXXXXX)
export STACKIE_HOME=$T/home
unset XDG_RUNTIME_DIR
. "$(dirname "$0")/lib.sh"
cleanup() {
  stop_daemon "$S" 10
  rm -rf "$T"
}
trap cleanup EXIT
run() { timeout 30 "$S" "$@"; }
cd "$T"
cat > stackie.yml <<'YML'
inner:
  blocks:
    db:
      command: "echo db up; exec sleep 600"
    api:
      command: [sh, -c, 'echo "api A=$A B=$B C=$C"; exec sleep 600']
      depends_on: [db]
      env_file: [base.env, local.env]
      environment: {A: from-environment}
    web:
      command: "echo web up; exec sleep 600"
      depends_on: [api]
    debugger:
      command: "echo debugger up; exec sleep 600"
      depends_on: [db]
      profiles: [debug]
YML
cat > base.env <<'ENV'
# shared settings
A=from-base
export B="base \"quoted\""
C='literal $HOME'
ENV
printf 'B=from-local\n' > local.env

# --- env_file ----------------------------------------------------------------------------------
out=$(run validate 2>&1); check "validate" 0 $?
contains "validate: environment wins over the env files, with its position" "$out" \
  "stackie.yml:9:[0-9]*  *A=from-environment"
contains "validate: the later env file wins, with its line" "$out" "local.env:1:1  *B=from-local"
contains "validate: env file values are taken literally" "$out" "base.env:4:1  *C=literal \\\$HOME"
contains "validate: the profiled block is not started" "$out" "not started: debugger (profiles: debug)"
printf 'A=1\nB "x"\n' > bad.env
sed 's/local.env]/local.env, bad.env]/' stackie.yml > bad.yml
out=$(run validate -f bad.yml 2>&1); check "validate of a bad env file exits 1" 1 $?
equals "the bad env file's error names file:line:column" "$out" \
  "$T/bad.env:2:3: unexpected '\"' in the name 'B' (expected NAME=VALUE)"
run up -f bad.yml --no-sandbox >/dev/null 2>err; check "up of a bad env file exits 1" 1 $?
contains "up says where" "$(cat err)" "bad.env:2:3"
check "nothing was started" 1 $(run ps --json 2>&1 | grep -q '"stack":"inner"'; echo $?)

# --- subsets -----------------------------------------------------------------------------------
out=$(run up --no-sandbox api 2>&1); check "up api" 0 $?
out=$(run ps --json); names=$(printf '%s' "$out" | tr ',' '\n' | sed -n 's/.*"name":"\([a-z]*\)".*/\1/p' | grep -v '^api$\|^db$' | tr '\n' ' ')
contains "up api starts api" "$out" '"name":"api"'
contains "and db, which it depends on" "$out" '"name":"db"'
equals "and nothing else" "$names" ""
run logs api >logs 2>&1
contains "the block sees environment over env files, the later file over the earlier" \
  "$(cat logs)" 'api A=from-environment B=from-local C=literal \$HOME'

out=$(run up --no-sandbox --profile debug 2>&1); check "up --profile debug" 0 $?
out=$(run ps --json)
contains "the default set is up" "$out" '"name":"web"'
contains "with the debug profile's block" "$out" '"name":"debugger"'
run up --no-sandbox --profile nosuch >/dev/null 2>err; check "an unknown profile exits 1" 1 $?
contains "an unknown profile is named" "$(cat err)" "has the profile 'nosuch'"
run up --no-sandbox apx >/dev/null 2>err; check "an unknown block exits 1" 1 $?
contains "an unknown block is named, with a suggestion" "$(cat err)" "no block 'apx'.*did you mean 'api'"

run up --no-sandbox >/dev/null 2>&1; check "up without names" 0 $?
contains "leaves the profiled block that is up, up" "$(run ps --json)" '"name":"debugger"'

# --- down BLOCK, restart BLOCK... ----------------------------------------------------------------
out=$(run down api); check "down api" 0 $?
contains "down api stops api" "$out" "inner/api: stopped"
contains "and web, which depends on it" "$out" "inner/web: stopped"
out=$(run ps --json)
contains "db stays" "$out" '"name":"db"'
contains "the debugger stays" "$out" '"name":"debugger"'
check "api is out of the stack" 1 $(printf '%s' "$out" | grep -q '"name":"api"'; echo $?)
out=$(run restart db debugger); check "restart of two blocks" 0 $?
contains "restart names each" "$out" "debugger: running"
out=$(run down nosuch 2>&1); check "down of a block nobody has exits 1" 1 $?
out=$(run down db debugger); check "down of every block left" 0 $?
contains "is the stack's down" "$out" "stack inner is down"

done_testing
