#!/bin/sh
# End-to-end: `stackie top` and the foreground `stackie up` (issue 23) on a real terminal, tmux's
# (a detached session of a fixed size: send-keys types, capture-pane reads the screen), with the
# real stackie and stackied and two small sandboxed blocks. top shows both blocks running and
# their log lines; r, x and s restart, stop and start the selected block; a block's escape
# sequences reach the screen as '?' (it cannot retitle or clear the terminal); q gives the
# terminal back (the alternate screen left, the shell's prompt). The foreground up prints the
# blocks' logs until Ctrl-C, which stops the stack (exit 130), a second Ctrl-C killing a block
# that ignores SIGTERM.
set -u
B=${STACKIE_BUILD_ROOT:?}/src
S=$B/stackie
command -v tmux >/dev/null 2>&1 || { echo "1..0 # SKIP tmux is not installed"; exit 0; }
T=$(mktemp -d /tmp/stackie-tui-e2e-XXXXXX)
export STACKIE_HOME=$T/home
unset XDG_RUNTIME_DIR TMUX
. "$(dirname "$0")/lib.sh"
tmx() { tmux -S "$T/tmux.sock" -f /dev/null "$@"; }
cleanup() {
  tmx kill-server 2>/dev/null
  stop_daemon "$S" 10
  rm -rf "$T"
}
trap cleanup EXIT
run() { timeout 30 "$S" "$@"; }
cd "$T"
cat > stackie.yml <<'YML'
tui:
  blocks:
    ticker:
      command: [sh, -c, 'echo "ticker started"; i=0; while :; do i=$((i+1)); echo "tick $i"; sleep 2; done']
    hostile:
      command: [sh, -c, 'echo "hostile started"; printf "evil \033]2;pwned-title\007 \033[2J end\n"; exec sleep 600']
YML

screen() { tmx capture-pane -p -t tui; }
# Waits (bounded, 20 s) until the screen matches the grep pattern $1.
wait_screen() {
  i=0
  while ! screen | grep -q -- "$1"; do
    [ $i -ge 100 ] && return 1
    sleep 0.2; i=$((i + 1))
  done
}
# The table row of block $1 on the screen.
row() { screen | grep -m 1 -- "^[> ] $1 "; }

run up >/dev/null 2>&1; check "up (not a terminal: returns)" 0 $?

# An interactive shell in a 110x30 terminal, with a prompt to find again after top.
# exec: the pane's process is this sh whatever the user's login shell (dash -c would fork it,
# and pkill -P below would then hit the wrong process).
tmx new-session -d -s tui -x 110 -y 30 "exec env PS1='PROMPT\$ ' sh -i" || bail_out "tmux new-session failed"
tmx send-keys -t tui "cd $T && $S top; echo TOP-EXIT=\$?" Enter
wait_screen "stackie top - stack tui - 2 blocks"; check "top draws its screen" 0 $?
equals "top runs on the alternate screen" "$(tmx display -p -t tui '#{alternate_on}')" 1
wait_screen "^  hostile *running"; check "both blocks are shown running" 0 $?
contains "ticker is running too" "$(row ticker)" "^> ticker  *running"
wait_screen "ticker  *| tick 2"; check "the log pane follows the blocks' lines" 0 $?
contains "the blocks' lines are interleaved" "$(screen)" "hostile | hostile started"
contains "a block's escape sequences are shown, not obeyed" "$(screen)" \
  "evil ?]2;pwned-title? ?\[2J end"
title=$(tmx display -p -t tui '#{pane_title}')
case $title in *pwned*) bad "the block retitled the terminal: $title" ;; *) ok "the block cannot retitle the terminal" ;; esac

pid_before=$(row ticker | awk '{print $5}')
tmx send-keys -t tui r
wait_screen "restarting ticker: done"; check "r restarts the selected block" 0 $?
i=0
while [ "$(screen | grep -c 'ticker  *| ticker started')" -lt 2 ] && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
check "the log pane shows the block starting again" 2 "$(screen | grep -c 'ticker  *| ticker started')"
wait_screen "^> ticker  *running"
pid_after=$(row ticker | awk '{print $5}')
if [ -n "$pid_before" ] && [ "$pid_before" != "$pid_after" ]; then ok "the restarted block has a new pid ($pid_before -> $pid_after)"
else bad "the pid did not change: '$pid_before' -> '$pid_after'"; fi

tmx send-keys -t tui x
wait_screen "^> ticker  *stopped"; check "x stops it" 0 $?
tmx send-keys -t tui s
wait_screen "^> ticker  *running"; check "s starts it again" 0 $?

tmx send-keys -t tui j a
wait_screen "^> hostile *running"; check "down selects the next block" 0 $?
wait_screen "^-- logs: hostile"; check "a shows the selected block's lines only" 0 $?
if screen | grep -q "^tick [0-9]"; then bad "ticker's lines in hostile's pane"; else ok "no other block's lines"; fi
tmx send-keys -t tui a / 't' 'i' 'c' 'k' Enter
wait_screen 'lines with "tick"'; check "/ filters the lines" 0 $?
if screen | grep -q "hostile |"; then bad "a line without the filter is shown"; else ok "only the lines with the filter"; fi
tmx send-keys -t tui / Escape
tmx send-keys -t tui e
wait_screen "a shell in tui/hostile; exit it to come back"; check "e leaves the screen for a shell in the block" 0 $?
tmx send-keys -t tui 'echo inside-$((6*7)); exit' Enter
wait_screen "shell in tui/hostile exited with 0"; check "and comes back when it exits" 0 $?
screen > "$T/screen.txt"
note "the screen of stackie top (tmux capture-pane):"
sed 's/^/#   /' "$T/screen.txt"

tmx resize-window -t tui -x 40 -y 8 2>/dev/null && {
  wait_screen "stackie top needs 50x10"; check "a small terminal is told what it lacks" 0 $?
  contains "and its size" "$(screen)" "terminal too small: 40x8"
  tmx resize-window -t tui -x 110 -y 30
}

tmx send-keys -t tui q
wait_screen "^TOP-EXIT=0"; check "q quits with 0" 0 $?
equals "the alternate screen is left" "$(tmx display -p -t tui '#{alternate_on}')" 0
# Anywhere on a line: keys typed before the shell started are echoed first, and then its prompt
# can precede the output ("$ inside-42"); the echoed command itself reads "inside-$((6*7))".
contains "the shell ran its command" "$(screen)" "inside-42"
contains "the shell's prompt is back" "$(screen | grep -A 1 '^TOP-EXIT=0' | tail -n 1)" "^PROMPT"

tmx send-keys -t tui "clear; $S top tui; echo TOP-EXIT=\$?" Enter
wait_screen "stackie top - stack tui"
tmx send-keys -t tui C-c
wait_screen "^TOP-EXIT=0"; check "Ctrl-C quits top (STACK named) with 0" 0 $?
equals "and leaves the alternate screen" "$(tmx display -p -t tui '#{alternate_on}')" 0

# SIGTERM from outside: the terminal comes back too, and the exit says which signal.
tmx send-keys -t tui "clear; $S top; echo TOP-EXIT=\$?" Enter
wait_screen "stackie top - stack tui"
pkill -TERM -P "$(tmx display -p -t tui '#{pane_pid}')"  # the shell's one child: top
wait_screen "^TOP-EXIT=143"; check "SIGTERM ends top with 143" 0 $?
equals "and leaves the alternate screen" "$(tmx display -p -t tui '#{alternate_on}')" 0

# `stackie logs` on a terminal shows a block's escape sequences as text too; into a pipe or a
# file the bytes stay as the block wrote them.
tmx send-keys -t tui "clear; $S logs tui/hostile; echo LOGS-EXIT=\$?" Enter
wait_screen "^LOGS-EXIT=0"; check "logs on a terminal" 0 $?
contains "logs shows the hostile line as text" "$(screen)" "evil ?]2;pwned-title? ?\[2J end"
title=$(tmx display -p -t tui '#{pane_title}')
case $title in *pwned*) bad "logs let the block retitle the terminal: $title" ;; *) ok "logs cannot retitle the terminal" ;; esac
raw=$(run logs tui/hostile | grep -c "$(printf '\033')]2;pwned")
equals "into a pipe the bytes are the block's" "$raw" 1

# The daemon goes away under top: one clear line, exit 3, the terminal back.
tmx send-keys -t tui "clear; $S top; echo TOP-EXIT=\$?" Enter
wait_screen "stackie top - stack tui"
run daemon stop >/dev/null 2>&1
wait_screen "^TOP-EXIT=3"; check "the daemon gone ends top with 3" 0 $?
contains "saying so in one line" "$(screen)" "^stackie: top: "
equals "the alternate screen is left" "$(tmx display -p -t tui '#{alternate_on}')" 0

out=$(run top 2>&1 </dev/null); check "top without a terminal exits 1" 1 $?
contains "saying it needs one" "$out" "needs a terminal"

# --- the foreground up -------------------------------------------------------------------
mkdir fg && cat > fg/stackie.yml <<'YML'
fg:
  blocks:
    greeter:
      command: [sh, -c, 'echo "hello from greeter"; sleep 2; echo "later from greeter"; exec sleep 600']
    stubborn:
      command: [sh, -c, 'trap "" TERM; echo "stubborn ignores TERM"; while :; do sleep 1; done']
      stop_timeout: 60s
YML
tmx send-keys -t tui "clear; cd $T/fg && $S up; echo UP-EXIT=\$?" Enter
wait_screen "following the logs of every block; Ctrl-C stops the stack"; check "up stays in the foreground on a terminal" 0 $?
wait_screen "greeter  | hello from greeter"; check "with the blocks' log lines" 0 $?
contains "of every block" "$(screen)" "stubborn | stubborn ignores TERM"
# A line written once up follows (on Linux read from the block's log file, not sent by the daemon).
wait_screen "greeter  | later from greeter"; check "and the lines written after" 0 $?
tmx send-keys -t tui C-c
wait_screen "stopping stack fg (Ctrl-C again to kill its blocks)"; check "Ctrl-C stops the stack" 0 $?
tmx send-keys -t tui C-c
wait_screen "killing the blocks of fg"; check "a second Ctrl-C kills its blocks" 0 $?
wait_screen "^UP-EXIT="; check "up returns" 0 $?
contains "with 130 once the stack is down" "$(screen)" "^UP-EXIT=130"
contains "saying so" "$(screen)" "^stack fg is down"
run ps fg >/dev/null 2>&1; check "ps finds the stack no more" 1 $?

# Ctrl-C while the stack is still starting (a health check that never passes) stops it too.
mkdir slow && cat > slow/stackie.yml <<'YML'
slow:
  blocks:
    waiter:
      command: "echo waiting; exec sleep 600"
      health: {exec: ["false"], interval: 1s, start_period: 60s}
YML
tmx send-keys -t tui "clear; cd $T/slow && $S up; echo UP-EXIT=\$?" Enter
wait_screen "^waiter  *starting"; check "up shows the block starting" 0 $?
tmx send-keys -t tui C-c
wait_screen "^UP-EXIT="; check "Ctrl-C while starting ends up" 0 $?
contains "with 130 once the stack is down" "$(screen)" "^UP-EXIT=130"
run ps slow >/dev/null 2>&1; check "the starting stack was stopped (ps finds no stack)" 1 $?
done_testing
