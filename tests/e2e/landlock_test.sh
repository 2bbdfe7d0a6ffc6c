#!/bin/sh
# End-to-end: the landlock backend (issue 20) forced with [sandbox] backend = "landlock" in
# config.toml, with the real stackied and the real redis (stackie.redis) plus a first-party block
# that consumes it. Checks: `up` warns that the sandbox is weaker, `ps` shows linux-landlock;
# redis binds its host port itself (no forwarder) and answers from the host; the consumer
# reaches redis at the provider's host port; exec (--join) runs inside the same rules; a block
# cannot read the home, reach an undeclared port, or signal the daemon; kill -9 of stackied
# leaves no process of the stack behind.
set -u
B=${STACKIE_BUILD_ROOT:?}/src
S=$B/stackie
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" = 0 ]; then bail_out "run as an unprivileged user"; fi
if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
  skip_all "no redis-server/redis-cli on this host (apt-get install redis-server redis-tools)"
fi
if ! "$B/stackie-lockbox" --print-backend | grep -q "landlock ABI [1-9]"; then
  skip_all "this kernel has no Landlock"
fi

T=$(mktemp -d /tmp/stackie-landlock-e2e-XXXXXX)
export STACKIE_HOME=$T/home
unset XDG_RUNTIME_DIR
mkdir -p "$STACKIE_HOME" "$T/app/client"
printf '[sandbox]\nbackend = "landlock"\n' > "$STACKIE_HOME/config.toml"
echo "top secret" > "$T/secret"
cleanup() {
  (cd "$T/app" && timeout 60 "$S" down >/dev/null 2>&1)
  stop_daemon "$S" 20
  rm -rf "$T"
}
trap cleanup EXIT
run() { timeout 30 "$S" "$@"; }

cat > "$T/app/stackie-stack.yml" <<'YML'
ll:
  blocks:
    stackie.redis:
    client:
      path: ./client
      command: [sh, ./client.sh]
      consumes:
        cache: {port_type: redis}
      environment:
        CACHE_PORT: ${consumes.cache.PORT}
      health:
        exec: [test, -s, result]
        interval: 500ms
        retries: 60
YML
cat > "$T/app/client/client.sh" <<'SH'
for try in 1 2 3 4 5 6 7 8 9 10; do
  answer=$(redis-cli -h 127.0.0.1 -p "$CACHE_PORT" set via-consumes yes 2>&1)
  [ "$answer" = OK ] && { echo "cache $answer on $CACHE_PORT" > result; break; }
  sleep 1
done
exec sleep 100000
SH

out=$(cd "$T/app" && timeout 240 "$S" up 2>&1); check "up under the forced landlock backend" 0 $?
contains "up warns that the sandbox is weaker" "$out" "warning: blocks run under the landlock sandbox"
out=$(cd "$T/app" && run ps); contains "ps shows linux-landlock in SANDBOX" "$out" "linux-landlock"
port=$(cd "$T/app" && run ps --json | python3 -c '
import json, sys
for row in json.load(sys.stdin)["blocks"]:
    if row["name"] == "stackie.redis":
        print(row["ports"][0]["host"].rsplit(":", 1)[1])')
note "redis on host port $port"
equals "redis answers from the host on its own port" "$(redis-cli -p "$port" ping 2>&1)" "PONG"
redis_pid=$(ss -Hltnp "sport = :$port" 2>/dev/null | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -n 1)
daemon_pid=$(cat "$STACKIE_HOME/stackied.pid")
if [ -n "$redis_pid" ]; then
  equals "the listener is redis itself, not a forwarder in stackied" \
    "$(cat /proc/"$redis_pid"/comm)" "redis-server"
else
  skip "ss cannot name the listener's process here"
fi
equals "the consumer reached redis at the provider's host port" \
  "$(cat "$T/app/client/result" 2>/dev/null)" "cache OK on $port"
equals "redis holds what the consumer wrote" "$(redis-cli -p "$port" get via-consumes)" "yes"

# --- exec joins the same rules -----------------------------------------------------------------
out=$(cd "$T/app" && run exec stackie.redis -- redis-cli -p "$port" ping 2>&1)
equals "exec redis-cli ping inside (connect to its own served port)" "$out" "PONG"
out=$(cd "$T/app" && run exec client -- cat "$T/secret" 2>&1)
contains "a file outside the policy is closed" "$out" "Permission denied"
out=$(cd "$T/app" && run exec client -- sh -c 'ls "$HOME" /root 2>&1; echo end' 2>&1)
contains "the home is not readable" "$out" "Permission denied"
# An undeclared port: the daemon's pid is no port, but stackied's own socket is the escape
# a landlocked block would try: unix sockets are refused, TCP to a port not consumed too.
free=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -c "
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', $free)); s.listen(1); time.sleep(20)" &
listener=$!
sleep 1
out=$(cd "$T/app" && run exec stackie.redis -- redis-cli -p "$free" ping 2>&1)
contains "a host port it does not consume is closed" "$out" "Permission denied"
kill "$listener" 2>/dev/null
out=$(cd "$T/app" && run exec client -- sh -c "kill -0 $daemon_pid && echo signalled" 2>&1)
case "$out" in
  *signalled*) bad "a block signalled stackied: $out" ;;
  *) ok "a block cannot signal stackied ($out)" ;;
esac

# --- total death: kill -9 of the daemon ---------------------------------------------------------
kill -9 "$daemon_pid"
gone=no
for i in $(seq 1 50); do
  if ! pgrep -u "$(id -u)" -f "redis-server 127.0.0.1:$port" >/dev/null &&
    ! pgrep -u "$(id -u)" -f "sleep 100000" >/dev/null; then
    gone=yes
    break
  fi
  sleep 0.2
done
equals "kill -9 of stackied leaves no process of the stack" "$gone" "yes"
done_testing
