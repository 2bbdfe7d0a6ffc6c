"""bench/scale: N sandboxed blocks up and down with one stackied, its RSS sampled throughout,
then what is left behind; supervisord with the same programs as the peer. See bench/scale."""
import os
import sys
import threading
import time

from benchlib import (Stackie, Supervisord, comm, descendants, log, rss_kib, table,
                      wait_ports)

build, tmp, network, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
bindir = os.path.join(tmp, "bin")
BASE_PORT = 30000
ports = list(range(BASE_PORT, BASE_PORT + n))


class RssSampler:
    """The peak RSS of `pid`, sampled every 20 ms on a thread until stopped."""

    def __init__(self, pid):
        self.pid, self.peak, self.samples = pid, 0, 0
        self.running = True
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while self.running:
            try:
                self.peak = max(self.peak, rss_kib(self.pid))
                self.samples += 1
            except (OSError, ValueError):
                pass
            time.sleep(0.02)

    def stop(self):
        self.running = False
        self.thread.join()
        return self.peak


def block_cgroups(pid):
    """The block-* cgroups beside the daemon's own (a delegated tree: <delegated>/daemon holds
    the daemon, <delegated>/block-ID each block), or None when the daemon has no such tree."""
    try:
        rel = open(f"/proc/{pid}/cgroup").read().strip().split("::", 1)[1]
    except (OSError, IndexError):
        return None
    if os.path.basename(rel) != "daemon":
        return None
    parent = os.path.dirname("/sys/fs/cgroup" + rel)
    return [d for d in os.listdir(parent) if d.startswith("block-")]


def wait_until(predicate, timeout):
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True


def up_and_down(pid, up, down):
    """Brings the N blocks up with up() (returns once asked) and down with down(), the
    supervising daemon `pid` watched throughout; returns the table's column."""
    result = {"idle RSS": rss_kib(pid)}
    sampler = RssSampler(pid)
    t0 = time.monotonic()
    up()
    ready = wait_ports(ports, accepting=True, timeout=300)
    if ready is None:
        raise RuntimeError("not every port accepted")
    result["up-to-ready s"] = ready - t0
    result["processes"] = len(descendants(pid))
    result["lockbox processes"] = len([p for p in descendants(pid)
                                       if comm(p) == "stackie-lockbox"])
    result["running RSS"] = rss_kib(pid)
    time.sleep(1)  # stackied gives free heap back a moment after activity (heap_trim.h)
    result["running RSS, 1 s later"] = rss_kib(pid)
    t1 = time.monotonic()
    down()
    gone = wait_until(lambda: not descendants(pid), 300)
    result["down-to-gone s"] = time.monotonic() - t1
    result["peak RSS"] = sampler.stop()
    result["after-down RSS"] = rss_kib(pid)
    time.sleep(1)
    result["after-down RSS, 1 s later"] = rss_kib(pid)
    result["left: processes"] = len(descendants(pid)) if gone else "TIMEOUT"
    result["left: ports accepting"] = n - len(
        [p for p in ports if wait_ports([p], accepting=False, timeout=5) is not None])
    left = block_cgroups(pid)
    result["left: block cgroups"] = "n/a (none delegated)" if left is None else len(left)
    return result


def stackie_run():
    st = Stackie(build, os.path.join(tmp, f"stackie-{n}"), network)
    st.listening_stack("bench.s", bindir, ports)
    try:
        return up_and_down(st.pid, lambda: st.cli("up", "-f", st.stack_file, timeout=900),
                           st.down)
    finally:
        st.stop()


def supervisord_run():
    progs = [(f"s{i}", [f"{bindir}/bench-listener", str(p)], {}) for i, p in enumerate(ports)]
    sv = Supervisord(os.path.join(tmp, f"supervisord-{n}"), progs)
    # Three fds per program (its pipes): supervisord's default minfds (1024) refuses to start
    # programs past about 300.
    with open(sv.conf) as f:
        conf = f.read()
    with open(sv.conf, "w") as f:
        f.write(conf.replace("[supervisord]\n", f"[supervisord]\nminfds={4 * n + 1024}\n", 1))
    sv.start()
    try:
        proxy = sv.rpc()
        proxy.supervisor.getPID()
        return up_and_down(sv.pid, lambda: proxy.supervisor.startAllProcesses(True),
                           lambda: proxy.supervisor.stopAllProcesses(True))
    finally:
        sv.stop()


log(f"# scale: {n} blocks, network {network}, load {open('/proc/loadavg').read().strip()}")
st = stackie_run()
log("# stackie: " + ", ".join(f"{k} {v}" for k, v in st.items()))
sv = supervisord_run()
rows = []
for key in st:
    fmt = (lambda v: f"{v:.2f}" if isinstance(v, float) else str(v))
    rows.append([key, fmt(st[key]), fmt(sv[key])])
print(f"{n} blocks up and down once; RSS in KiB (daemon process only), sampled every 20 ms")
table(["", "stackied (sandboxed)", "supervisord (unsandboxed)"], rows)
