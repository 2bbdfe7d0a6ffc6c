#!/bin/sh
# End-to-end, the stack file forms of issue 22 (tests/fixtures/good/documented): brought up for
# real with Debian's postgres. `storage_root: scratch` is where config.toml's [storage_roots]
# says; `paths: {data: /var/lib/postgresql/data}` runs postgres on its usual path inside the
# sandbox while the data stay in the block's volume; a first-party block writes to its mapped
# /srv/uploads; a block of `sources:` (the project's own definition) and one of a substack
# (`stacks:`, with an override) run with the rest; `tools:` puts python3 on the web's PATH.
# Real binaries, a real daemon, a temporary STACKIE_HOME; unprivileged (postgres refuses root).
set -u
B=${STACKIE_BUILD_ROOT:?}/src
S=$B/stackie
SRC=${STACKIE_SOURCE_ROOT:?}
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" = 0 ]; then
  bail_out "run as an unprivileged user: postgres refuses to run as root (CI runs this as stackie-test)"
fi
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [ ! -x "$pg_bin/postgres" ] && ! command -v postgres >/dev/null; then
  skip_all "no postgres on this host (apt-get install postgresql)"
fi

T=$(mktemp -d /tmp/stackie-forms-e2e-XXXXXX)
export STACKIE_HOME=$T/home
unset XDG_RUNTIME_DIR POSTGRES_PASSWORD
cleanup() {
  (cd "$T/shop" && timeout 60 "$S" down >/dev/null 2>&1)
  stop_daemon "$S" 20
  rm -rf "$T"
}
trap cleanup EXIT
run() { timeout 30 "$S" "$@"; }

cp -r "$SRC/tests/fixtures/good/documented" "$T/shop"
# A tool outside the system directories (as ~/.local/bin or /opt/node/bin would be).
mkdir -p "$T/tools/bin"
printf '#!/bin/sh\necho greetings from a tool\n' > "$T/tools/bin/greet"
chmod 755 "$T/tools/bin/greet"
sed -i "s|tools: \[python3\]|tools: {python3: {}, greet: {search: [$T/tools/bin]}}|" "$T/shop/stackie-stack.yml"
mkdir -p "$STACKIE_HOME"
printf '[storage_roots]\nscratch = "%s"\n' "$T/scratch" > "$STACKIE_HOME/config.toml"

out=$(cd "$T/shop" && timeout 240 "$S" up --wait 2>&1); check "up of the documented project" 0 $?
[ $? = 0 ] || note "$out"
ps_out=$(cd "$T/shop" && run ps 2>&1)
for block in stackie.postgres acme.mailer invoices web; do
  contains "$block runs" "$ps_out" "^$block  *running"
done

# paths: postgres sees its data at the usual path; the host keeps them in its volume, which
# is below the named storage root.
pgdata=$(cd "$T/shop" && run exec stackie.postgres -- sh -c 'echo "$PGDATA"; ls "$PGDATA/PG_VERSION"' 2>&1)
contains "PGDATA is /var/lib/postgresql/data inside" "$pgdata" "^/var/lib/postgresql/data$"
contains "the cluster is there inside" "$pgdata" "^/var/lib/postgresql/data/PG_VERSION$"
[ -f "$T/scratch/volumes/shop/postgres/data/PG_VERSION" ]
check "on the host the cluster is in the volume below storage_root 'scratch'" 0 $?
answer=$(cd "$T/shop" && run exec stackie.postgres -- psql -tAc 'show data_directory' 2>&1)
equals "postgres itself reports the inside path" "$answer" "/var/lib/postgresql/data"

# paths on a block of the project: a managed volume at /srv/uploads
(cd "$T/shop" && run exec web -- sh -c 'echo hi > /srv/uploads/note') >/dev/null 2>&1
check "web writes to /srv/uploads" 0 $?
equals "the file is in web's volume on the host" "$(cat "$T/scratch/volumes/shop/web/uploads/note" 2>&1)" "hi"

# tools: each tool's directory is shown read-only and first on web's PATH
path=$(cd "$T/shop" && run exec web -- sh -c 'echo "$PATH"' 2>&1)
contains "tools put greet's directory first on web's PATH" "$path" "^$T/tools/bin:"
equals "web runs the tool by its name" "$(cd "$T/shop" && run exec web -- greet 2>&1)" "greetings from a tool"
if (cd "$T/shop" && run exec web -- sh -c "echo x > $T/tools/bin/planted") >/dev/null 2>&1; then
  bad "a tool's directory is read-only to the block"
else
  ok "a tool's directory is read-only to the block"
fi

# stacks: the substack's block, with the including file's override, in its own directory
inv=$(cd "$T/shop" && run exec invoices -- sh -c 'echo "$CURRENCY $PWD"' 2>&1)
equals "invoices has the override's environment and its own directory" "$inv" "EUR $T/shop/billing"
if (cd "$T/shop" && run exec invoices -- sh -c 'echo x >> stackie-stack.yml') >/dev/null 2>&1; then
  bad "the substack file is read-only to its own block"
else
  ok "the substack file is read-only to its own block"
fi

out=$(cd "$T/shop" && timeout 120 "$S" down 2>&1); check "down" 0 $?
[ -f "$T/scratch/volumes/shop/postgres/data/PG_VERSION" ]
check "the data stay after down" 0 $?

done_testing
