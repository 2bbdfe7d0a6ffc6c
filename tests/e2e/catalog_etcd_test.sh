#!/bin/sh
# End-to-end: stackie.etcd with the host's real etcd and its own client (Debian: etcd-server,
# etcd-client): etcdctl put/get from the host through the forwarded port and from inside the
# block through `stackie exec` (ETCDCTL_ENDPOINTS set by the block); the keys survive down/up
# and kill -9 of stackied (etcd syncs its write-ahead log before it answers a put).
set -u
B=${STACKIE_BUILD_ROOT:?}/src
S=$B/stackie
. "$(dirname "$0")/lib.sh"
if ! command -v etcd >/dev/null || ! command -v etcdctl >/dev/null; then
  skip_all "no etcd/etcdctl on this host (apt-get install etcd-server etcd-client)"
fi
. "$(dirname "$0")/catalog_lib.sh"
ctl() { ETCDCTL_API=3 timeout 20 etcdctl --endpoints="http://127.0.0.1:$PORT" "$@"; }
exec_ctl() { run exec stackie.etcd -- etcdctl "$@"; }
VOLUME=$STORAGE/volumes/config/etcd/data

cat > "$T/stackie-stack.yml" <<'YML'
config:
  blocks:
    stackie.etcd: {}
YML
out=$(up 2>&1); check "up of stackie.etcd" 0 $?
equals "running and healthy" "$(state_of stackie.etcd)" "running healthy"
PORT=$(host_port stackie.etcd etcd)
[ -n "$PORT" ]; check "a forwarded host port ($PORT)" 0 $?

out=$(ctl put /app/feature on); equals "host: etcdctl put" "$out" "OK"
out=$(ctl get /app/feature --print-value-only); equals "host: etcdctl get" "$out" "on"
out=$(exec_ctl get /app/feature --print-value-only)
equals "exec: etcdctl with no options reads the same key" "$out" "on"
out=$(exec_ctl put /app/from-exec yes); equals "exec: etcdctl put" "$out" "OK"
out=$(ctl get /app --prefix --keys-only | grep -v '^$' | tr '\n' ' ')
equals "host sees both keys" "$out" "/app/feature /app/from-exec "
out=$(ctl member list); contains "one member, named by the vars" "$out" "started, stackie, http://127.0.0.1:2380"
[ -d "$VOLUME/member/wal" ]; check "the write-ahead log is in the block's volume" 0 $?

out=$(down 2>&1); check "down" 0 $?
out=$(up 2>&1); check "up again" 0 $?
PORT=$(host_port stackie.etcd etcd)
out=$(ctl get /app --prefix --print-value-only | grep -v '^$' | tr '\n' ' ')
equals "the keys survived down and up" "$out" "on yes "

out=$(ctl put /app/before-crash 1); equals "a put just before the crash" "$out" "OK"
out=$(kill_daemon); equals "no process of the stack survives kill -9 of stackied" "$out" ""
out=$(up 2>&1); check "up after the crash" 0 $?
PORT=$(host_port stackie.etcd etcd)
out=$(ctl get /app/before-crash --print-value-only); equals "the acknowledged put is back" "$out" "1"
out=$(down 2>&1); check "final down" 0 $?
done_testing
