"""memcached's text protocol, raw, for the catalog e2e test: PORT COMMAND...

Each COMMAND is one request ("set KEY VALUE" is sent as the storage command with its data
block; "get KEY", "incr KEY N" as they are); prints each reply's lines joined by '|', one
reply a line. Written against the protocol text (doc/protocol.txt), not a client library, so
the test sees exactly what the server said."""
import socket
import sys


def read_reply(conn, terminators):
    data = b""
    while not any(data.endswith(t) for t in terminators):
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    return "|".join(data.decode().rstrip("\r\n").split("\r\n"))


def main():
    port = int(sys.argv[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        for command in sys.argv[2:]:
            words = command.split(" ", 2)
            if words[0] == "set":
                value = words[2].encode()
                conn.sendall(b"set %s 0 0 %d\r\n%s\r\n" % (words[1].encode(), len(value), value))
                print(read_reply(conn, [b"STORED\r\n", b"ERROR\r\n", b"NOT_STORED\r\n"]))
            elif words[0] in ("get", "stats"):
                conn.sendall(command.encode() + b"\r\n")
                print(read_reply(conn, [b"END\r\n", b"ERROR\r\n"]))
            else:
                conn.sendall(command.encode() + b"\r\n")
                print(read_reply(conn, [b"\r\n"]))


main()
