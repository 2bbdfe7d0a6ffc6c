"""bench/up: up-to-ready and down-to-gone of N listening blocks, stackie (sandboxed) vs
supervisord (unsandboxed), alternating A/B. See bench/up for the arguments."""
import os
import sys
import threading
import time

from benchlib import (Stackie, Supervisord, descendants, log, median, ratio, table,
                      wait_ports)

build, tmp, network = sys.argv[1], sys.argv[2], sys.argv[3]
counts = [int(n) for n in sys.argv[4].split(",")]
runs = int(sys.argv[5])
bindir = os.path.join(tmp, "bin")
BASE_PORT = 21000


def wait_gone(daemon_pid, ports, t0, timeout=120):
    """Seconds from t0 until every port refuses and the daemon has no descendant left."""
    if wait_ports(ports, accepting=False, timeout=timeout) is None:
        raise RuntimeError("ports still accepting after down")
    end = time.monotonic() + timeout
    while descendants(daemon_pid):
        if time.monotonic() > end:
            raise RuntimeError("processes left after down")
        time.sleep(0.002)
    return time.monotonic() - t0


def stackie_round(n, ports):
    st = Stackie(build, os.path.join(tmp, f"stackie-{n}-{time.monotonic_ns()}"), network)
    st.listening_stack("bench.l", bindir, ports)
    try:
        t0 = time.monotonic()
        cli = st.popen("up", "-f", st.stack_file, stdout=open(os.devnull, "w"),
                       stderr=open(os.path.join(st.root, "up.err"), "w"))
        ready = wait_ports(ports, accepting=True)
        if ready is None:
            raise RuntimeError("stackie: ports never accepted: " +
                               open(os.path.join(st.root, "up.err")).read())
        rc = cli.wait()
        returned = time.monotonic()
        if rc != 0:
            raise RuntimeError(f"stackie up exit {rc}")
        time.sleep(0.2)
        t1 = time.monotonic()
        st.down()
        gone = wait_gone(st.pid, ports, t1)
        return ready - t0, returned - t0, gone
    finally:
        st.stop()


def supervisord_round(n, ports, via):
    progs = [(f"l{i}", [f"{bindir}/bench-listener", str(p)], {}) for i, p in enumerate(ports)]
    sv = Supervisord(os.path.join(tmp, f"supervisord-{n}-{time.monotonic_ns()}"), progs)
    sv.start()
    try:
        proxy = sv.rpc()
        proxy.supervisor.getPID()  # connected before the clock starts
        t0 = time.monotonic()
        if via == "rpc":  # the call runs on a thread while this one probes the ports
            call = threading.Thread(target=proxy.supervisor.startAllProcesses, args=(True,))
            call.start()
        else:
            call = sv.ctl_popen("start", "all", stdout=open(os.devnull, "w"))
        ready = wait_ports(ports, accepting=True)
        if ready is None:
            raise RuntimeError("supervisord: ports never accepted")
        call.join() if via == "rpc" else call.wait()
        returned = time.monotonic()
        time.sleep(0.2)
        t1 = time.monotonic()
        if via == "rpc":
            proxy.supervisor.stopAllProcesses(True)
        else:
            sv.ctl("stop", "all")
        gone = wait_gone(sv.pid, ports, t1)
        return ready - t0, returned - t0, gone
    finally:
        sv.stop()


SIDES = [("stackie", stackie_round),
         ("supervisord (XML-RPC)", lambda n, ports: supervisord_round(n, ports, "rpc")),
         ("supervisord (supervisorctl)", lambda n, ports: supervisord_round(n, ports, "ctl"))]
results = {}
for n in counts:
    ports = list(range(BASE_PORT, BASE_PORT + n))
    samples = {label: [] for label, _ in SIDES}
    for r in range(runs):
        # Rotate which side goes first, so drift on a noisy machine hits every side alike.
        for label, fn in SIDES[r % len(SIDES):] + SIDES[:r % len(SIDES)]:
            samples[label].append(fn(n, ports))
            x = samples[label][-1]
            log(f"# up N={n} run {r + 1} {label}: ready {x[0] * 1000:.1f} ms, "
                f"command returned {x[1] * 1000:.1f} ms, down-to-gone {x[2] * 1000:.1f} ms")
    results[n] = samples

ms = lambda xs, i: median([x[i] for x in xs]) * 1000
print()
print(f"up-to-ready and down-to-gone in ms, medians of {runs} rotating runs; stackie's blocks "
      f"sandboxed (network: {network}), supervisord's unsandboxed")
rows = []
for n, samples in results.items():
    a = samples["stackie"]
    for label, _ in SIDES:
        b = samples[label]
        rows.append([str(n), label, f"{ms(b, 0):.1f}", f"{ms(b, 1):.1f}", f"{ms(b, 2):.1f}",
                     "" if b is a else f"{ratio(ms(a, 0), ms(b, 0)):.2f}x",
                     "" if b is a else f"{ratio(ms(a, 2), ms(b, 2)):.2f}x"])
table(["N", "system", "up-to-ready", "command returned", "down-to-gone",
       "stackie/peer ready", "stackie/peer down"], rows)
