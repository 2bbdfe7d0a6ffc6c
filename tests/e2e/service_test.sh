#!/bin/sh
# End-to-end: stackied under a service manager. `stackie daemon install/uninstall` in a
# temporary XDG_CONFIG_HOME (files, systemd-analyze verify, enable links removed), the plist
# parsed as XML, and socket activation: the real stackied started with a pre-bound listening
# socket as fd 3 (LISTEN_FDS=1, LISTEN_PID) and NOTIFY_SOCKET on an abstract address, driven by
# the real stackie CLI, sending READY=1 and STOPPING=1.
set -u
B=${STACKIE_BUILD_ROOT:?}
SRC=${STACKIE_SOURCE_ROOT:?}
S=$B/src/stackie
T=$(mktemp -d /tmp/stackie-service-e2e-XXXXXX)
export STACKIE_HOME=$T/home
export XDG_CONFIG_HOME=$T/config
unset XDG_RUNTIME_DIR NOTIFY_SOCKET LISTEN_FDS LISTEN_PID
. "$(dirname "$0")/lib.sh"
manager=
cleanup() {
  [ -n "$manager" ] && kill "$manager" 2>/dev/null
  pid=$(cat "$STACKIE_HOME/stackied.pid" 2>/dev/null)
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && sleep 1 && kill -9 "$pid" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT

units=$XDG_CONFIG_HOME/systemd/user

# --- install / uninstall ---
out=$("$S" daemon install 2>&1); check "daemon install" 0 $?
contains "install says what it wrote" "$out" "wrote $units/stackied.service"
contains "install prints the enable command" "$out" \
  "systemctl --user daemon-reload && systemctl --user enable --now stackied.service"
contains "install warns that systemd's XDG_RUNTIME_DIR moves the socket" "$out" \
  "warning: XDG_RUNTIME_DIR is not set here"
[ -f "$units/stackied.service" ] && [ ! -e "$units/stackied.socket" ]
check "install without --socket-activation writes only the service" 0 $?
grep -qx "ExecStart=$B/src/stackied --foreground" "$units/stackied.service"
check "ExecStart is the absolute stackied next to stackie" 0 $?
grep -qx "Environment=\"STACKIE_HOME=$STACKIE_HOME\"" "$units/stackied.service"
check "the unit keeps this STACKIE_HOME" 0 $?

out=$("$S" daemon install --socket-activation 2>&1); check "daemon install --socket-activation" 0 $?
contains "install names the socket unit" "$out" "wrote $units/stackied.socket"
contains "the socket unit is what gets enabled" "$out" "enable --now stackied.socket"
grep -qx "ListenStream=$STACKIE_HOME/run/stackied.sock" "$units/stackied.socket"
check "ListenStream is the socket stackie uses" 0 $?
XDG_RUNTIME_DIR=$T/runtime "$S" daemon install --socket-activation >/dev/null
grep -qx 'ListenStream=%t/stackie/stackied.sock' "$units/stackied.socket"
check "a socket under XDG_RUNTIME_DIR is written as %t" 0 $?
"$S" daemon install --bogus >/dev/null 2>&1; check "install with an unknown flag exits 2" 2 $?

verify() {  # verify NAME FILE...: offline, for this user, no man page lookups; silent when clean
  name=$1; shift
  mkdir -p "$T/runtime"
  if XDG_RUNTIME_DIR=$T/runtime systemd-analyze --user --man=no verify "$@" >"$T/verify" 2>&1 &&
    [ ! -s "$T/verify" ]; then ok "$name"; else bad "$name: $(cat "$T/verify")"; fi
}
if command -v systemd-analyze >/dev/null 2>&1; then
  verify "systemd-analyze verify: installed units" "$units/stackied.service" "$units/stackied.socket"
  # The shipped copies name the installed stackied, absent here: verify them with ours.
  mkdir -p "$T/shipped"
  sed "s#^ExecStart=[^ ]*#ExecStart=$B/src/stackied#" "$B/share/stackied.service" \
    >"$T/shipped/stackied.service"
  cp "$B/share/stackied.socket" "$T/shipped/"
  verify "systemd-analyze verify: units shipped in share/" "$T/shipped/stackied.service" \
    "$T/shipped/stackied.socket"
  sed 's/^Type=notify/Type=notfiy/' "$units/stackied.service" >"$T/shipped/stackied.service"
  if XDG_RUNTIME_DIR=$T/runtime systemd-analyze --user --man=no verify \
    "$T/shipped/stackied.service" >"$T/verify" 2>&1 && [ ! -s "$T/verify" ]; then
    bad "systemd-analyze verify notices a broken unit"
  else ok "systemd-analyze verify notices a broken unit"; fi
else
  skip "systemd-analyze verify: systemd-analyze is not installed (Debian: systemd)"
fi

for plist in "$B/share/dev.stackie.stackied.plist" "$T/agent.plist"; do
  [ "$plist" = "$T/agent.plist" ] && "$B/src/stackie-service-units" launchd-plist \
    --program "/Users/a & b/bin/stackied" --home "/Users/a & b/.stackie" \
    --log "/Users/a & b/.stackie/stackied.log" >"$plist"
  python3 - "$plist" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "plist", root.tag
d = root.find("dict")
keys = [k.text for k in d.findall("key")]
values = dict(zip(keys, [e for e in d if e.tag != "key"]))
assert values["Label"].text == "dev.stackie.stackied"
args = [s.text for s in values["ProgramArguments"].findall("string")]
assert args[0].endswith("/stackied") and args[1:] == ["--foreground"], args
assert values["KeepAlive"].find("key").text == "SuccessfulExit"
if "StandardErrorPath" in values:
    assert values["StandardErrorPath"].text == "/Users/a & b/.stackie/stackied.log"
    assert values["EnvironmentVariables"].find("string").text == "/Users/a & b/.stackie"
PY
  check "the plist parses as XML with its keys ($(basename "$plist"))" 0 $?
done

# launchd socket activation: the Sockets entry stackied asks for ("Listeners"), on the socket
# the CLI uses, mode 0600 in decimal; the daemon then starts on the first connection.
"$B/src/stackie-service-units" launchd-plist --program "/Users/a & b/bin/stackied" \
  --socket "/Users/a & b/.stackie/run/stackied.sock" --socket-activation >"$T/activated.plist"
python3 - "$T/activated.plist" <<'PY'
import sys, xml.etree.ElementTree as ET
d = ET.parse(sys.argv[1]).getroot().find("dict")
def as_dict(node):
    children = list(node)
    return {k.text: v for k, v in zip(children[::2], children[1::2])}
top = as_dict(d)
assert "RunAtLoad" not in top, "an activated agent starts on demand"
listeners = as_dict(as_dict(top["Sockets"])["Listeners"])
assert listeners["SockPathName"].text == "/Users/a & b/.stackie/run/stackied.sock"
assert listeners["SockPathMode"].tag == "integer" and int(listeners["SockPathMode"].text) == 0o600
PY
check "the activated plist has the Sockets entry on the CLI's socket" 0 $?

mkdir -p "$units/default.target.wants" "$units/sockets.target.wants"
ln -s ../stackied.service "$units/default.target.wants/stackied.service"
ln -s "$units/stackied.socket" "$units/sockets.target.wants/stackied.socket"
ln -s /elsewhere/other.service "$units/default.target.wants/other.service"
out=$("$S" daemon uninstall 2>&1); check "daemon uninstall" 0 $?
contains "uninstall says what it removed" "$out" "removed $units/stackied.service"
contains "uninstall removes the socket unit" "$out" "removed $units/stackied.socket"
contains "uninstall removes the enable links" "$out" \
  "removed $units/default.target.wants/stackied.service"
[ ! -e "$units/stackied.service" ] && [ ! -e "$units/stackied.socket" ] &&
  [ ! -L "$units/default.target.wants/stackied.service" ] &&
  [ ! -L "$units/sockets.target.wants/stackied.socket" ]
check "uninstall leaves none of what install wrote" 0 $?
[ -L "$units/default.target.wants/other.service" ]; check "uninstall leaves other units' links" 0 $?
out=$("$S" daemon uninstall 2>&1); check "a second uninstall is fine" 0 $?
contains "and says there was nothing" "$out" "nothing to remove"

# --- socket activation and sd_notify with the real daemon ---
mkdir -p "$STACKIE_HOME/run" && chmod 700 "$STACKIE_HOME" "$STACKIE_HOME/run"
cd "$T" && cat >stackie.yml <<'YML'
svc:
  blocks:
    web:
      command: "echo listen_fds=$${LISTEN_FDS:-unset}; exec sleep 600"
      restart: "no"
YML
sock=$STACKIE_HOME/run/stackied.sock
notify=@stackie-service-e2e-$$
python3 "$SRC/tests/e2e/activate.py" "$sock" "$notify" "$T/notify.log" -- \
  "$B/src/stackied" --foreground 2>"$T/daemon.log" &
manager=$!
for i in $(seq 50); do grep -q READY=1 "$T/notify.log" 2>/dev/null && break; sleep 0.1; done
grep -qx READY=1 "$T/notify.log" 2>/dev/null; check "stackied sends READY=1 to an abstract NOTIFY_SOCKET" 0 $?
contains "stackied serves the socket it was passed" "$(cat "$T/daemon.log")" \
  "listening on the socket the service manager passed (fd 3)"
out=$(timeout 20 "$S" up --no-sandbox 2>&1); check "up through the activated socket" 0 $?
contains "up names the stack" "$out" "stack svc is up"
out=$(timeout 10 "$S" ps 2>&1); contains "ps through the activated socket" "$out" "web.*running"
sleep 0.5
out=$(timeout 10 "$S" logs web 2>&1)
contains "LISTEN_FDS does not reach the blocks" "$out" "listen_fds=unset"
grep -q STOPPING=1 "$T/notify.log"; check "no STOPPING=1 before a stop" 1 $?
out=$(timeout 10 "$S" daemon stop 2>&1); check "daemon stop" 0 $?
wait "$manager"; check "stackied exits 0 after daemon stop" 0 $?
manager=
grep -qx STOPPING=1 "$T/notify.log"; check "stackied sends STOPPING=1" 0 $?
check "READY=1 then STOPPING=1, once each" "READY=1 STOPPING=1" "$(tr '\n' ' ' <"$T/notify.log" | sed 's/ $//')"

# A socket passed to another process (LISTEN_PID not ours) is not taken: stackied binds its own.
LISTEN_FDS=1 LISTEN_PID=1 "$B/src/stackied" --foreground 2>"$T/daemon2.log" &
d2=$!
for i in $(seq 50); do [ -S "$sock" ] && timeout 5 "$S" daemon status >/dev/null 2>&1 && break; sleep 0.1; done
contains "a LISTEN_PID of another process is ignored" "$(cat "$T/daemon2.log")" "listening on $sock"
timeout 10 "$S" daemon stop >/dev/null 2>&1
wait $d2; check "that daemon stops too" 0 $?

LISTEN_FDS=1 LISTEN_PID=zero "$B/src/stackied" --foreground 2>"$T/daemon3.log"
check "a malformed LISTEN_PID is an error" 1 $?
contains "and says why" "$(cat "$T/daemon3.log")" "LISTEN_PID is not a pid"

done_testing
