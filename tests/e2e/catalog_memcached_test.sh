#!/bin/sh
# End-to-end: stackie.memcached with the host's real memcached (Debian: memcached), spoken to
# in its raw text protocol from the host through the forwarded port (memcached_text.py). Items
# survive down/up (SIGUSR1 saves the restartable cache's metadata in the volume); after kill -9
# of stackied no process is left and memcached starts again, empty, as a cache may.
set -u
B=${STACKIE_BUILD_ROOT:?}/src
S=$B/stackie
. "$(dirname "$0")/lib.sh"
command -v memcached >/dev/null || skip_all "no memcached on this host (apt-get install memcached)"
. "$(dirname "$0")/catalog_lib.sh"
mc() { timeout 20 python3 "$(dirname "$0")/memcached_text.py" "$PORT" "$@"; }

cat > "$T/stackie-stack.yml" <<'YML'
cache:
  blocks:
    stackie.memcached:
      vars:
        memory_mb: "16"
YML
out=$(up 2>&1); check "up of stackie.memcached" 0 $?
equals "running and healthy" "$(state_of stackie.memcached)" "running healthy"
PORT=$(host_port stackie.memcached memcached)
[ -n "$PORT" ]; check "a forwarded host port ($PORT)" 0 $?

out=$(mc "set greeting hello world" "get greeting" "set counter 41" "incr counter 1" "get missing")
equals "set/get/incr in the text protocol" "$out" "STORED
VALUE greeting 0 11|hello world|END
STORED
42
END"
out=$(mc "stats settings" 2>&1 | tr '|' '\n' | grep -E "STAT (memory_file|maxbytes|udpport) ")
contains "the item memory is a file in the volume" "$out" "memory_file $STORAGE/volumes/cache/memcached/data/memory_file"
contains "the memory_mb var" "$out" "maxbytes 16777216"
contains "no UDP port" "$out" "udpport 0"

out=$(down 2>&1); check "down (SIGUSR1)" 0 $?
[ -f "$STORAGE/volumes/cache/memcached/data/memory_file.meta" ]
check "memcached saved its metadata in the volume" 0 $?
out=$(up 2>&1); check "up again" 0 $?
PORT=$(host_port stackie.memcached memcached)
out=$(mc "get greeting" "get counter")
equals "the items survived down and up" "$out" "VALUE greeting 0 11|hello world|END
VALUE counter 0 2|42|END"

out=$(kill_daemon); equals "no process survives kill -9 of stackied" "$out" ""
out=$(up 2>&1); check "up after the crash" 0 $?
PORT=$(host_port stackie.memcached memcached)
out=$(mc "set after crash" "get after"); equals "memcached serves again after the crash" "$out" "STORED
VALUE after 0 5|crash|END"
out=$(down 2>&1); check "final down" 0 $?
done_testing
