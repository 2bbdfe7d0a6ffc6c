import os, socket, struct, subprocess, sys, time, statistics, collections
lockbox = sys.argv[1]; n = int(sys.argv[2])
trace = open("/var/tmp/zt-trace.log", "a")
def tp(name):
    trace.write(f"{os.getpid()} {name} {time.monotonic_ns()}\n"); trace.flush()
ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
def fd3():
    os.dup2(theirs.fileno(), 3)
p = subprocess.Popen([lockbox, "--zygote"], env={}, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, close_fds=False, preexec_fn=fd3)
theirs.close()
null = os.open("/dev/null", os.O_RDWR)
argv = [lockbox, "--backend", "namespaces", "--", "/bin/true"]
payload = b"".join(a.encode() + b"\0" for a in argv)
req = struct.pack("=IIII", 0x5a594732, len(argv), 3, 7) + payload
def run():
    tp("C0-send")
    socket.send_fds(ours, [req], [null, null, null])
    data, fds, _, _ = socket.recv_fds(ours, 12, 1)
    tp("C1-replied")
    kind, pid, value = struct.unpack("=Iii", data)
    for fd in fds: os.close(fd)
    while True:
        kind, done, status = struct.unpack("=Iii", ours.recv(12))
        if kind == 3 and done == pid:
            tp("C2-exited"); return
for i in range(n):
    time.sleep(0.03)
    run()
ours.close(); p.wait()
