#!/bin/sh
# End-to-end: stackie.mariadb (and its other name stackie.mysql) with the host's real MariaDB
# server and its `mariadb` client (Debian: mariadb-server, mariadb-client). The init creates the
# system tables in the volume and the database and user from the vars, with passwords from the
# secrets file (never on a command line); the client creates a table and reads it back through
# the forwarded port (password auth) and through `stackie exec` (the socket, as the caller's own
# OS user: no password); the rows survive down/up and kill -9 of stackied (InnoDB recovery).
set -u
B=${STACKIE_BUILD_ROOT:?}/src
S=$B/stackie
. "$(dirname "$0")/lib.sh"
if ! { [ -x /usr/sbin/mariadbd ] || command -v mariadbd >/dev/null; } ||
  ! command -v mariadb >/dev/null; then
  skip_all "no mariadbd/mariadb on this host (apt-get install mariadb-server mariadb-client)"
fi
. "$(dirname "$0")/catalog_lib.sh"

cat > "$T/stackie-stack.yml" <<'YML'
shop:
  blocks:
    stackie.mysql:
      vars:
        database: shop
        user: shopper
YML
ROOT_PW="root-'e2e\\$$"   # a quote and a backslash: the init must quote them in SQL
APP_PW=app-e2e-$$
printf 'secrets:\n  MARIADB_ROOT_PASSWORD: "%s"\n  MARIADB_PASSWORD: %s\n' \
  "$(printf '%s' "$ROOT_PW" | sed 's/\\/\\\\/g')" "$APP_PW" > "$T/stackie-stack.secrets.yml"
# The host's client over TCP: PASSWORD USER SQL (no option file: only what is given here).
host_sql() {
  MYSQL_PWD=$1 timeout 30 mariadb --no-defaults --protocol=tcp -h 127.0.0.1 -P "$PORT" \
    -u "$2" -N -B shop -e "$3"
}
exec_sql() { run exec stackie.mysql -- mariadb -N -B shop -e "$1"; }

out=$(up 2>&1); check "up of stackie.mysql (the init runs)" 0 $?
contains "up names the stack" "$out" "stack shop is up"
equals "running and healthy" "$(state_of stackie.mysql)" "running healthy"
PORT=$(host_port stackie.mysql mysql)
[ -n "$PORT" ]; check "a forwarded host port ($PORT)" 0 $?

# --- through the forwarded port: the app user from the vars, then root ---------------------
host_sql "$APP_PW" shopper "create table items (id int primary key, name text) engine=InnoDB;
  insert into items values (1, 'one'), (2, 'two');"
check "host client: shopper creates a table in shop" 0 $?
out=$(host_sql "$APP_PW" shopper "select group_concat(name order by id) from items")
equals "host client reads the rows back" "$out" "one,two"
out=$(host_sql "$ROOT_PW" root "select current_user()"); check "root with the secret's password" 0 $?
equals "as root@127.0.0.1" "$out" "root@127.0.0.1"
out=$(host_sql wrong root "select 1" 2>&1); check "root with a wrong password is refused" 1 $?
contains "access denied" "$out" "Access denied"
out=$(host_sql "$APP_PW" shopper "create database other" 2>&1)
check "shopper has no rights beyond its database" 1 $?

# --- through exec: the socket, the caller's own user, no password ---------------------------
out=$(exec_sql "select count(*) from items"); check "exec mariadb (no options, no password)" 0 $?
equals "exec sees the same rows" "$out" "2"
exec_sql "insert into items values (3, 'three')"; check "exec inserts a row" 0 $?
out=$(host_sql "$APP_PW" shopper "select name from items where id = 3")
equals "the host sees the row exec wrote" "$out" "three"
out=$(run exec stackie.mysql -- sh -c 'ls "$MYSQL_HOME/mysqld.sock" && stat -c %a "$MYSQL_HOME"')
contains "the socket is in the private runtime directory" "$out" "700"

# --- secrets: in no command line, not in the volume's config --------------------------------
run exec stackie.mysql -- sleep 3 & exec_pid=$!
sleep 1.5
out=$(scan_cmdlines "$APP_PW"; scan_cmdlines "$ROOT_PW")
wait $exec_pid
equals "no secret in any command line while the block and an exec run" "$out" "scanned many
scanned many"
volume=$STORAGE/volumes/shop/mysql/data
[ -d "$volume/mysql" ]; check "the system tables are in the block's volume" 0 $?
[ -d "$volume/shop" ]; check "and the database from the vars" 0 $?
if grep -rqsF "$APP_PW" "$T/home/storage/tmp" "$STACKIE_HOME/state.json"; then
  bad "a password is in a file outside the database"
else ok "no password in the runtime files or the state file"; fi
out=$(run logs -n 200 stackie.mysql); contains "mariadbd's own startup line" "$out" "ready for connections"

# --- down, up: the init does not run again, rows survive ------------------------------------
out=$(down 2>&1); check "down" 0 $?
# After down the block is gone from the daemon; its log files stay in storage.
out=$(cat $(find "$STACKIE_HOME" -name 'std*.log' -path '*mysql*') 2>&1)
contains "a clean shutdown on SIGTERM" "$out" "Shutdown complete"
out=$(up 2>&1); check "up again" 0 $?
PORT=$(host_port stackie.mysql mysql)
out=$(host_sql "$APP_PW" shopper "select group_concat(name order by id) from items")
equals "the rows survived down and up" "$out" "one,two,three"

# --- kill -9 of the daemon: nothing survives; InnoDB recovers on the next up ----------------
exec_sql "insert into items values (4, 'before the crash')"; check "a row just before the crash" 0 $?
out=$(kill_daemon); equals "no process of the stack survives kill -9 of stackied" "$out" ""
out=$(up 2>&1); check "up after the crash" 0 $?
out=$(exec_sql "select count(*) from items"); equals "every committed row is back" "$out" "4"
out=$(run logs -n 400 stackie.mysql)
contains "InnoDB ran its crash recovery" "$out" "crash recovery\|Starting final batch to recover\|redo log"
out=$(down 2>&1); check "final down" 0 $?
done_testing
