#!/bin/sh
# End-to-end: stackie.nginx (Debian: nginx) as a reverse proxy in front of two blocks of the
# stack's own, each a tiny python3 HTTP server that answers with its name, the path and the
# headers it got. The stack maps "/api/ -> api" and "/ -> web" in vars.routes; curl through
# nginx's forwarded port must reach each block with the path as asked, the browser's Host and
# X-Forwarded-For. Then: the config in nginx's private runtime directory only, no route can
# break out of its directive, a route to a name the block does not consume fails `up` saying
# so, and SIGQUIT (graceful) on down.
set -u
B=${STACKIE_BUILD_ROOT:?}/src
S=$B/stackie
. "$(dirname "$0")/lib.sh"
if ! { [ -x /usr/sbin/nginx ] || command -v nginx >/dev/null; }; then
  skip_all "no nginx on this host (apt-get install nginx)"
fi
command -v curl >/dev/null || skip_all "no curl on this host (apt-get install curl)"
. "$(dirname "$0")/catalog_lib.sh"

mkdir "$T/api" "$T/web"
for name in api web; do
  cat > "$T/$name/echo.py" <<'PY'
import http.server, sys

NAME = sys.argv[1]


class Echo(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = "%s %s host=%s xff=%s\n" % (NAME, self.path, self.headers.get("Host"),
                                          self.headers.get("X-Forwarded-For"))
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        self.wfile.write(body.encode())


http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), Echo).serve_forever()
PY
done
write_stack() {  # write_stack ROUTES
  cat > "$T/stackie-stack.yml" <<YML
routed:
  blocks:
    api:
      path: api
      command: [python3, echo.py, api, "\${serves.http}"]
      serves: {http: {port: 8101}}
    web:
      path: web
      command: [python3, echo.py, web, "\${serves.http}"]
      serves: {http: {port: 8102}}
    stackie.nginx:
      consumes: {api: api, web: web}
      vars:
        routes: |
$1
YML
}
write_stack "          /api/ -> api
          /     -> web"
get() { curl -sS --max-time 10 "$@"; }

out=$(up 2>&1); check "up of two blocks behind stackie.nginx" 0 $?
contains "up names the stack" "$out" "stack routed is up"
equals "nginx is running and healthy" "$(state_of stackie.nginx)" "running healthy"
PORT=$(host_port stackie.nginx http)
[ -n "$PORT" ]; check "a forwarded host port for nginx ($PORT)" 0 $?

# --- the routes: longest prefix wins, the path arrives as asked -------------------------------
out=$(get "http://127.0.0.1:$PORT/api/items?x=1"); check "curl /api/items through nginx" 0 $?
contains "/api/ reaches the api block, path unchanged" "$out" "^api /api/items?x=1 "
out=$(get "http://127.0.0.1:$PORT/index.html"); check "curl /index.html through nginx" 0 $?
contains "/ reaches the web block" "$out" "^web /index.html "
# nginx's own rule for a prefix ending in '/': the same path without it is sent there (301).
out=$(get -o /dev/null -w '%{http_code} %{redirect_url}' "http://127.0.0.1:$PORT/api")
contains "/api is redirected to /api/" "$out" "^301 http://.*/api/$"
out=$(get -H 'Host: shop.localhost' "http://127.0.0.1:$PORT/api/")
contains "the block sees the browser's Host" "$out" "host=shop.localhost "
contains "and who asked (X-Forwarded-For)" "$out" "xff=127.0.0.1$"
out=$(run logs -n 50 stackie.nginx); contains "nginx's access log is the block's log" "$out" "GET /api/items?x=1 HTTP/1.1\" 200"

# --- where the config lives: nginx's private runtime directory, nowhere a block can write -----
run_dir=$STORAGE/tmp/routed-nginx/run
out=$(stat -c %a "$run_dir" 2>&1); equals "the runtime directory is 0700" "$out" "700"
out=$(grep -c 'location ' "$run_dir/nginx.conf" 2>&1); equals "nginx.conf holds the two routes" "$out" "2"
out=$(find "$STORAGE/volumes" -name nginx.conf 2>/dev/null); equals "and no volume holds a config" "$out" ""
out=$(run exec api -- sh -c "ls '$run_dir' 2>&1; echo x > '$run_dir/nginx.conf' 2>&1"; echo "status $?")
contains "the api block cannot see nginx's runtime directory" "$out" "No such file or directory"
# nginx names its master "nginx: master process ARGV" (pid 1 of the block is the lockbox's).
out=$(run exec stackie.nginx -- sh -c 'for f in /proc/[0-9]*/cmdline; do tr "\0" " " < "$f"; echo; done')
contains "nginx's master runs in the block with its own paths" "$out" \
  "^nginx: master process .*nginx -p $run_dir -c $run_dir/nginx.conf -e stderr"
contains "and its worker" "$out" "^nginx: worker process"

# --- down: SIGQUIT, nginx's graceful shutdown ------------------------------------------------
out=$(down 2>&1); check "down" 0 $?
out=$(cat $(find "$STORAGE/logs" -name 'std*.log' -path '*nginx*') 2>&1)
contains "nginx stopped gracefully (SIGQUIT)" "$out" "gracefully shutting down"

# --- bad routes: up fails, naming the route; nothing of nginx runs ----------------------------
write_stack "          /api/ -> apx"
out=$(up 2>&1); check "up with a route to a name the block does not consume fails" 1 $?
contains "the message names the route and what it consumes" "$out" \
  "route '/api/ -> apx': this block consumes no 'apx' (it consumes: api, web)"
down >/dev/null 2>&1
# A hostile route: a ';' and a brace would end the location and add directives of its own.
write_stack "          /x/ { return 200 owned; } location /y/ -> api"
out=$(up 2>&1); check "a route that would inject nginx directives fails up" 1 $?
contains "refused as a malformed route" "$out" "write it as 'PREFIX -> NAME'"
write_stack "          /x;return -> api"
out=$(up 2>&1); check "a prefix with ';' fails up" 1 $?
contains "refused, naming the characters allowed" "$out" "the prefix may hold only letters"
down >/dev/null 2>&1
done_testing
