#!/usr/bin/env python3
"""The example stack's own block: a small HTTP API over the stack's postgres and redis.

  GET /         JSON: a visit counter kept in redis, the visits recorded in postgres (psql)
  GET /health   200 "ok" once the server answers (the block's health check)

Configuration comes from the environment the stack file sets: PORT, the libpq variables
(PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE) and REDIS_HOST / REDIS_PORT.
`server.py --check [PORT]` asks the server's /health and exits 0 or 1 (the port is an argument:
a health check command does not get the block's environment).
"""
import glob
import http.server
import json
import os
import socket
import subprocess
import sys
import urllib.request

PORT = int(os.environ.get("PORT", "8080"))


def redis(*args):
    """One command over RESP (the Redis protocol), with a plain socket."""
    host, port = os.environ["REDIS_HOST"], int(os.environ["REDIS_PORT"])
    request = f"*{len(args)}\r\n" + "".join(f"${len(a.encode())}\r\n{a}\r\n" for a in args)
    with socket.create_connection((host, port), timeout=2) as conn:
        conn.sendall(request.encode())
        reply = conn.makefile("rb").readline().decode().rstrip("\r\n")
    if reply.startswith("-"):
        raise RuntimeError(reply[1:])
    return reply[1:]  # ":42" -> "42", "+PONG" -> "PONG"


def find_psql():
    """Debian's /usr/bin/psql is a perl wrapper that reads /etc/postgresql-common: use the
    real binary of the newest installed version when there is one."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"),
                   key=lambda path: int(path.split("/")[4]) if path.split("/")[4].isdigit() else 0)
    return found[-1] if found else "psql"


PSQL = find_psql()


def postgres(sql):
    """Runs SQL through psql (postgresql-client); returns its unaligned output."""
    done = subprocess.run([PSQL, "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-c", sql],
                          capture_output=True, text=True, timeout=5)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip() or f"psql exit status {done.returncode}")
    return done.stdout.strip()


def visit():
    answer = {"block": "api"}
    try:
        answer["redis_hits"] = int(redis("INCR", "shop:hits"))
    except Exception as error:  # the page reports each store on its own
        answer["redis_error"] = str(error)
    try:
        postgres("CREATE TABLE IF NOT EXISTS visits (at timestamptz NOT NULL DEFAULT now())")
        answer["postgres_visits"] = int(
            postgres("INSERT INTO visits DEFAULT VALUES; SELECT count(*) FROM visits"))
    except Exception as error:
        answer["postgres_error"] = str(error)
    return answer


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/health":
            self.reply(200, "text/plain", b"ok\n")
        elif self.path == "/":
            answer = visit()
            ok = "redis_error" not in answer and "postgres_error" not in answer
            self.reply(200 if ok else 503, "application/json",
                       (json.dumps(answer) + "\n").encode())
        else:
            self.reply(404, "text/plain", b"not found\n")

    def reply(self, status, kind, body):
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, fmt, *args):  # one line per request on stdout: `stackie logs api`
        print(f"{self.command} {self.path} -> {args[1] if len(args) > 1 else '?'}", flush=True)


def check(port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as response:
            return 0 if response.status == 200 else 1
    except OSError as error:
        print(f"health: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    if sys.argv[1:2] == ["--check"]:
        sys.exit(check(int(sys.argv[2]) if len(sys.argv) > 2 else PORT))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
    print(f"api listening on 127.0.0.1:{PORT}", flush=True)
    server.serve_forever()
