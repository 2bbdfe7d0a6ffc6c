#!/bin/sh
# End-to-end, with the real stackie, stackied and stackie-lockbox in a temporary STACKIE_HOME:
# a file the next `up` would read that did not exist at the last one. The project keeps its
# secret in .dev.vars; `.env` comes before it and does not exist, so the read-only overlays
# have nothing to cover. The sandboxed block `writer` (path: .) makes `.env`, giving MSG a value
# of its own, which would reach the unsandboxed block `reader`. The next `up` is refused,
# naming the file and the block, also after a chmod of it; a `.env` the user makes with the
# stack down is read.
set -u
B=${STACKIE_BUILD_ROOT:?}/src
S=$B/stackie
. "$(dirname "$0")/lib.sh"

T=$(mktemp -d /tmp/stackie-planted-e2e-XXXXXX)
export STACKIE_HOME=$T/home
unset XDG_RUNTIME_DIR
cleanup() {
  timeout 60 "$S" down plant >/dev/null 2>&1
  stop_daemon "$S" 20
  rm -rf "$T"
}
trap cleanup EXIT
run() { timeout 60 "$S" "$@"; }

mkdir -p "$T/app"
cd "$T/app" || exit 1
echo 'MSG=from-the-user' >.dev.vars
chmod 600 .dev.vars
cat >stackie.yml <<'YML'
plant:
  blocks:
    writer:
      path: .
      command:
        - /bin/sh
        - -c
        - |
          if [ ! -e .env ]; then echo 'MSG=planted-by-the-block' >.env && echo planted; fi
          exec sleep 1000
    reader:
      platforms: {linux: {sandbox: false}}
      environment: {MSG: '${secrets.MSG}'}
      command: [/bin/sh, -c, 'echo "msg=$MSG"; exec sleep 1000']
YML

run up >"$T/up1.out" 2>&1
check "plant is up" 0 $?
contains "the reader has the user's value" "$(wait_log "$S" plant/reader msg=)" "msg=from-the-user"
contains "the sandboxed block made .env" "$(wait_log "$S" plant/writer planted)" planted
[ -f .env ] && grep -q planted-by-the-block .env
check ".env holds the block's value" 0 $?

run down plant >/dev/null 2>&1
check "down" 0 $?
run up >"$T/up2.out" 2>&1
status=$?
[ "$status" -ne 0 ]
check "the next up is refused (exit $status)" 0 $?
contains "naming the file, the block and the cure" "$(tr '\n' ' ' <"$T/up2.out")" \
  "stack 'plant': $T/app/.env did not exist at its last up and was made while block 'writer' could write $T/app: an up does not read what a block may have written. Read it; if it is yours, write it anew (rm -rf $T/app/.env.new && cp $T/app/.env $T/app/.env.new && mv $T/app/.env.new $T/app/.env) and up again; if not, remove it"
if run logs plant/reader 2>/dev/null | grep -q planted-by-the-block; then
  bad "the block's value reached the unsandboxed reader"
else
  ok "the block's value reached nothing"
fi

# A chmod (which the loader's own warning asks for) does not make it the user's.
chmod 600 .env
run up >"$T/up2b.out" 2>&1
status=$?
[ "$status" -ne 0 ]
check "a chmod of the planted file does not make it read (exit $status)" 0 $?

# The user's own .env, made with the stack down: read.
rm -f .env
echo 'MSG=the-users-env' >.env
chmod 600 .env
run up >"$T/up3.out" 2>&1
check "a .env made with the stack down is read" 0 $?
note "$(tr '\n' ' ' <"$T/up3.out")"
contains "the reader has it" "$(wait_log "$S" plant/reader the-users-env)" "msg=the-users-env"
contains "and the block cannot rewrite it now (it exists: read-only)" \
  "$(run exec writer -- /bin/sh -c 'echo x >>.env 2>&1 || echo refused' 2>&1)" "refused\|Read-only"

done_testing
