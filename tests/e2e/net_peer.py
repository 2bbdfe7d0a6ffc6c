#!/usr/bin/env python3
"""Peers for tests/e2e/network_test.sh: servers that run as blocks inside sandboxes, and the
clients that reach them through the daemon's forwarder. Standard library only."""
import os
import selectors
import socket
import sys
import time


def listen(port):
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen(1024)
    return server


def echo_server(port):
    """Echoes every byte; on the client's half-close it finishes its own side (shutdown)."""
    server = listen(port)
    server.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(server, selectors.EVENT_READ)
    while True:
        for key, _ in sel.select():
            if key.fileobj is server:
                conn, _ = server.accept()
                conn.setblocking(True)
                sel.register(conn, selectors.EVENT_READ)
                continue
            conn = key.fileobj
            try:
                data = conn.recv(65536)
            except ConnectionError:
                data = None
            if data:
                conn.sendall(data)
                continue
            sel.unregister(conn)
            if data == b"":
                conn.shutdown(socket.SHUT_WR)
            conn.close()


def sink_server(port, delay):
    """Each client: wait `delay` s before reading (the sender must be held back meanwhile),
    then read to EOF and answer with the count."""
    server = listen(port)
    while True:
        conn, _ = server.accept()
        time.sleep(float(delay))
        total = 0
        while True:
            data = conn.recv(1 << 20)
            if not data:
                break
            total += len(data)
        conn.sendall(b"count %d\n" % total)
        conn.close()


def connect(host, port, timeout=10):
    return socket.create_connection((host, int(port)), timeout=timeout)


def read_all(conn):
    chunks = []
    while True:
        data = conn.recv(1 << 20)
        if not data:
            return b"".join(chunks)
        chunks.append(data)


def client_halfclose(host, port, size):
    """Sends `size` bytes, half-closes, and expects them all back followed by EOF."""
    payload = os.urandom(int(size))
    conn = connect(host, port)
    conn.sendall(payload)
    conn.shutdown(socket.SHUT_WR)
    back = read_all(conn)
    print("ok" if back == payload else "mismatch: sent %d got %d" % (len(payload), len(back)))


def client_many(host, port, count):
    """`count` connections open at once; each sends its own line and must get it back."""
    conns = []
    for i in range(int(count)):
        conns.append(connect(host, port, timeout=30))
    for i, conn in enumerate(conns):
        conn.sendall(b"connection %d\n" % i)
    good = 0
    for i, conn in enumerate(conns):
        want = b"connection %d\n" % i
        got = b""
        while len(got) < len(want):
            data = conn.recv(len(want) - len(got))
            if not data:
                break
            got += data
        good += got == want
        conn.close()
    print("ok %d" % good if good == len(conns) else "only %d of %d" % (good, len(conns)))


def client_reset(host, port):
    """What a client sees when nothing listens behind the forward: reset, not a clean EOF."""
    try:
        conn = connect(host, port)
        conn.sendall(b"hello")
        data = conn.recv(10)
        print("eof" if data == b"" else "data")
    except ConnectionResetError:
        print("reset")
    except BrokenPipeError:
        print("reset")


def client_sink(host, port, size):
    conn = connect(host, port, timeout=60)
    block = b"x" * (1 << 20)
    left = int(size)
    while left > 0:
        n = min(left, len(block))
        conn.sendall(block[:n])
        left -= n
    conn.shutdown(socket.SHUT_WR)
    print(read_all(conn).decode().strip())


def try_connect(host, port):
    try:
        connect(host, port, timeout=3).close()
        print("connected")
    except ConnectionRefusedError:
        print("refused")
    except OSError as error:
        print(type(error).__name__)


def interfaces():
    print(" ".join(name for _, name in socket.if_nameindex()))


def consumer(host, port, out):
    """A block that consumes the echo block: talks to it once, records the result in `out`."""
    for _ in range(100):
        try:
            conn = connect(host, port)
            conn.sendall(b"from consumer\n")
            reply = conn.recv(100)
            result = "ok %s:%s" % (host, port) if reply == b"from consumer\n" else "bad reply"
            break
        except OSError as error:
            result = "error %s" % error
            time.sleep(0.1)
    with open(out, "w") as f:
        f.write(result + "\n")
    time.sleep(3600)


def hold(port, ready_file):
    """Holds a host port (a stranger to stackie) until killed."""
    server = listen(int(port))
    with open(ready_file, "w") as f:
        f.write("%d\n" % os.getpid())
    while True:
        time.sleep(60)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    print(s.getsockname()[1])


COMMANDS = {
    "echo-server": lambda a: echo_server(int(a[0])),
    "sink-server": lambda a: sink_server(int(a[0]), a[1]),
    "client-halfclose": lambda a: client_halfclose(*a),
    "client-many": lambda a: client_many(*a),
    "client-reset": lambda a: client_reset(*a),
    "client-sink": lambda a: client_sink(*a),
    "try-connect": lambda a: try_connect(*a),
    "interfaces": lambda a: interfaces(),
    "consumer": lambda a: consumer(*a),
    "hold": lambda a: hold(*a),
    "free-port": lambda a: free_port(),
}

if __name__ == "__main__":
    COMMANDS[sys.argv[1]](sys.argv[2:])
