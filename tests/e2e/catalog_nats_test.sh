#!/bin/sh
# End-to-end: stackie.nats with the host's real nats-server (Debian: nats-server). No NATS
# client is packaged, so nats_text.py speaks the raw client protocol (CONNECT, SUB, PUB, MSG)
# from the host through the forwarded port and from inside the block through `stackie exec`;
# a JetStream stream created through the JetStream API survives down/up and kill -9 of stackied
# with its messages (the store is in the block's volume).
set -u
B=${STACKIE_BUILD_ROOT:?}/src
S=$B/stackie
. "$(dirname "$0")/lib.sh"
if ! [ -x /usr/sbin/nats-server ] && ! command -v nats-server >/dev/null; then
  skip_all "no nats-server on this host (apt-get install nats-server)"
fi
. "$(dirname "$0")/catalog_lib.sh"
CLIENT=$(cat "$(dirname "$0")/nats_text.py")
nats() { timeout 20 python3 -c "$CLIENT" "$PORT" "$@"; }
exec_nats() { run exec stackie.nats -- python3 -c "$CLIENT" 4222 "$@"; }
# The field PATH (dotted; a ".data" field is base64-decoded) of the JSON document on stdin, or
# of each reply when there are several, one a line.
field() {
  python3 -c '
import base64, json, sys
text = sys.stdin.read()
try:
    docs = [json.loads(text)]
except ValueError:
    docs = [json.loads(line) for line in text.splitlines() if line.strip()]
for value in docs:
    for key in sys.argv[1].split("."):
        value = value.get(key, {}) if isinstance(value, dict) else {}
    print(base64.b64decode(value).decode() if sys.argv[1].endswith(".data") else value)' "$1"
}
VOLUME=$STORAGE/volumes/events/nats/data

cat > "$T/stackie-stack.yml" <<'YML'
events:
  blocks:
    stackie.nats: {}
YML
out=$(up 2>&1); check "up of stackie.nats" 0 $?
equals "running and healthy" "$(state_of stackie.nats)" "running healthy"
PORT=$(host_port stackie.nats nats)
[ -n "$PORT" ]; check "a forwarded host port ($PORT)" 0 $?
MONITOR=$(host_port stackie.nats monitor)
out=$(curl -sf "http://127.0.0.1:$MONITOR/varz" | field jetstream.config.store_dir)
equals "monitoring port: JetStream's store is the block's volume" "$out" "$VOLUME/jetstream"

out=$(nats "pubsub greet.host hello from the host"); check "host: CONNECT/SUB/PUB" 0 $?
equals "host: the message comes back" "$out" "greet.host hello from the host"
out=$(exec_nats "pubsub greet.exec hello from exec"); check "exec: the same client inside" 0 $?
equals "exec: the message comes back" "$out" "greet.exec hello from exec"

# --- JetStream: a file-backed stream and two acknowledged messages ---------------------------
out=$(nats 'request $JS.API.STREAM.CREATE.ORDERS {"name":"ORDERS","subjects":["orders.>"],"storage":"file"}' |
  field did_create)
equals "a file-backed stream ORDERS" "$out" "True"
out=$(nats "request orders.new first order"); equals "publish acknowledged" "$out" '{"stream":"ORDERS", "seq":1}'
out=$(exec_nats "request orders.new second order")
equals "exec publishes to the stream too" "$out" '{"stream":"ORDERS", "seq":2}'
ls "$VOLUME/jetstream/\$G/streams/ORDERS" >/dev/null 2>&1
check "the stream's files are in the block's volume" 0 $?

messages() { nats 'request $JS.API.STREAM.INFO.ORDERS {}' | field state.messages; }
message() { nats "request \$JS.API.STREAM.MSG.GET.ORDERS {\"seq\":$1}" | field message.data; }
out=$(down 2>&1); check "down" 0 $?
out=$(cat $(find "$STACKIE_HOME" -name 'std*.log' -path '*nats*') 2>&1)
contains "a clean stop on SIGTERM" "$out" "JetStream Shutdown"
out=$(up 2>&1); check "up again" 0 $?
PORT=$(host_port stackie.nats nats)
equals "the stream survived down and up with both messages" "$(messages)" "2"
equals "the first message's body" "$(message 1)" "first order"

out=$(nats "request orders.new third order"); equals "a publish just before the crash" "$out" '{"stream":"ORDERS", "seq":3}'
out=$(kill_daemon); equals "no process of the stack survives kill -9 of stackied" "$out" ""
out=$(up 2>&1); check "up after the crash" 0 $?
PORT=$(host_port stackie.nats nats)
equals "every acknowledged message is back" "$(messages)" "3"
equals "the last one's body" "$(message 3)" "third order"
out=$(down 2>&1); check "final down" 0 $?
done_testing
