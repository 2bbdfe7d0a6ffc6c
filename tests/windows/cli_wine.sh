#!/usr/bin/env bash
# stackie.exe under Wine with no daemon (issue 18, the CLI half): validate fails as on Linux,
# the verbs Windows lacks refuse by name with exit 2, `ps` says the daemon is not running,
# `up` runs the stackied.exe beside it and reports how it exited, and `daemon install` writes
# the per-user Run value that `wine reg query` shows and `uninstall` removes (both idempotent).
#   cli_wine.sh STACKIE.EXE        (run by wine-run.sh: WINEPREFIX is this test's own)
# Prints one line per check and exits 1 when one failed.
set -uo pipefail
exe=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/home" "$work/stack"
cp "$exe" "$work/bin/stackie.exe"
# A stand-in for stackied.exe beside it: install only records its path, and `up` runs it (a
# stackie.exe given no verb prints its usage and exits 2).
cp "$exe" "$work/bin/stackied.exe"
# The home as a Unix path: Wine's Z: drive is /, so "/var/..." names the same directory on the
# current drive.
export STACKIE_HOME=$work/home
run_key='HKCU\Software\Microsoft\Windows\CurrentVersion\Run'
n=0 failed=0
out="" rc=0
stackie() {
  out=$(cd "$work/stack" && timeout 60 wine "$work/bin/stackie.exe" "$@" 2>&1 | tr -d '\r')
  rc=${PIPESTATUS[0]}
}
result() {  # $1 = 0 ok / 1 not ok, $2 = description
  n=$((n + 1))
  if [ "$1" = 0 ]; then
    echo "ok $n - $2"
  else
    echo "not ok $n - $2"
    printf '#   exit %s, output:\n' "$rc"
    printf '%s\n' "$out" | sed 's/^/#     /'
    failed=$((failed + 1))
  fi
}
# check DESCRIPTION EXPECTED_EXIT TEXT: the last command exited so and printed TEXT.
check() {
  [ "$rc" = "$2" ] && [[ "$out" == *"$3"* ]]
  result $? "$1"
}

stackie --version
check "--version" 0 "stackie "

printf 'demo:\n  blocks:\n    web:\n      command: 42\n' > "$work/stack/bad.yml"
stackie validate -f bad.yml
check "validate of command: 42 exits 1 naming FILE:LINE:COLUMN" 1 \
  "bad.yml:4:16: 'command' must be a string or a list of strings"
printf 'demo:\n  blocks:\n    web:\n      command: [./missing.exe]\n' > "$work/stack/stackie.yml"
stackie validate
check "validate of a missing command exits 1" 1 "block 'web': command not found"

stackie ps
check "ps with no daemon exits 3 saying so" 3 "the daemon is not running"
stackie ps --json
check "ps --json with no daemon exits 3 saying so" 3 "the daemon is not running"
stackie up
check "up runs the stackied.exe beside it and reports its exit" 3 \
  "stackied.exe exited with status 2"

for verb in top ui watch mcp doctor; do
  stackie "$verb"
  check "$verb is refused by name with exit 2" 2 \
    "stackie $verb: not available on Windows yet (docs/platforms.md)"
done
stackie up --watch
check "up --watch is refused before anything starts" 2 "stackie up --watch: not available"
# volume rm through base's remove_tree (safe_open_windows.cc). A plain tree goes. A Unix symlink
# a block planted in its volume is what Wine shows as a plain directory whose removal would act
# on its target: refused, naming it, and what it points to stays. (On Windows a link is a
# reparse point, removed as itself.)
volumes=$work/home/storage/volumes
mkdir -p "$volumes/plain/data/sub" "$volumes/demo/data" "$work/outside"
echo data >"$volumes/plain/data/sub/file"
echo keep >"$work/outside/secret"
ln -s "$work/outside" "$volumes/demo/data/link"
stackie volume rm plain --yes
check "volume rm removes a stack's volumes" 0 "removed "
[ ! -e "$volumes/plain" ]
result $? "the tree is gone"
stackie volume rm demo --yes
check "volume rm refuses a planted link, naming it" 1 "demo/data/link: is a link"
[ "$(cat "$work/outside/secret" 2>&1)" = keep ]
result $? "what the planted link points to is untouched"

# The Run value: written, shown by reg, idempotent, removed.
bin_windows="Z:${work//\//\\}\\bin\\stackied.exe"
reg_query() { wine reg query "$run_key" /v Stackie 2>&1 | tr -d '\r'; }
stackie daemon install --socket-activation
check "daemon install --socket-activation is a usage error" 2 "not available on Windows"
stackie daemon install
check "daemon install writes the Run value" 0 "wrote $run_key\\Stackie"
out=$(reg_query) rc=0
check "reg query shows Stackie with the quoted path of stackied.exe" 0 "\"$bin_windows\""
stackie daemon install
check "daemon install again: already installed" 0 "already installed"
stackie daemon status
check "daemon status says the autostart is installed" 3 "autostart: $run_key\\Stackie runs"
stackie daemon uninstall
check "daemon uninstall removes it" 0 "removed $run_key\\Stackie"
out=$(reg_query)
[[ "$out" != *"stackied.exe"* ]]
result $? "reg query no longer shows it"
stackie daemon uninstall
check "daemon uninstall again: nothing to remove" 0 "nothing to remove"
stackie daemon status
check "daemon status says the autostart is not installed" 3 "autostart: not installed"

echo "1..$n"
[ "$failed" = 0 ]
