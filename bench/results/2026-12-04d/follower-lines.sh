#!/bin/bash
set -u
B=${B:?the src directory of a build, e.g. /var/tmp/b-main/src}
export STACKIE_HOME=/tmp/s12/flood/home
rm -rf $STACKIE_HOME /tmp/s12/flood/stack; mkdir -p /tmp/s12/flood/stack; cd /tmp/s12/flood/stack
cat > stackie.yml <<'YML'
flood:
  blocks:
    spew:
      command: [sh, -c, "sleep 1.5; yes 'bench-spew line xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' | head -n 3000000; exec sleep 600"]
YML
$B/stackie up >/dev/null 2>&1 || { echo up failed; exit 1; }
$B/stackie logs -f -n 0 spew > /tmp/s12/flood/got 2>/tmp/s12/flood/err &
f=$!
sleep 1.6
cpu0=$(awk '{print $14+$15}' /proc/$f/stat)
sleep 5
cpu1=$(awk '{print $14+$15}' /proc/$f/stat)
kill $f; wait $f 2>/dev/null
got=$(wc -l < /tmp/s12/flood/got)
skipped=$(grep -o '^\[stackie\] [0-9]*' /tmp/s12/flood/got | awk '{s+=$2} END {print s+0}')
echo "lines got: $got, CLI ticks $((cpu1-cpu0)), marker-skipped $skipped"
$B/stackie down >/dev/null 2>&1; $B/stackie daemon stop >/dev/null 2>&1 || true
