#!/bin/sh
# End-to-end: `stackie watch` (issue 23) with the real stackie and stackied, the block in its
# sandbox: an edit restarts the block exactly once; an edit that breaks it shows its error and
# the log tail, the next good edit brings it back; the time from a change to the block running
# again is measured (a TAP note, never an assertion: timing belongs in bench/).
set -u
B=${STACKIE_BUILD_ROOT:?}/src
S=$B/stackie
T=$(mktemp -d /tmp/stackie-watch-e2e-XXXXXX)
export STACKIE_HOME=$T/home
unset XDG_RUNTIME_DIR
. "$(dirname "$0")/lib.sh"
watcher=
cleanup() {
  [ -n "$watcher" ] && kill "$watcher" 2>/dev/null
  stop_daemon "$S" 10
  rm -rf "$T"
}
trap cleanup EXIT
run() { timeout 30 "$S" "$@"; }
cd "$T"
mkdir -p app/src
echo "v0" > app/src/main.txt
cat > stackie.yml <<'YML'
watched:
  blocks:
    app:
      path: app
      command: [sh, -c, 'if grep -q broken src/main.txt; then echo "main.txt: syntax error" >&2; exit 1; fi; echo "started $(cat src/main.txt)"; exec sleep 600']
      restart: "no"
      # Healthy only while the source is good (a version line): a broken start exits 1, and a
      # check that passed regardless could win the race with that exit (a loaded machine saw
      # the broken edit reported as "running again").
      health: {exec: [grep, -q, '^v', APP_MAIN], interval: 100ms}
      watch:
        paths: [src]
        ignore: ["*.tmp"]
        debounce: 100ms
YML
sed -i "s|APP_MAIN|$T/app/src/main.txt|" stackie.yml

# Waits (bounded, 30 s) until the watch output has N lines matching PATTERN.
wait_lines() {
  i=0
  while [ "$(grep -c -- "$2" watch.out)" -lt "$1" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
  [ "$(grep -c -- "$2" watch.out)" -ge "$1" ]
}
started_lines() { run logs -n 1000 app 2>/dev/null | grep -c "started v"; }

run up >/dev/null 2>&1; check "up" 0 $?
timeout 170 "$S" watch >watch.out 2>&1 &
watcher=$!
wait_lines 1 "watching; Ctrl-C to stop"; check "watch starts" 0 $?
contains "it says what it watches" "$(cat watch.out)" "watching watched/app: $T/app"

echo "v1" > app/src/main.txt
wait_lines 1 "running again"; check "an edit restarts the block" 0 $?
echo "scratch" > app/src/ignored.tmp
echo "not watched" > app/README
sleep 1.5
equals "exactly once (two starts in the log)" "$(started_lines)" 2
equals "one restart in the watch output" "$(grep -c 'restarting' watch.out)" 1
contains "the watch names the changed file" "$(cat watch.out)" "watched/app: src/main.txt changed; restarting"

echo "broken" > app/src/main.txt
wait_lines 1 "waiting for the next change"; check "a breaking edit is reported" 0 $?
contains "with the block's failure" "$(cat watch.out)" "watched/app: failed"
contains "and its log" "$(cat watch.out)" "| main.txt: syntax error"
echo "v2" > app/src/main.txt
wait_lines 2 "running again"; check "the next good edit brings it back" 0 $?
contains "running the new version" "$(run logs -n 5 app 2>&1)" "started v2"

# Change to running again, several times: the watch says how long each took.
for n in 3 4 5 6 7; do
  echo "v$n" > app/src/main.txt
  wait_lines $((n)) "running again" || break
done
samples=$(sed -n 's/.*running again, \([0-9]*\) ms after the change/\1/p' watch.out | tail -n 5 | sort -n)
median=$(printf '%s\n' $samples | sed -n 3p)
note "change to running again (ms, 100 ms debounce included, sandboxed): $(echo $samples) median ${median:-?}"
check "five timed restarts" 5 "$(printf '%s\n' $samples | grep -c .)"

# SIGINT to stackie itself: timeout(1) would pass it on and then send it to its whole process
# group again, and that second one can land after the watch has restored the default action.
pkill -INT -P "$watcher"; wait "$watcher"; check "Ctrl-C ends the watch with 0" 0 $?
watcher=
run watch nosuch >/dev/null 2>err; check "watch of an unknown block exits 1" 1 $?
run down >/dev/null 2>&1
done_testing
