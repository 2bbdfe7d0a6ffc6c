#!/bin/sh
# End-to-end, with the real stackie, stackied and stackie-lockbox in a temporary STACKIE_HOME:
# one stack's block may not write where another stack is decided. Stack "outer" has a block
# with `path: .`, so it writes the whole project, and the project holds a second stack,
# "inner". The block rewrites inner's stack file to run a command of its own outside any
# sandbox (platforms: {linux: {sandbox: false}}); the user's next `up` of inner would run it
# with the user's rights. That `up` is refused, naming the writer, and so is the reverse order
# (inner first, then outer), also after a daemon restart. Last, within one stack: a block
# given its project as a compose-style volume (`.:/app`) cannot rewrite its own stack file.
# And a stack brought up later that writes above what a running block is given: the block's
# next start follows no link it planted there. And a block that plants a second stack file
# (stackie-stack.yml is found before stackie.yml) beside its own: the next up is refused.
set -u
B=${STACKIE_BUILD_ROOT:?}/src
S=$B/stackie
. "$(dirname "$0")/lib.sh"

T=$(mktemp -d /tmp/stackie-nested-e2e-XXXXXX)
export STACKIE_HOME=$T/home
unset XDG_RUNTIME_DIR
cleanup() {
  for stack in outer inner vol reader srvw plant; do timeout 60 "$S" down "$stack" >/dev/null 2>&1; done
  stop_daemon "$S" 20
  rm -rf "$T"
}
trap cleanup EXIT
run() { timeout 60 "$S" "$@"; }

mkdir -p "$T/victim" "$T/outer/inner"
echo victim-secret-7321 >"$T/victim/secret"
inner_as_written() {
  cat >"$T/outer/inner/stackie.yml" <<YML
inner:
  blocks:
    web:
      command: [/bin/sh, -c, 'echo inner-as-written; exec sleep 1000']
YML
}
inner_as_written
# The stack file of STACK, whose block `writer` (path: .) writes FILE (relative to the project)
# as a stack INNER whose block BLOCK runs unsandboxed and prints the user's secret, then says
# SAID.
hostile_writer() {  # STACK FILE INNER BLOCK SAID
  cat <<YML
$1:
  blocks:
    writer:
      path: .
      command:
        - /bin/sh
        - -c
        - |
          printf '%s\n' '$3:' '  blocks:' '    $4:' \
            '      platforms: {linux: {sandbox: false}}' \
            "      command: [/bin/sh, -c, 'cat $T/victim/secret; exec sleep 1000']" \
            >$2 && echo $5
          exec sleep 1000
YML
}
hostile_writer outer inner/stackie.yml inner web rewritten >"$T/outer/stackie.yml"


refused_up() {  # DIR CHECK CHECK_MESSAGE PATTERN: `up` in DIR fails, its message has PATTERN
  (cd "$1" && run up >"$T/up.out" 2>&1)
  status=$?
  out=$(tr '\n' ' ' <"$T/up.out")
  [ "$status" -ne 0 ]
  check "$2 (exit $status)" 0 $?
  contains "$3" "$out" "$4"
}

(cd "$T/outer" && run up >"$T/up-outer.out" 2>&1)
check "outer is up" 0 $?
contains "its block rewrote inner's stack file" "$(wait_log "$S" outer/writer rewritten)" rewritten
grep -q victim "$T/outer/inner/stackie.yml"
check "inner's stack file is the block's now" 0 $?

refused_up "$T/outer/inner" "the up of inner is refused" \
  "naming the block and the stack that can write there" \
  "stack 'inner' is decided by $T/outer/inner, in $T/outer, which block 'writer' of stack 'outer'"
logs=$(run logs inner/web 2>&1 | tr '\n' ' ')
if printf '%s %s' "$out" "$logs" | grep -q victim-secret-7321; then
  bad "the rewritten stack ran the block's command: $out $logs"
else
  ok "nothing of the rewritten stack ran"
fi
note "refused: $out"

# The reverse order, from a daemon that knows nothing of outer: inner up first; then a fresh
# daemon, which knows inner from its file, refuses outer, which would write where inner is
# decided.
run down outer >/dev/null 2>&1
check "outer goes down" 0 $?
inner_as_written
stop_daemon "$S" 20
rm -f "$STACKIE_HOME/neighbours.json"
(cd "$T/outer/inner" && run up >"$T/up-inner2.out" 2>&1)
check "inner alone is up" 0 $?
contains "inner runs its own command" "$(wait_log "$S" inner/web inner-as-written)" inner-as-written
stop_daemon "$S" 20
refused_up "$T/outer" "the up of outer is refused after a daemon restart" \
  "naming what it would write" \
  "block 'writer' of stack 'outer' would write $T/outer, which holds $T/outer/inner of stack 'inner'"
equals "inner's stack file is untouched" "$(grep -c victim "$T/outer/inner/stackie.yml")" 0

# The cure the message names: outer's block writes a directory of its own.
mkdir -p "$T/outer/web"
sed -i 's|^      path: \.$|      path: ./web|; s|>inner/stackie.yml|>/dev/null|' "$T/outer/stackie.yml"
(cd "$T/outer" && run up >"$T/up-outer3.out" 2>&1)
check "with a path of its own, outer is up beside inner" 0 $?
note "$(tr '\n' ' ' <"$T/up-outer3.out")"

mkdir -p "$T/vol"
cat >"$T/vol/stackie.yml" <<'YML'
vol:
  blocks:
    writer:
      command:
        - /bin/sh
        - -c
        - |
          cd ${paths.app} || exit 1
          echo '    evil: {command: [x]}' >>stackie.yml 2>/dev/null && echo "file: written"
          mv stackie.yml old.yml 2>/dev/null && echo "file: renamed"
          echo 'PLANTED=1' >.env 2>/dev/null && echo "env: written"
          echo tried; exec sleep 1000
      volumes:
        - .:/app
YML
echo 'KEPT=1' >"$T/vol/.env"
before=$(cat "$T/vol/stackie.yml")
(cd "$T/vol" && run up >"$T/up-vol.out" 2>&1)
check "a stack with its project as a volume is up" 0 $?
out=$(wait_log "$S" vol/writer tried | tr '\n' ' ')
contains "the block ran its attempts" "$out" tried
if printf '%s' "$out" | grep -q "written\|renamed"; then
  bad "the block changed what decides the next up: $out"
else
  ok "the stack file and .env are read-only to it, and cannot be renamed away"
fi
equals "the stack file is as the user wrote it" "$(cat "$T/vol/stackie.yml")" "$before"
equals ".env is as the user wrote it" "$(cat "$T/vol/.env")" "KEPT=1"

mkdir -p "$T/reader" "$T/srvw" "$T/srv/data"
echo data-as-written >"$T/srv/data/secret"
cat >"$T/reader/stackie.yml" <<YML
reader:
  blocks:
    r:
      command: [/bin/sh, -c, 'echo "read: \$(cat $T/srv/data/secret)"; exec sleep 1000']
      volumes:
        data: {host: $T/srv/data, read_only: true}
YML
cat >"$T/srvw/stackie.yml" <<YML
srvw:
  blocks:
    w:
      command:
        - /bin/sh
        - -c
        - |
          mv $T/srv/data $T/srv/data.was && ln -s $T/victim $T/srv/data && echo planted
          exec sleep 1000
      volumes:
        srv: {host: $T/srv}
YML
(cd "$T/reader" && run up >/dev/null 2>&1)
check "the reader stack is up" 0 $?
contains "it reads its volume" "$(wait_log "$S" reader/r 'read:')" "read: data-as-written"
(cd "$T/srvw" && run up >/dev/null 2>&1)
check "a stack that writes above the reader's volume comes up after it" 0 $?
contains "its block planted a link in place of the volume" "$(wait_log "$S" srvw/w planted)" planted
run restart reader/r >"$T/restart.out" 2>&1
out=$(cat "$T/restart.out"; run logs reader/r 2>&1)
if printf '%s' "$out" | grep -q victim-secret-7321; then
  bad "the restarted reader followed the planted link: $(printf '%s' "$out" | tr '\n' ' ')"
else
  ok "the restarted reader did not follow the planted link"
fi
contains "its start names the link" "$(printf '%s' "$out" | tr '\n' ' ')" \
  "$T/srv/data: is a symbolic link"

mkdir -p "$T/plant"
hostile_writer plant stackie-stack.yml plant writer planted >"$T/plant/stackie.yml"
(cd "$T/plant" && run up >/dev/null 2>&1)
check "the plant stack is up" 0 $?
contains "its block planted a stack file of its own" "$(wait_log "$S" plant/writer planted)" planted
run down plant >/dev/null 2>&1
refused_up "$T/plant" "the next up, which finds the planted file first, is refused" \
  "saying a block may have made it" \
  "two stack files in one project: a block may have made $T/plant/stackie-stack.yml"
if run logs plant/writer 2>&1 | grep -q victim-secret-7321; then
  bad "the planted stack ran"
else
  ok "the planted stack did not run"
fi
done_testing
