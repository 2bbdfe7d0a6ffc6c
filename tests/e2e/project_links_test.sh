#!/bin/sh
# End-to-end, with the real stackie, stackied and stackie-lockbox in a temporary STACKIE_HOME:
# a link a block plants in the project is never followed by the host on a later start.
# Block "planter" may write the whole project (path: .); block "reader" is given the project's
# ./conf read-only (a compose-style host volume) and block "nested" has ./nested as its own
# project. The planter replaces both directories with links to the user's files ($T/victim).
# On the next `up`, following them would hand the user's files to the other blocks: the load
# is refused, naming the link, and nothing of the victim reaches any block's log.
set -u
B=${STACKIE_BUILD_ROOT:?}/src
S=$B/stackie
. "$(dirname "$0")/lib.sh"

T=$(mktemp -d /tmp/stackie-links-e2e-XXXXXX)
export STACKIE_HOME=$T/home
unset XDG_RUNTIME_DIR
cleanup() {
  timeout 60 "$S" down links >/dev/null 2>&1
  stop_daemon "$S" 20
  rm -rf "$T"
}
trap cleanup EXIT
run() { timeout 60 "$S" "$@"; }

mkdir -p "$T/victim" "$T/app/conf" "$T/app/nested" "$T/app/defs" "$T/app/nest/defs"
echo "# the project's own definitions" >"$T/app/defs/extra.yml"
echo "# more of them" >"$T/app/nest/defs/extra2.yml"
echo victim-secret-5150 >"$T/victim/secret"
echo conf-as-written >"$T/app/conf/secret"
echo nested-as-written >"$T/app/nested/secret"
cat >"$T/app/stackie.yml" <<YML
links:
  sources: [./defs, ./nest/defs]
  blocks:
    planter:
      path: .
      command:
        - /bin/sh
        - -c
        - |
          if echo "sandbox: {read_write: [/]}" >>defs/extra.yml 2>/dev/null; then
            echo "defs: written"; else echo "defs: read-only"; fi
          if mv nest nest.x 2>/dev/null; then
            mkdir -p nest/defs && echo "# the block's own" >nest/defs/extra2.yml
            echo "nest: swapped"; else echo "nest: kept"; fi
          while [ ! -e go ]; do sleep 0.1; done
          for d in conf nested; do
            [ -L \$d ] || { mv \$d \$d.was && ln -s $T/victim \$d; }
          done
          echo planted; exec sleep 1000
    reader:
      command: [/bin/sh, -c, 'echo "read: \$(cat \${paths.app}/secret)"; exec sleep 1000']
      volumes:
        - ./conf:/etc/app:ro
    nested:
      path: ./nested
      command: [/bin/sh, -c, 'echo "nested: \$(cat secret)"; exec sleep 1000']
YML
cd "$T/app" || exit 1


run up >"$T/up1.out" 2>&1
check "first up" 0 $?
contains "the reader read the project's conf" "$(wait_log "$S" links/reader 'read:' | tr '\n' ' ')" \
  "read: conf-as-written"
contains "the nested block read its own project" "$(wait_log "$S" links/nested 'nested:' | tr '\n' ' ')" \
  "nested: nested-as-written"
touch "$T/app/go"
contains "the planter planted its links" "$(wait_log "$S" links/planter planted | tr '\n' ' ')" planted
contains "the project's definitions (sources) are read-only to it" \
  "$(wait_log "$S" links/planter 'defs:' | tr '\n' ' ')" "defs: read-only"
contains "a directory on the way to nested definitions cannot be swapped" \
  "$(wait_log "$S" links/planter 'nest:' | tr '\n' ' ')" "nest: kept"
equals "the nested definitions are the project's" "$(cat "$T/app/nest/defs/extra2.yml")" \
  "# more of them"
[ -L "$T/app/conf" ] && [ -L "$T/app/nested" ]
check "the links are in the project now" 0 $?

run down links >/dev/null 2>&1
run up >"$T/up2.out" 2>&1
status=$?
out=$(tr '\n' ' ' <"$T/up2.out")
[ "$status" -ne 0 ]
check "the next up is refused (exit $status)" 0 $?
contains "naming the link" "$out" "$T/app/conf.*symbolic link\|$T/app/nested.*symbolic link"
contains "at the volume's or the path's position" "$out" "stackie.yml:[0-9]*:[0-9]*:"
logs=$( (run logs links/reader; run logs links/nested) 2>/dev/null | tr '\n' ' ')
if printf '%s' "$logs" | grep -q victim-secret-5150; then
  bad "a block read the user's file through the planted link: $logs"
else
  ok "no block read the user's file through the planted link"
fi

note "refused: $out"

# Planted after the load: the planter plants at once, and the nested block starts after it
# (depends_on). The loader saw no link; the lockbox, starting the nested block, refuses it.
rm "$T/app/nested" && mv "$T/app/nested.was" "$T/app/nested"
rm "$T/app/conf" && mv "$T/app/conf.was" "$T/app/conf"
sed -i -e 's/while \[ ! -e go \]; do sleep 0.1; done/rm -f go/' \
  -e 's|^      path: \.$|      path: .\n      health: {exec: [/bin/test, -L, nested], interval: 100ms}|' \
  -e 's|^      path: ./nested|      path: ./nested\n      depends_on: {planter: {condition: healthy}}|' \
  "$T/app/stackie.yml"
rm -f "$T/app/go"
run up >"$T/up3.out" 2>&1
status=$?
out=$(tr '\n' ' ' <"$T/up3.out")
note "up after a late plant (exit $status): $out"
nested_log=$(run logs links/nested 2>&1 | tr '\n' ' ')
if printf '%s' "$nested_log $out" | grep -q victim-secret-5150; then
  bad "the nested block read the user's file through a link planted after the load: $nested_log"
else
  ok "a link planted after the load is not followed either"
fi
contains "the nested block's start names the link" "$out $nested_log" \
  "$T/app/nested: is a symbolic link"

# The lockbox holds the line too, whatever the loader saw: a policy that binds the project's
# ./conf, with the project named as a root whose links are not followed, fails its start.
L=$B/stackie-lockbox
"$L" --ro "$T/app/conf" --link-free-root "$T/app" -- /bin/cat "$T/app/conf/secret" \
  >"$T/lockbox.out" 2>&1
status=$?
out=$(tr '\n' ' ' <"$T/lockbox.out")
[ "$status" -ne 0 ]
check "lockbox refuses a bind through a link below a link-free root (exit $status)" 0 $?
contains "lockbox names the link" "$out" "$T/app/conf"
if printf '%s' "$out" | grep -q victim-secret-5150; then
  bad "lockbox bound the link's target: $out"
else
  ok "lockbox did not bind the link's target"
fi
run down links >/dev/null 2>&1
rm "$T/app/conf" && mv "$T/app/conf.was" "$T/app/conf"
out=$("$L" --ro "$T/app/conf" --link-free-root "$T/app" -- /bin/cat "$T/app/conf/secret" 2>&1)
equals "lockbox binds a real directory below the root" "$out" conf-as-written

stop_daemon "$S" 20
done_testing
