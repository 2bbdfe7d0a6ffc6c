#!/bin/sh
# End-to-end: stackie.rabbitmq with the host's real RabbitMQ (Debian: rabbitmq-server) and two
# clients: rabbitmqctl inside the block (`stackie exec`, the Erlang cookie in the volume), and
# from the host python3-pika over the forwarded AMQP port and curl on the management HTTP API
# (the port moved by the stack: the block's config is what the node reads). The default user
# comes from vars and the secrets file, in no command line; epmd runs inside the block's
# network only (ss on the host, before and after); a durable queue's persistent message
# survives down and up.
set -u
B=${STACKIE_BUILD_ROOT:?}/src
S=$B/stackie
. "$(dirname "$0")/lib.sh"
if ! [ -x /usr/lib/rabbitmq/bin/rabbitmq-server ] && ! command -v rabbitmq-server >/dev/null; then
  skip_all "no rabbitmq-server on this host (apt-get install rabbitmq-server)"
fi
python3 -c 'import pika' 2>/dev/null || skip_all "no python3-pika on this host (apt-get install python3-pika)"
command -v ss >/dev/null || skip_all "no ss on this host (apt-get install iproute2)"
. "$(dirname "$0")/catalog_lib.sh"

cat > "$T/stackie-stack.yml" <<'YML'
queues:
  blocks:
    stackie.rabbitmq:
      vars: {user: shop}
      serves: {management: {port: 15680}}
YML
PW=rabbit-e2e-$$
printf 'secrets:\n  RABBITMQ_PASSWORD: %s\n' "$PW" > "$T/stackie-stack.secrets.yml"
# amqp USER PASSWORD ACTION...: publish QUEUE BODY... (durable queue, persistent messages,
# publisher confirms) | get QUEUE (one message, acked; "empty" when none).
cat > "$T/amqp.py" <<'PY'
import sys
import pika

port, user, password, action, queue = sys.argv[1:6]
params = pika.ConnectionParameters("127.0.0.1", int(port), "/",
                                   pika.PlainCredentials(user, password),
                                   connection_attempts=3, retry_delay=1)
connection = pika.BlockingConnection(params)
channel = connection.channel()
channel.queue_declare(queue=queue, durable=True)
if action == "publish":
    channel.confirm_delivery()
    for body in sys.argv[6:]:
        channel.basic_publish("", queue, body.encode(),
                              pika.BasicProperties(delivery_mode=2), mandatory=True)
    print("published", len(sys.argv) - 6)
else:
    method, _, body = channel.basic_get(queue)
    if method is None:
        print("empty")
    else:
        channel.basic_ack(method.delivery_tag)
        print(body.decode())
connection.close()
PY
amqp() { timeout 60 python3 "$T/amqp.py" "$AMQP" shop "$PW" "$@" 2>&1; }
api() { curl -sS --max-time 20 -u "shop:$PW" "http://127.0.0.1:$MGMT$1"; }
epmd_listeners() { ss -ltnH 'sport = :4369' | sort; }

epmd_before=$(epmd_listeners)
out=$(up 2>&1); check "up of stackie.rabbitmq" 0 $?
contains "up names the stack" "$out" "stack queues is up"
equals "running and healthy" "$(state_of stackie.rabbitmq)" "running healthy"
AMQP=$(host_port stackie.rabbitmq amqp)
MGMT=$(host_port stackie.rabbitmq management)
[ -n "$AMQP" ] && [ -n "$MGMT" ]; check "forwarded host ports (amqp $AMQP, management $MGMT)" 0 $?

# --- Erlang stays in the block: epmd in its network only, its cookie and name its own ---------
equals "no epmd listener appeared on the host's ports" "$(epmd_listeners)" "$epmd_before"
out=$(run exec stackie.rabbitmq -- ss -ltnH 'sport = :4369')
contains "epmd listens inside the block, on its loopback" "$out" "127.0.0.1:4369"
volume=$STORAGE/volumes/queues/rabbitmq/data
out=$(stat -c %a "$volume/.erlang.cookie" 2>&1); equals "the Erlang cookie is in the volume, 0400" "$out" "400"
[ -d "$volume/mnesia/rabbit@localhost" ]; check "mnesia is in the volume, under the block's node name" 0 $?

# --- rabbitmqctl inside (the node's cookie through HOME; no password) -------------------------
out=$(run exec stackie.rabbitmq -- rabbitmqctl -q list_users 2>&1); check "exec rabbitmqctl list_users" 0 $?
contains "the user from vars, an administrator" "$out" "^shop[[:space:]]*\[administrator\]"
if printf '%s\n' "$out" | grep -q '^guest'; then bad "no guest user"; else ok "no guest user"; fi
out=$(run exec stackie.rabbitmq -- rabbitmqctl -q eval 'node().' 2>&1)
equals "the node is rabbit@localhost" "$out" "rabbit@localhost"

# --- from the host: AMQP with pika, the management API with curl ------------------------------
out=$(amqp publish orders first second); check "pika publishes to a durable queue" 0 $?
equals "two persistent messages confirmed" "$out" "published 2"
out=$(amqp get orders); equals "pika consumes the first" "$out" "first"
# The management API counts messages from statistics the node emits every few seconds.
queue_stats() {
  api /api/queues/%2F/orders |
    python3 -c 'import json, sys; q = json.load(sys.stdin); print(q["durable"], q.get("messages"))'
}
for _ in $(seq 40); do
  out=$(queue_stats 2>&1)
  [ "$out" = "True 1" ] && break
  sleep 0.5
done
equals "the management API (on the stack's port) sees the durable queue and one message" "$out" "True 1"
out=$(curl -s -o /dev/null -w '%{http_code}' --max-time 20 -u shop:wrong "http://127.0.0.1:$MGMT/api/overview")
equals "a wrong password is refused" "$out" "401"
out=$(timeout 60 python3 "$T/amqp.py" "$AMQP" shop wrong get orders 2>&1); check "AMQP with a wrong password fails" 1 $?

# --- the password: in no command line, not in the runtime files or the state file ------------
run exec stackie.rabbitmq -- sleep 3 & exec_pid=$!
sleep 1.5
out=$(scan_cmdlines "$PW")
wait $exec_pid
equals "no secret in any command line while the node and an exec run" "$out" "scanned many"
if grep -rqsF "$PW" "$STORAGE/tmp" "$STACKIE_HOME/state.json" "$volume"; then
  bad "the password is in a file (runtime, state or volume)"
else ok "the password is in no file (runtime, state, volume)"; fi

# --- down (SIGTERM, a clean shutdown), up: the message and the user survive -------------------
out=$(down 2>&1); check "down" 0 $?
out=$(cat $(find "$STORAGE/logs" -name 'std*.log' -path '*rabbitmq*') 2>&1)
contains "RabbitMQ shut down cleanly on SIGTERM" "$out" "SIGTERM received - shutting down"
out=$(up 2>&1); check "up again" 0 $?
AMQP=$(host_port stackie.rabbitmq amqp)
out=$(amqp get orders); equals "the persistent message survived down and up" "$out" "second"
out=$(amqp get orders); equals "and only it" "$out" "empty"
out=$(down 2>&1); check "final down" 0 $?
equals "epmd left no listener on the host" "$(epmd_listeners)" "$epmd_before"
done_testing
