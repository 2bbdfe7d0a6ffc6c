"""NATS's client protocol, raw, for the catalog e2e test: PORT COMMAND...

No NATS client is packaged in Debian, so this speaks the text protocol itself (INFO, CONNECT,
SUB, PUB, PING/PONG, MSG), written against the protocol's documentation, so the test sees
exactly what the server said. Commands, each one argument:
  "pubsub SUBJECT PAYLOAD"   subscribe, publish, print "SUBJECT PAYLOAD" as delivered
  "request SUBJECT PAYLOAD"  publish with a reply inbox and print the reply's payload (the
                             JetStream API is request/reply: $JS.API.STREAM.CREATE.NAME...)
An -ERR from the server is printed and ends the run with status 1."""
import socket
import sys


class Conn:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = b""
        info = self.line()
        if not info.startswith(b"INFO "):
            raise SystemExit("no INFO from the server: %r" % info)
        self.send(b'CONNECT {"verbose":false,"pedantic":false,"lang":"sh-e2e",'
                  b'"version":"0","protocol":1,"headers":false}\r\n')
        self.sids = 0

    def send(self, data):
        self.sock.sendall(data)

    def fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise SystemExit("the server closed the connection")
        self.buf += chunk

    def line(self):
        while b"\r\n" not in self.buf:
            self.fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def exactly(self, n):
        while len(self.buf) < n + 2:
            self.fill()
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def next_msg(self, sid):
        """The payload of the next MSG for SID; answers the server's PINGs on the way."""
        while True:
            line = self.line()
            if line == b"PING":
                self.send(b"PONG\r\n")
            elif line.startswith(b"-ERR"):
                print(line.decode())
                sys.exit(1)
            elif line.startswith(b"MSG "):
                words = line.split()
                payload = self.exactly(int(words[-1]))
                if words[2] == sid:
                    return words[1], payload

    def subscribe(self, subject):
        self.sids += 1
        sid = b"%d" % self.sids
        self.send(b"SUB %s %s\r\n" % (subject, sid))
        return sid

    def publish(self, subject, payload, reply=b""):
        reply = b" " + reply if reply else b""
        self.send(b"PUB %s%s %d\r\n%s\r\n" % (subject, reply, len(payload), payload))


def main():
    conn = Conn(int(sys.argv[1]))
    for n, command in enumerate(sys.argv[2:]):
        verb, subject, payload = command.encode().split(b" ", 2)
        if verb == b"pubsub":
            sid = conn.subscribe(subject)
            conn.publish(subject, payload)
            got_subject, got = conn.next_msg(sid)
            print((got_subject + b" " + got).decode())
        elif verb == b"request":
            inbox = b"_INBOX.e2e.%d" % n
            sid = conn.subscribe(inbox)
            conn.publish(subject, payload, inbox)
            print(conn.next_msg(sid)[1].decode())
        else:
            raise SystemExit("unknown command: %s" % command)


main()
