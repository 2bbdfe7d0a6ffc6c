"""bench/idle: wake-ups of an idle supervisor with N running blocks, stackied vs supervisord,
both up in the same window. See bench/idle."""
import os
import sys
import time

from benchlib import (Stackie, Supervisord, context_switches, cpu_seconds, log, ratio, table,
                      thread_count)

build, tmp, network = sys.argv[1], sys.argv[2], sys.argv[3]
n, seconds = int(sys.argv[4]), float(sys.argv[5])
bindir = os.path.join(tmp, "bin")
ports_a = list(range(23000, 23000 + n))
ports_b = list(range(24000, 24000 + n))

st = Stackie(build, os.path.join(tmp, "stackie"), network)
names = [f"bench.i{i}" for i in range(n)]
for name, port in zip(names, ports_a):
    st.define_block(name, bindir, ["bench-listener", str(port)], port=port)
st.write_stack(names)
sv = Supervisord(os.path.join(tmp, "supervisord"),
                 [(f"i{i}", [f"{bindir}/bench-listener", str(p)], {}) for i, p in enumerate(ports_b)],
                 autostart=True)
try:
    st.start()
    st.up()
    sv.start()
    time.sleep(3)  # let start-up settle (supervisord checks its programs in its loop)
    pids = {"stackied": st.pid, "supervisord": sv.pid}
    before = {k: (context_switches(p), cpu_seconds(p)) for k, p in pids.items()}
    t0 = time.monotonic()
    time.sleep(seconds)
    elapsed = time.monotonic() - t0
    after = {k: (context_switches(p), cpu_seconds(p)) for k, p in pids.items()}
    rows = []
    rate = {k: (after[k][0] - before[k][0]) / elapsed for k in pids}
    for k, p in pids.items():
        switches = after[k][0] - before[k][0]
        cpu_ms = (after[k][1] - before[k][1]) * 1000
        log(f"# idle {k} pid {p}: {switches} context switches, {cpu_ms:.0f} ms CPU in "
            f"{elapsed:.1f} s, {thread_count(p)} threads")
        rows.append([k, str(n), str(switches), f"{rate[k]:.2f}", f"{cpu_ms:.0f}",
                     str(thread_count(p)), "" if k == "supervisord" else
                     f"{ratio(rate[k], rate['supervisord']):.3f}x"])
    print()
    print(f"idle: {n} running blocks without health checks, both daemons measured over the same "
          f"{elapsed:.0f} s; wake-ups = voluntary + involuntary context switches of every thread "
          f"(/proc/PID/task/*/status)")
    table(["daemon", "blocks", "switches", "per second", "CPU ms", "threads", "vs supervisord"],
          rows)
finally:
    st.cli("down", "-f", st.stack_file, check=False)
    st.stop()
    sv.stop()
