#!/bin/sh
# End-to-end: the automatic fallback to the landlock backend (issue 20). The whole script runs
# again inside a user namespace of its own where user.max_user_namespaces is 0 (which needs no
# privilege; the test's uid is mapped to itself, so stackied and the blocks run as an ordinary
# user without capabilities, as on a host that denies user namespaces). There, with no backend
# set in config.toml: the lockbox's and doctor's probes choose landlock, `up` warns, `ps` shows
# linux-landlock, a consumer reaches its provider's port, and the escape checks that still apply
# hold from inside a block: a file outside the policy, an undeclared port, a signal to a host
# process, a host abstract socket (each with its control outside the sandbox).
set -u
B=${STACKIE_BUILD_ROOT:?}/src
S=$B/stackie
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

# python3 (ctypes, no privilege): a new user namespace mapping our own uid and gid, with
# user.max_user_namespaces = 0 in it, then exec of the rest of the command line.
NO_USERNS='
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
uid, gid = os.getuid(), os.getgid()
if libc.unshare(0x10000000) != 0:  # CLONE_NEWUSER
    sys.exit("unshare: " + os.strerror(ctypes.get_errno()))
for path, text in (("/proc/self/setgroups", "deny"), ("/proc/self/uid_map", "%d %d 1" % (uid, uid)),
                   ("/proc/self/gid_map", "%d %d 1" % (gid, gid)),
                   ("/proc/sys/user/max_user_namespaces", "0")):
    with open(path, "w") as f:
        f.write(text + "\n")
os.execvp(sys.argv[1], sys.argv[1:])
'

if [ "${1:-}" != --inside ]; then
  if [ "$(id -u)" = 0 ]; then bail_out "run as an unprivileged user"; fi
  if ! "$B/stackie-lockbox" --print-backend | grep -q "landlock ABI [1-9]"; then
    skip_all "this kernel has no Landlock"
  fi
  if [ "$("$B/stackie-lockbox" --print-backend | head -n 1)" != namespaces ]; then
    skip_all "user namespaces are denied here already: nothing to take away"
  fi
  why=$(python3 -c "$NO_USERNS" true 2>&1) ||
    skip_all "cannot make user namespaces unavailable in a user namespace here: $why"
  exec python3 -c "$NO_USERNS" /bin/sh "$0" --inside
fi

T=$(mktemp -d /tmp/stackie-fallback-e2e-XXXXXX)
export STACKIE_HOME=$T/home
unset XDG_RUNTIME_DIR
mkdir -p "$STACKIE_HOME" "$T/app"
cp "$HERE/net_peer.py" "$T/app/"
echo "top secret" > "$T/secret"
sleep 600 &
host_process=$!
listener=
cleanup() {
  kill "$host_process" $listener 2>/dev/null
  (cd "$T/app" && timeout 60 "$S" down >/dev/null 2>&1)
  stop_daemon "$S" 20
  rm -rf "$T"
}
trap cleanup EXIT
run() { (cd "$T/app" && timeout 60 "$S" "$@"); }

equals "user namespaces are unavailable here" \
  "$(unshare --user true 2>/dev/null && echo available || echo unavailable)" "unavailable"
out=$("$B/stackie-lockbox" --print-backend)
equals "stackie-lockbox --print-backend chooses landlock" "$(echo "$out" | head -n 1)" "landlock"
contains "and says why" "$out" "why: unprivileged user namespaces"
out=$(run doctor 2>&1)
contains "doctor: the namespace lockbox cannot run" "$out" "blocks fall back to the landlock backend"
contains "doctor: landlock chosen automatically" "$out" "sandbox backend: landlock (landlock ABI [0-9]*, chosen automatically)"

echo_port=$(python3 "$T/app/net_peer.py" free-port)
cat > "$T/app/stackie-stack.yml" <<YML
fallback:
  blocks:
    echo:
      path: .
      command: [python3, net_peer.py, echo-server, "$echo_port"]
      serves:
        echo: {port: $echo_port, type: echo}
      health:
        tcp: echo
        interval: 200ms
    consumer:
      path: .
      command: [python3, net_peer.py, consumer, "\${consumes.echo.HOST}", "\${consumes.echo.PORT}", "consumer.out"]
      consumes:
        echo: echo
YML

out=$(run up 2>&1); check "up, no backend configured" 0 $?
contains "up warns that the sandbox is weaker" "$out" "warning: blocks run under the landlock sandbox"
out=$(run ps); contains "ps shows linux-landlock in SANDBOX" "$out" "linux-landlock"
for i in $(seq 50); do [ -s "$T/app/consumer.out" ] && break; sleep 0.2; done
contains "the consumer reached the provider's port" "$(cat "$T/app/consumer.out" 2>&1)" "^ok 127.0.0.1:"

# --- the escape checks that still apply, from inside a block (exec joins its rules) ---------------
equals "control: the secret is readable outside" "$(cat "$T/secret")" "top secret"
out=$(run exec consumer -- cat "$T/secret" 2>&1)
contains "a file outside the policy is closed" "$out" "Permission denied"

free=$(python3 "$T/app/net_peer.py" free-port)
python3 "$T/app/net_peer.py" hold "$free" "$T/holder.pid" &
listener=$!
for i in $(seq 50); do [ -s "$T/holder.pid" ] && break; sleep 0.1; done
equals "control: the undeclared port answers outside" \
  "$(python3 "$T/app/net_peer.py" try-connect 127.0.0.1 "$free")" "connected"
equals "an undeclared port is closed" \
  "$(run exec consumer -- python3 net_peer.py try-connect 127.0.0.1 "$free" 2>&1)" "PermissionError"
equals "the consumed port is open" \
  "$(run exec consumer -- python3 net_peer.py try-connect 127.0.0.1 "$echo_port" 2>&1)" "connected"

check "control: a host process can be signalled outside" 0 "$(kill -0 "$host_process"; echo $?)"
out=$(run exec consumer -- sh -c "kill -0 $host_process && echo signalled" 2>&1)
contains "a host process cannot be signalled" "$out" "Operation not permitted"

abstract="stackie-fallback-$$"
python3 -c "
import socket, time
s = socket.socket(socket.AF_UNIX); s.bind('\0$abstract'); s.listen(1); time.sleep(30)" &
abstract_listener=$!
listener="$listener $abstract_listener"
sleep 0.5
connect_abstract="import socket
try:
    socket.socket(socket.AF_UNIX).connect('\0$abstract'); print('connected')
except OSError as error:
    print(type(error).__name__)"
equals "control: the abstract socket answers outside" \
  "$(python3 -c "$connect_abstract")" "connected"
equals "a host abstract socket is closed" \
  "$(run exec consumer -- python3 -c "$connect_abstract" 2>&1)" "PermissionError"
done_testing
