#!/bin/sh
# End-to-end: `network: localhost` forwarding (DESIGN.md §6) through a real stackied and real
# lockbox sandboxes, with python3 peers (tests/e2e/net_peer.py) as blocks and clients.
# serves from the host, consumes between sandboxes and from an unsandboxed block, half-close,
# reset, 1000 concurrent connections, backpressure (the daemon's memory stays flat), port
# allocation (two stacks on one port; strict stacks name the holder), isolation.
set -u
B=${STACKIE_BUILD_ROOT:?}/src
S=$B/stackie
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d /tmp/stackie-net-e2e-XXXXXX)
# STACKIE_HOME beside $T: no block may be given the daemon's home to write. The blocks' project
# is $T/peer (`path: ../peer`), beside the stacks' directories: a block that could write where
# another stack's file is would have that stack refused (stack_neighbours.h).
H=$(mktemp -d /tmp/stackie-net-e2e-home-XXXXXX)
export STACKIE_HOME=$H/home
unset XDG_RUNTIME_DIR
. "$(dirname "$0")/lib.sh"
holder=
cleanup() {
  [ -n "$holder" ] && kill "$holder" 2>/dev/null
  stop_daemon "$S" 10
  rm -rf "$T" "$H"
}
trap cleanup EXIT
run() { timeout 60 "$S" "$@"; }
peer() { timeout 60 python3 "$T/peer/net_peer.py" "$@"; }
# The host port of BLOCK's first served port in STACK, from `stackie ps --json`.
host_port() {
  run ps --json | python3 -c '
import json, sys
for row in json.load(sys.stdin)["blocks"]:
    if row["stack"] == sys.argv[1] and row["name"] == sys.argv[2]:
        print(row["ports"][0]["host"].split(":")[1])' "$1" "$2"
}
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$(cat "$STACKIE_HOME/stackied.pid")/status"; }

mkdir -p "$T/a" "$T/b" "$T/strict" "$T/peer"
cp "$HERE/net_peer.py" "$T/peer/"
# A stranger holds a host port for the strict-mode check.
strange_port=$(python3 "$T/peer/net_peer.py" free-port)
python3 "$T/peer/net_peer.py" hold "$strange_port" "$T/holder.pid" & holder=$!
for i in $(seq 50); do [ -s "$T/holder.pid" ] && break; sleep 0.1; done

stack() {  # stack NAME ECHO_PORT: the stack file of the main test stack
  cat <<YML
$1:
  blocks:
    echo:
      path: ../peer
      command: [python3, net_peer.py, echo-server, "$2"]
      serves:
        echo: {port: $2, type: echo}
      health:
        tcp: echo
        interval: 200ms
    sink:
      path: ../peer
      command: [python3, net_peer.py, sink-server, "7100", "3"]
      serves:
        sink: {port: 7100, type: sink}
      health:
        tcp: sink
        interval: 200ms
    dead:
      command: [sleep, "3600"]
      serves:
        nothing: {port: 7200, type: nothing}
    consumer:
      path: ../peer
      command: [python3, net_peer.py, consumer, "\${consumes.echo.HOST}", "\${consumes.echo.PORT}", "$1-consumer.out"]
      consumes:
        echo: echo
    hostside:
      path: ../peer
      command: [python3, net_peer.py, consumer, "\${consumes.echo.HOST}", "\${consumes.echo.PORT}", "$1-hostside.out"]
      consumes:
        echo: echo
      platforms:
        linux: {sandbox: false}
YML
}
stack neta 7000 > "$T/a/stackie.yml"
stack netb 7000 > "$T/b/stackie.yml"
cat > "$T/strict/stackie.yml" <<YML
strict:
  ports: strict
  blocks:
    echo:
      path: ../peer
      command: [python3, net_peer.py, echo-server, "7000"]
      serves:
        echo: {port: 7000, type: echo}
YML
sed -e "s/^strict:/stranger:/" -e "s/7000/$strange_port/g" "$T/strict/stackie.yml" > "$T/strict/stranger.yml"

cd "$T/a" && run up >"$T/up.out" 2>&1; check "up of the network stack" 0 $?
cat "$T/up.out" | grep -v "^ " | tail -3
a_echo=$(host_port neta echo)
check "ps shows the declared port on the host when free" "127.0.0.1:7000->7000" \
  "$(run ps neta | awk '$1 == "echo" {print $7}')"

check "serves: host -> block, half-close both ways (1 MiB)" ok "$(peer client-halfclose 127.0.0.1 "$a_echo" 1048576)"
check "serves: 1000 concurrent connections" "ok 1000" "$(peer client-many 127.0.0.1 "$a_echo" 1000)"
check "a refused connection inside is a reset outside" reset "$(peer client-reset 127.0.0.1 "$(host_port neta dead)")"

for i in $(seq 50); do [ -s "$T/peer/neta-consumer.out" ] && [ -s "$T/peer/neta-hostside.out" ] && break; sleep 0.2; done
check "consumes: a sandboxed block reaches its provider at its own 127.0.0.1:PORT" \
  "ok 127.0.0.1:7000" "$(cat "$T/peer/neta-consumer.out" 2>/dev/null)"
check "consumes: an unsandboxed block reaches it through the host port" \
  "ok 127.0.0.1:$a_echo" "$(cat "$T/peer/neta-hostside.out" 2>/dev/null)"

# Backpressure: the sink reads nothing for 3 s while 256 MiB are sent at it.
before=$(rss_kib)
peer client-sink 127.0.0.1 "$(host_port neta sink)" 268435456 >"$T/sink.out" & sender=$!
peak=$before
while kill -0 "$sender" 2>/dev/null; do
  now=$(rss_kib); [ "$now" -gt "$peak" ] && peak=$now; sleep 0.1
done
check "backpressure: every byte arrives" "count 268435456" "$(cat "$T/sink.out")"
grew=$(( (peak - before) / 1024 ))
check "backpressure: the daemon's RSS grew by less than 16 MiB (grew $grew MiB)" yes \
  "$([ "$grew" -lt 16 ] && echo yes || echo no)"

# Isolation, from inside the echo block.
check "only lo inside" lo "$(run exec echo -- python3 net_peer.py interfaces)"
check "a host port it did not consume is unreachable" refused \
  "$(run exec echo -- python3 net_peer.py try-connect 127.0.0.1 "$strange_port")"
check "another block's port is unreachable (sink, not consumed)" refused \
  "$(run exec echo -- python3 net_peer.py try-connect 127.0.0.1 7100)"
check "the consumer reaches only what it consumes" refused \
  "$(run exec consumer -- python3 net_peer.py try-connect 127.0.0.1 7100)"
check "the forward's host port is not reachable from inside either" refused \
  "$(run exec consumer -- python3 net_peer.py try-connect 127.0.0.1 "$(host_port neta sink)")"

# A second stack with the same declared port gets the next free one; both work.
cd "$T/b" && run up >/dev/null 2>&1; check "up of a second stack on the same port" 0 $?
b_echo=$(host_port netb echo)
check "the second stack's echo moved to another host port" yes "$([ "$b_echo" != "$a_echo" ] && echo yes || echo no)"
check "first stack still answers" ok "$(peer client-halfclose 127.0.0.1 "$a_echo" 1000)"
check "second stack answers" ok "$(peer client-halfclose 127.0.0.1 "$b_echo" 1000)"
cd "$T/a" && run up >/dev/null 2>&1; check "re-up of an unchanged stack" 0 $?
check "re-up keeps the host port" "$a_echo" "$(host_port neta echo)"

# Strict stacks: a taken port is an error that names its holder, before anything starts.
cd "$T/strict" && run up >/dev/null 2>"$T/strict.err"; check "strict: taken port exits 1" 1 $?
contains "strict: names the stackie holder with the position" "$(cat "$T/strict.err")" \
  "stackie.yml:8:22: host port 7000 for 'echo' (serves.echo) is in use by block 'echo' (serves.echo) of stack 'neta'"
run up -f stranger.yml >/dev/null 2>"$T/stranger.err"; check "strict: port of a stranger exits 1" 1 $?
contains "strict: names the stranger's pid" "$(cat "$T/stranger.err")" "is in use by pid $holder (python3)"
check "strict: nothing of the failed stack runs" "" "$(run ps strict 2>/dev/null | awk 'NR > 1')"

# down frees the host ports at once.
cd "$T/b" && run down >/dev/null; check "down" 0 $?
check "down closes the host listener" refused "$(peer try-connect 127.0.0.1 "$b_echo")"
cd "$T/a" && run down >/dev/null

done_testing
