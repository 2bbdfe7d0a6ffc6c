#!/bin/sh
# End-to-end: `stackie blocks`, `stackie blocks show` and `stackie search` against the shipped
# catalog plus a directory of our own on STACKIE_BLOCK_PATH (a block whose program is missing,
# and a broken definition). No daemon.
set -u
B=${STACKIE_BUILD_ROOT:?}/src
S=$B/stackie
. "$(dirname "$0")/lib.sh"
T=$(mktemp -d /tmp/stackie-catalog-cli-XXXXXX)
trap 'rm -rf "$T"' EXIT
export STACKIE_HOME=$T/home
mkdir "$T/blocks"
cp "${STACKIE_SOURCE_ROOT:?}/tests/fixtures/blocks/fixture.missing.yml" "$T/blocks/"
printf 'fixture.broken:\n  description: [not, a, string]\n  command: [true]\n' > "$T/blocks/fixture.broken.yml"
field() {  # field PYTHON-EXPRESSION over the JSON document `doc` on stdin
  python3 -c "import json, sys; doc = json.load(sys.stdin); print($1)"
}

out=$(STACKIE_BLOCK_PATH=$T/blocks "$S" blocks --json 2>"$T/err"); check "blocks --json exits 1 when a definition is broken" 1 $?
contains "the broken file is named with its position" "$(cat "$T/err")" "fixture.broken.yml:2:16: "
names=$(printf '%s' "$out" | field '" ".join(b["name"] for b in doc["blocks"])')
for name in stackie.postgres stackie.redis stackie.mariadb stackie.mysql fixture.missing; do
  contains "blocks lists $name" "$names" "$name"
done
out=$(STACKIE_BLOCK_PATH= "$S" blocks --json); check "blocks --json of the shipped catalog" 0 $?
row() { printf '%s' "$out" | field "[b for b in doc['blocks'] if b['name'] == '$1'][0]$2"; }
equals "mysql is another name of mariadb" "$(row stackie.mysql "['alias_of']")" "stackie.mariadb"
equals "mariadb serves mysql on 3306" "$(row stackie.mariadb "['ports']")" \
  "[{'name': 'mysql', 'port': 3306, 'type': 'mysql'}]"
if [ -x /usr/sbin/mariadbd ] && command -v mariadb-admin >/dev/null; then
  equals "mariadb is ready on this host" "$(row stackie.mariadb "['ready']")" "True"
  equals "where mariadbd was found" "$(row stackie.mariadb "['programs'][0]['path']")" "/usr/sbin/mariadbd"
else
  skip "mariadb is not installed here (apt-get install mariadb-server)"
  skip "where mariadbd was found"
fi

out=$(STACKIE_BLOCK_PATH=$T/blocks "$S" blocks 2>/dev/null)
contains "the table's header" "$out" "^NAME *PORTS *PROGRAMS *DESCRIPTION"
contains "a missing program shows the install command" "$out" \
  "^fixture.missing .*apt-get install stackie-no-such-package"
contains "the alias row" "$out" "^stackie.mysql *3306/mysql .*another name of stackie.mariadb"

out=$(STACKIE_BLOCK_PATH= "$S" search MYSQL --json); check "search MYSQL" 0 $?
equals "search finds the alias and the description" \
  "$(printf '%s' "$out" | field '" ".join(b["name"] for b in doc["blocks"])')" "stackie.mariadb stackie.mysql"
out=$(STACKIE_BLOCK_PATH= "$S" search no-such-thing); check "a search with no match exits 0" 0 $?
equals "and prints the header only" "$(printf '%s\n' "$out" | wc -l)" "1"

out=$(STACKIE_BLOCK_PATH= "$S" blocks show stackie.mysql --json); check "blocks show --json" 0 $?
equals "its vars with their defaults" \
  "$(printf '%s' "$out" | field '[(v["name"], v["default"]) for v in doc["block"]["vars"]]')" \
  "[('root_password', '\${secrets.MARIADB_ROOT_PASSWORD}'), ('user', 'app'), ('password', '\${secrets.MARIADB_PASSWORD}'), ('database', 'app')]"
equals "its packages per OS" "$(printf '%s' "$out" | field 'doc["block"]["programs"][0]["packages"]')" \
  "{'apt': 'mariadb-server', 'brew': 'mariadb', 'winget': 'MariaDB.Server'}"
contains "the definition's text" "$(printf '%s' "$out" | field 'doc["block"]["definition"]')" "mariadb-install-db"
out=$(STACKIE_BLOCK_PATH= "$S" blocks show stackie.mariadb); check "blocks show (text)" 0 $?
contains "the var line" "$out" "^var *database (default: app)"
contains "then the file" "$out" "^stackie.mariadb:$"
out=$(STACKIE_BLOCK_PATH= "$S" blocks show stackie.postgress 2>&1); check "show of an unknown block" 1 $?
equals "one line with a did-you-mean" "$out" \
  "stackie: unknown block 'stackie.postgress': not in the block catalog; did you mean 'stackie.postgres'?"
"$S" blocks list >/dev/null 2>&1; check "an unknown subcommand is a usage error" 2 $?
"$S" search >/dev/null 2>&1; check "search without a term is a usage error" 2 $?
done_testing
