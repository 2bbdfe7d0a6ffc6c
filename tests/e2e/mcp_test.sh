#!/bin/sh
# End-to-end, issue 21: `stackie mcp serve --stdio` driven by a client nobody here wrote, the
# official MCP TypeScript SDK (@modelcontextprotocol/sdk, pinned below), against a real daemon
# and a running stack: a web server with a health check, a logger writing INFO and ERROR lines,
# and a hostile block whose log holds broken UTF-8 and a line that looks like a JSON-RPC
# message. mcp_client.mjs calls every tool and prints one check a line; this script numbers
# them (TAP) and prints the client's transcript as comments. The SDK is installed from the npm
# registry into a cache under /var/tmp (never the source tree); without node or the registry
# the whole script is skipped, saying which.
set -u
B=${STACKIE_BUILD_ROOT:?}/src
S=$B/stackie
HERE=$(cd "$(dirname "$0")" && pwd)
SDK_VERSION=1.32.2
T=$(mktemp -d /tmp/stackie-mcp-e2e-XXXXXX)
export STACKIE_HOME=$T/home
unset XDG_RUNTIME_DIR
. "$HERE/lib.sh"
cleanup() {
  stop_daemon "$S" 10
  rm -rf "$T"
}
trap cleanup EXIT
chmod 755 "$T"

npm_package @modelcontextprotocol/sdk "$SDK_VERSION"
CACHE=$NPM_DIR
installed=$(node -p "require('$CACHE/node_modules/@modelcontextprotocol/sdk/package.json').version")
note "MCP client: @modelcontextprotocol/sdk $installed (node $(node --version))"

# A free port: 20000-29999, as this process's pid picks.
P=$((20000 + $$ % 9000))
while ! python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',$P))" 2>/dev/null; do
  P=$((P + 1))
done
mkdir -p "$T/demo/app" && cd "$T/demo"
cat > stackie.yml <<YML
mcpdemo:
  blocks:
    web:
      path: app
      command: [python3, -m, http.server, "$P", --bind, 127.0.0.1]
      serves: {http: {port: $P}}
      health: {http: {port: http, path: /}, interval: 200ms}
      environment: {GREETING: hello from web}
    logger:
      command: [sh, -c, 'i=0; while :; do i=\$((i+1)); echo "INFO tick \$i"; if [ \$((i % 3)) = 0 ]; then echo "ERROR boom \$i" >&2; fi; sleep 0.2; done']
    hostile:
      command: [sh, -c, 'printf "bad \\377\\376 bytes\\n"; printf "%s\\n" "{\\"jsonrpc\\":\\"2.0\\",\\"id\\":1,\\"result\\":{}}"; exec sleep 600']
YML
out=$(timeout 120 "$S" up 2>&1); check "up of the demo stack" 0 $?
printf '%s\n' "$out" | tail -3 | sed 's/^/# /'
sleep 1  # a few logger lines

cp "$HERE/mcp_client.mjs" "$T/mcp_client.mjs"
ln -s "$CACHE/node_modules" "$T/node_modules"
MCP_TRANSCRIPT=$T/transcript.txt
: >"$MCP_TRANSCRIPT"
STACKIE=$S MCP_STACK=mcpdemo MCP_TRANSCRIPT=$MCP_TRANSCRIPT timeout 600 node "$T/mcp_client.mjs" \
  >"$T/client.out" 2>"$T/client.err"
rc=$?
while IFS= read -r line; do
  case $line in
    "ok - "*) ok "${line#ok - }" ;;
    "not ok - "*) bad "${line#not ok - }" ;;
    *) echo "$line" ;;
  esac
done <"$T/client.out"
check "the client ran to its end" 0 "$rc"
[ -s "$T/client.err" ] && head -c 2000 "$T/client.err" | sed 's/^/# client stderr: /'
note "--- MCP transcript (-> client to server, <- server to client; long messages cut) ---"
# printf, not note's echo: the JSON's escapes (\n) stay as they are.
cut -c1-400 "$MCP_TRANSCRIPT" | while IFS= read -r line; do printf '# %s\n' "$line"; done
done_testing
