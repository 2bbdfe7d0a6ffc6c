#!/bin/sh
# End-to-end: stackie.mosquitto with the host's real broker and its own clients (Debian:
# mosquitto, mosquitto-clients): mosquitto_pub/mosquitto_sub from the host through the
# forwarded port and from inside the block through `stackie exec`; a retained message and a
# durable session's queued message survive down/up, a retained message kill -9 of stackied (the
# database in the volume is saved on each change).
set -u
B=${STACKIE_BUILD_ROOT:?}/src
S=$B/stackie
. "$(dirname "$0")/lib.sh"
if ! { [ -x /usr/sbin/mosquitto ] || command -v mosquitto >/dev/null; } ||
  ! command -v mosquitto_sub >/dev/null; then
  skip_all "no mosquitto/mosquitto_sub on this host (apt-get install mosquitto mosquitto-clients)"
fi
. "$(dirname "$0")/catalog_lib.sh"
pub() { timeout 20 mosquitto_pub -h 127.0.0.1 -p "$PORT" "$@"; }
# The retained message of TOPIC, or nothing after 3 s.
retained() { timeout 20 mosquitto_sub -h 127.0.0.1 -p "$PORT" -t "$1" -C 1 -W 3 -v; }
VOLUME=$STORAGE/volumes/iot/mosquitto/data

cat > "$T/stackie-stack.yml" <<'YML'
iot:
  blocks:
    stackie.mosquitto: {}
YML
out=$(up 2>&1); check "up of stackie.mosquitto" 0 $?
equals "running and healthy" "$(state_of stackie.mosquitto)" "running healthy"
PORT=$(host_port stackie.mosquitto mqtt)
[ -n "$PORT" ]; check "a forwarded host port ($PORT)" 0 $?

# --- a durable session (clean session off, QoS 1): the broker queues what arrives meanwhile ---
# session: subscribe as client e2e-host and leave at once (-E: after the broker's SUBACK).
session() { timeout 20 mosquitto_sub -h 127.0.0.1 -p "$PORT" -i e2e-host -c -q 1 -t shop/orders "$@"; }
session -E; check "host: a durable subscription to shop/orders" 0 $?
run exec stackie.mosquitto -- mosquitto_pub -h 127.0.0.1 -p 1883 -t shop/orders -q 1 -m "order 1"
check "exec: mosquitto_pub inside the block" 0 $?
out=$(session -C 1 -W 10); check "host: the session gets what was queued for it" 0 $?
equals "the message exec published" "$out" "order 1"
pub -t shop/status -m open -r -q 1; check "host: publish a retained message" 0 $?
out=$(run exec stackie.mosquitto -- mosquitto_sub -h 127.0.0.1 -p 1883 -t shop/status -C 1 -W 3 -v)
equals "exec: mosquitto_sub gets the retained message" "$out" "shop/status open"

# --- down, up: the retained message and the session's queue are in the volume --------------
session -E; check "the session subscribed again" 0 $?
pub -t shop/orders -q 1 -m "order 2"; check "a message queued for the session" 0 $?
out=$(down 2>&1); check "down" 0 $?
[ -s "$VOLUME/mosquitto.db" ]; check "the database is in the block's volume" 0 $?
out=$(cat $(find "$STACKIE_HOME" -name 'std*.log' -path '*mosquitto*') 2>&1)
contains "a clean stop on SIGTERM" "$out" "terminating"
out=$(up 2>&1); check "up again" 0 $?
PORT=$(host_port stackie.mosquitto mqtt)
out=$(retained shop/status); equals "the retained message survived down and up" "$out" "shop/status open"
out=$(session -C 1 -W 10); equals "the queued message survived down and up" "$out" "order 2"

# --- kill -9 of the daemon: the last change was saved when it was made ----------------------
pub -t shop/status -m closed -r -q 1; check "a new retained message just before the crash" 0 $?
# autosave_on_changes: the broker saves in its next loop after the change; the payload's bytes
# are in the file as they were sent.
eventually grep -q closed "$VOLUME/mosquitto.db"; check "the change is saved in the volume" 0 $?
out=$(kill_daemon); equals "no process of the stack survives kill -9 of stackied" "$out" ""
out=$(up 2>&1); check "up after the crash" 0 $?
PORT=$(host_port stackie.mosquitto mqtt)
out=$(retained shop/status); equals "the newest retained message is back" "$out" "shop/status closed"
out=$(down 2>&1); check "final down" 0 $?
done_testing
