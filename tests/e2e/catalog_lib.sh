# Sourced by the catalog blocks' end-to-end scripts (tests/e2e/catalog_*_test.sh), after lib.sh:
# a temporary STACKIE_HOME with one stack in $T, and the checks every catalog block shares.
# The caller sets S (the stackie binary) and writes $T/stackie-stack.yml.
if [ "$(id -u)" = 0 ]; then
  bail_out "run as an unprivileged user (CI runs this as stackie-test): a sandbox that only works as root proves nothing"
fi
T=$(mktemp -d /tmp/stackie-catalog-e2e-XXXXXX)
export STACKIE_HOME=$T/home
unset XDG_RUNTIME_DIR
STORAGE=$STACKIE_HOME/storage
cleanup() {
  (cd "$T" && timeout 60 "$S" down >/dev/null 2>&1)
  stop_daemon "$S" 20
  rm -rf "$T"
}
trap cleanup EXIT
run() { timeout 60 "$S" "$@"; }
up() { (cd "$T" && timeout 240 "$S" up); }
down() { (cd "$T" && timeout 120 "$S" down); }
# "state health" of BLOCK from `stackie ps --json`.
state_of() {
  run ps --json | python3 -c '
import json, sys
for row in json.load(sys.stdin)["blocks"]:
    if row["name"] == sys.argv[1]:
        print(row["state"], row["health"])' "$1"
}
# The host port of BLOCK's served port NAME (ports: [{name, host: "127.0.0.1:PORT"}]).
host_port() {
  run ps --json | python3 -c '
import json, sys
for row in json.load(sys.stdin)["blocks"]:
    if row["name"] == sys.argv[1]:
        for port in row["ports"]:
            if port["name"] == sys.argv[2]:
                print(port["host"].rsplit(":", 1)[1])' "$1" "$2"
}
# Prints "secret in the command line of PID" for each process whose argv holds SECRET, and
# "scanned N" (the control: the scan read command lines at all).
scan_cmdlines() {
  SECRET=$1 python3 -c '
import os
secret, scanned = os.environ["SECRET"].encode(), 0
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        line = open(f"/proc/{pid}/cmdline", "rb").read()
    except OSError:
        continue
    scanned += 1
    if secret in line:
        print("secret in the command line of", pid, line.replace(b"\0", b" ")[:200])
print("scanned", "many" if scanned > 5 else scanned)'
}
# Kills stackied with SIGKILL and waits (6 s at most) until no process of its tree is left;
# prints what is left.
kill_daemon() {
  daemon=$(cat "$STACKIE_HOME/stackied.pid")
  tree=$(pgrep -u "$(id -u)" -f "$STORAGE" | tr '\n' ' ')
  kill -9 "$daemon"
  for _ in $(seq 30); do
    left=
    for pid in $tree; do  # a zombie is dead, waiting for the machine's init to reap it
      state=$(sed 's/^.*) \([A-Za-z]\) .*/\1/' "/proc/$pid/stat" 2>/dev/null) || continue
      [ -n "$state" ] && [ "$state" != Z ] && left="$left $pid"
    done
    [ -z "$left" ] && return 0
    sleep 0.2
  done
  echo "left:$left"
}
# Polls COMMAND... (up to 15 s) until it exits 0.
eventually() {
  for _ in $(seq 60); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.25
  done
  return 1
}
