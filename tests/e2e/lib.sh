# Sourced by the end-to-end scripts (sh): TAP output, the verdict helpers, and stopping the
# daemon of $STACKIE_HOME for sure. meson runs the scripts with protocol 'tap', so every check is
# a result of its own: "ok N - NAME", "not ok N - NAME: why", "ok N - # SKIP why". A script ends
# with done_testing (the plan line "1..N"; exit status 1 when a check failed).
fails=0
tests=0
ok() { tests=$((tests + 1)); echo "ok $tests - $1"; }
bad() { tests=$((tests + 1)); fails=$((fails + 1)); echo "not ok $tests - $1"; }
skip() { tests=$((tests + 1)); echo "ok $tests - # SKIP $1"; }
note() { echo "# $*"; }
# The whole script cannot run on this host (say what is missing): one skipped plan.
skip_all() { echo "1..0 # SKIP $1"; exit 0; }
# The script cannot run at all for a reason that is an error, not a missing host feature.
bail_out() { echo "Bail out! $1"; exit 1; }
done_testing() {
  echo "1..$tests"
  [ "$fails" -eq 0 ]
}
check() {  # check NAME EXPECTED ACTUAL (an exit status, a word...)
  if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: got '$3', wanted '$2'"; fi
}
equals() {  # equals NAME ACTUAL EXPECTED
  if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: got '$2', wanted '$3'"; fi
}
contains() {  # contains NAME TEXT PATTERN (grep)
  if printf '%s' "$2" | grep -q -- "$3"; then ok "$1"; else bad "$1: no '$3' in: $2"; fi
}
# The daemon of $STACKIE_HOME, asked to stop by the stackie binary $1, then SIGKILLed if it
# lingers (a failed test must not leave it running).
stop_daemon() {
  [ -n "$1" ] && timeout "${2:-10}" "$1" daemon stop >/dev/null 2>&1
  pid=$(cat "$STACKIE_HOME/stackied.pid" 2>/dev/null)
  [ -n "$pid" ] && sleep 1 && kill -9 "$pid" 2>/dev/null
  return 0
}

# wait_log STACKIE STACK/BLOCK TEXT: the block's log once it holds TEXT (or what it holds after
# 10 s), through the stackie binary STACKIE.
wait_log() {
  out=""
  for _ in $(seq 1 50); do
    out=$(timeout 60 "$1" logs "$2" 2>/dev/null)
    printf '%s' "$out" | grep -q -- "$3" && break
    sleep 0.2
  done
  printf '%s' "$out"
}

# npm_package NAME VERSION: NAME@VERSION from the npm registry, installed once per user and
# version into a cache under /var/tmp (never the source tree) and shared by later runs; sets
# NPM_DIR to the directory holding its node_modules/. Skips the whole script, saying which,
# when node, npm or the registry is missing. The system's CA bundle is added to node's own (a
# proxy that re-signs TLS, as on a CI runner behind one, is trusted as curl does).
npm_package() {
  command -v node >/dev/null 2>&1 || skip_all "node is not installed (the $1 client needs it)"
  command -v npm >/dev/null 2>&1 || skip_all "npm is not installed (to fetch $1)"
  if [ -z "${NODE_EXTRA_CA_CERTS:-}" ] && [ -r /etc/ssl/certs/ca-certificates.crt ]; then
    export NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
  fi
  NPM_DIR=${STACKIE_NPM_CACHE:-/var/tmp/stackie-npm-$(id -u)}/$(echo "$1" | tr -d @ | tr / -)-$2
  [ -f "$NPM_DIR/node_modules/$1/package.json" ] && return 0
  mkdir -p "$(dirname "$NPM_DIR")"
  npm_staging=$(mktemp -d "$(dirname "$NPM_DIR")/staging-XXXXXX")
  if ! timeout 300 npm install --prefix "$npm_staging" --no-audit --no-fund --ignore-scripts \
    --no-save --fetch-retries 1 --cache "$npm_staging/.npm" "$1@$2" >"$npm_staging.log" 2>&1; then
    why=$(grep -m1 -i "err" "$npm_staging.log")
    rm -rf "$npm_staging" "$npm_staging.log"
    skip_all "npm cannot fetch $1@$2 (registry unreachable?): $why"
  fi
  rm -rf "$npm_staging/.npm" "$npm_staging.log"
  mv "$npm_staging" "$NPM_DIR" 2>/dev/null || rm -rf "$npm_staging"  # another run may have won
}
