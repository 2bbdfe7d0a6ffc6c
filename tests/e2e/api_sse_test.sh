#!/bin/sh
# End-to-end, issue 21: the HTTP API's Server-Sent Events read by a browser's kind of client
# (the WHATWG EventSource of the npm package `eventsource`, pinned below) against a real daemon
# with the API on: lifecycle events of a restart, followed log lines, streamed stats of a busy
# block, and a page's request (Origin) or one without the token refused and not retried. Also
# prints `stackie stats` of the busy block (the transcript issue 21 asks for). Without node or
# the registry the whole script is skipped, saying which.
set -u
B=${STACKIE_BUILD_ROOT:?}/src
S=$B/stackie
HERE=$(cd "$(dirname "$0")" && pwd)
EVENTSOURCE_VERSION=3.0.7
T=$(mktemp -d /tmp/stackie-sse-e2e-XXXXXX)
export STACKIE_HOME=$T/home
unset XDG_RUNTIME_DIR
. "$HERE/lib.sh"
cleanup() {
  stop_daemon "$S" 10
  rm -rf "$T"
}
trap cleanup EXIT
chmod 755 "$T"

npm_package eventsource "$EVENTSOURCE_VERSION"
note "SSE client: eventsource $(node -p "require('$NPM_DIR/node_modules/eventsource/package.json').version") (node $(node --version))"

# A free port: 30000-39999, as this process's pid picks.
P=$((30000 + $$ % 9000))
while ! python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',$P))" 2>/dev/null; do
  P=$((P + 1))
done
mkdir -p "$STACKIE_HOME" && chmod 700 "$STACKIE_HOME"
echo "api_port = $P" >"$STACKIE_HOME/config.toml"
mkdir -p "$T/demo" && cd "$T/demo"
cat > stackie.yml <<'YML'
ssedemo:
  blocks:
    ticker:
      command: [sh, -c, 'i=0; while :; do i=$((i+1)); echo "tick $i"; sleep 0.2; done']
    busy:
      command: [sh, -c, 'while :; do :; done']
YML
out=$(timeout 120 "$S" up 2>&1); check "up of the demo stack (the daemon serves the API)" 0 $?
[ -s "$STACKIE_HOME/api.token" ]; check "the token file is made" 0 $?

out=$("$S" stats --no-stream 2>&1); check "stackie stats --no-stream" 0 $?
printf '%s\n' "$out" | sed 's/^/# stats: /'
contains "stats shows the busy block" "$out" "busy"

cp "$HERE/api_sse_client.mjs" "$T/api_sse_client.mjs"
ln -s "$NPM_DIR/node_modules" "$T/node_modules"
API_BASE=http://127.0.0.1:$P API_TOKEN=$(cat "$STACKIE_HOME/api.token") \
  timeout 120 node "$T/api_sse_client.mjs" >"$T/client.out" 2>"$T/client.err"
rc=$?
while IFS= read -r line; do
  case $line in
    "ok - "*) ok "${line#ok - }" ;;
    "not ok - "*) bad "${line#not ok - }" ;;
    *) printf '%s\n' "$line" | cut -c1-600 ;;
  esac
done <"$T/client.out"
check "the client ran to its end" 0 "$rc"
[ -s "$T/client.err" ] && head -c 2000 "$T/client.err" | sed 's/^/# client stderr: /'
out=$(timeout 60 "$S" down 2>&1); check "down" 0 $?
done_testing
