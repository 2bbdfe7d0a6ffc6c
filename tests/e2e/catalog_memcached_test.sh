#!/bin/sh
# End-to-end: stackie.memcached with the host's real memcached (Debian: memcached), spoken to
# in its raw text protocol (memcached_text.py) from the host through the forwarded port and
# from inside the block through `stackie exec`. Items survive down/up (SIGUSR1 writes the warm
# restart's metadata next to the memory file in the volume); after kill -9 of stackied no
# process is left and memcached starts again, empty, as a cache may.
set -u
B=${STACKIE_BUILD_ROOT:?}/src
S=$B/stackie
. "$(dirname "$0")/lib.sh"
command -v memcached >/dev/null || skip_all "no memcached on this host (apt-get install memcached)"
. "$(dirname "$0")/catalog_lib.sh"
CLIENT=$(cat "$(dirname "$0")/memcached_text.py")
mc() { timeout 20 python3 -c "$CLIENT" "$PORT" "$@"; }
# The same client inside the block's sandbox, on memcached's own port there.
exec_mc() { run exec stackie.memcached -- python3 -c "$CLIENT" 11211 "$@"; }
VOLUME=$STORAGE/volumes/cache/memcached/data

cat > "$T/stackie-stack.yml" <<'YML'
cache:
  blocks:
    stackie.memcached: {}
YML
out=$(up 2>&1); check "up of stackie.memcached" 0 $?
equals "running and healthy" "$(state_of stackie.memcached)" "running healthy"
PORT=$(host_port stackie.memcached memcached)
[ -n "$PORT" ]; check "a forwarded host port ($PORT)" 0 $?

out=$(mc "set greeting hello world" "get greeting" "set counter 41" "incr counter 1" "get missing")
equals "host: set/get/incr in the text protocol" "$out" "STORED
VALUE greeting 0 11|hello world|END
STORED
42
END"
out=$(exec_mc "get greeting" "set inside from exec")
equals "exec: the same cache from inside the block" "$out" "VALUE greeting 0 11|hello world|END
STORED"
out=$(mc "get inside"); equals "host sees what exec stored" "$out" "VALUE inside 0 9|from exec|END"
out=$(mc "stats settings" 2>&1 | tr '|' '\n' | grep -E "STAT (memory_file|maxbytes|udpport) ")
contains "the item memory is a file in the volume" "$out" "memory_file $VOLUME/memory_file"
contains "64 MiB by default" "$out" "maxbytes 67108864"
contains "no UDP port" "$out" "udpport 0"

out=$(down 2>&1); check "down (SIGUSR1)" 0 $?
[ -s "$VOLUME/memory_file.meta" ]; check "memcached wrote its metadata in the volume" 0 $?
out=$(up 2>&1); check "up again" 0 $?
PORT=$(host_port stackie.memcached memcached)
out=$(mc "get greeting" "get counter" "get inside")
equals "the items survived down and up (warm restart)" "$out" "VALUE greeting 0 11|hello world|END
VALUE counter 0 2|42|END
VALUE inside 0 9|from exec|END"

# memcached takes the metadata back only once the clock has passed the second it was written
# in: a restart within that second (a quick down/up, `stackie restart`) would start empty. The
# block's init waits for that second; here the stop is made to look as recent as it can be.
out=$(down 2>&1); check "down again" 0 $?
sed -i "s/^Kstop_time .*/Kstop_time $(($(date +%s) + 1))/" "$VOLUME/memory_file.meta"
check "the metadata says: stopped in the coming second" 0 $?
out=$(up 2>&1); check "up within that second" 0 $?
PORT=$(host_port stackie.memcached memcached)
out=$(mc "get greeting"); equals "the items survived a restart in the same second" "$out" "VALUE greeting 0 11|hello world|END"

out=$(kill_daemon); equals "no process survives kill -9 of stackied" "$out" ""
out=$(up 2>&1); check "up after the crash" 0 $?
PORT=$(host_port stackie.memcached memcached)
out=$(mc "get greeting"); equals "after a crash the cache starts empty (no metadata)" "$out" "END"
out=$(mc "set after crash" "get after"); equals "and serves again" "$out" "STORED
VALUE after 0 5|crash|END"

# The metadata is the block's to write: a stop_time far ahead (or not a number) must not keep
# the init waiting; memcached then refuses the metadata itself and starts empty.
out=$(down 2>&1); check "down (SIGUSR1)" 0 $?
sed -i "s/^Kstop_time .*/Kstop_time 99999999999/" "$VOLUME/memory_file.meta"
out=$(up 2>&1); check "up with a stop_time in the year 5138 (the init gives up waiting)" 0 $?
PORT=$(host_port stackie.memcached memcached)
out=$(mc "get after"); equals "and memcached starts empty" "$out" "END"
out=$(down 2>&1); check "down (SIGUSR1)" 0 $?
sed -i "s/^Kstop_time .*/Kstop_time soon; date/" "$VOLUME/memory_file.meta"
out=$(up 2>&1); check "up with a stop_time that is not a number" 0 $?
out=$(down 2>&1); check "final down" 0 $?
done_testing
