#!/bin/sh
# End-to-end on macOS only (registered when the host is Darwin; issue 19): the managed blocks
# stackie.postgres and stackie.redis with Homebrew's servers (brew install postgresql@16 redis),
# the real stackie and stackied, the Seatbelt lockbox, a temporary STACKIE_HOME. Checks: `up`
# gets both healthy; `ps` shows the kind seatbelt; psql and redis-cli work through `stackie exec`
# (postgres over its unix socket in the runtime dir, redis over its declared port); after `down`
# no postgres or redis process of this stack is left. Never run yet: no Mac here.
# macOS has no timeout(1): perl's alarm bounds each command instead.
set -u
B=${STACKIE_BUILD_ROOT:?}/src
S=$B/stackie
. "$(dirname "$0")/lib.sh"
[ "$(uname -s)" = Darwin ] || skip_all "macOS only"
[ "$(id -u)" != 0 ] || bail_out "run as yourself: postgres refuses root"
for formula in postgresql@16 redis; do
  brew list --versions "$formula" >/dev/null 2>&1 ||
    skip_all "Homebrew $formula missing (brew install postgresql@16 redis)"
done

bounded() { seconds=$1; shift; perl -e 'alarm shift; exec @ARGV or die "exec: $!"' "$seconds" "$@"; }
T=$(mktemp -d "${TMPDIR:-/tmp}/stackie-macos-e2e-XXXXXX")
T=$(cd "$T" && pwd -P)  # /var/folders/... is /private/var/folders/... (Seatbelt sees the latter)
export STACKIE_HOME=$T/home
cleanup() {
  bounded 60 "$S" down macshop >/dev/null 2>&1
  stop_daemon "" 20
  rm -rf "$T"
}
trap cleanup EXIT
run() { bounded 30 "$S" "$@"; }
cd "$T" || exit 1
cat > stackie-stack.yml <<'YML'
macshop:
  blocks:
    stackie.postgres:
      vars:
        database: shop
    stackie.redis:
YML
printf 'secrets:\n  POSTGRES_PASSWORD: %s\n' "mac-e2e-$$" > stackie-stack.secrets.yml

bounded 240 "$S" up >"$T/up.log" 2>&1
check "up brings postgres and redis up" 0 $?
ps_out=$(run ps 2>&1)
contains "ps shows the Seatbelt sandbox" "$ps_out" seatbelt
check "psql through stackie exec (unix socket in the runtime dir)" 1 \
  "$(run exec stackie.postgres -- psql -X -At -c 'select 1' 2>&1)"
check "redis-cli through stackie exec" PONG "$(run exec stackie.redis -- redis-cli ping 2>&1)"

run down macshop >/dev/null 2>&1
check "down" 0 $?
left=$(pgrep -f "$T/home" 2>/dev/null | grep -v "^$$\$" || true)
equals "no process of the stack survives down" "$left" ""

[ "$fails" -eq 0 ] || sed 's/^/# /' "$T/up.log"
done_testing
