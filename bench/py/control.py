"""bench/control: status latency with N blocks, `stackie ps --json` vs `supervisorctl status`,
both daemons up at once, alternating calls. See bench/control."""
import os
import sys
import time

from benchlib import Stackie, Supervisord, log, median, percentile, ratio, table

build, tmp, network = sys.argv[1], sys.argv[2], sys.argv[3]
n, calls = int(sys.argv[4]), int(sys.argv[5])
bindir = os.path.join(tmp, "bin")

st = Stackie(build, os.path.join(tmp, "stackie"), network)
names = [f"bench.c{i}" for i in range(n)]
for i, name in enumerate(names):
    st.define_block(name, bindir, ["bench-listener", str(27000 + i)], port=27000 + i)
st.write_stack(names)
sv = Supervisord(os.path.join(tmp, "supervisord"),
                 [(f"c{i}", [f"{bindir}/bench-listener", str(28000 + i)], {}) for i in range(n)],
                 autostart=True)
try:
    st.start()
    st.up()
    sv.start()
    time.sleep(2)
    proxy = sv.rpc()

    def stackie_ps():
        out = st.cli("ps", "--json").stdout
        assert out.count('"state":"running"') == n, out[:300]

    def supervisorctl_status():
        out = sv.ctl("status").stdout
        assert out.count("RUNNING") == n, out[:300]

    def supervisord_rpc():
        assert len(proxy.supervisor.getAllProcessInfo()) == n

    SIDES = [("stackie ps --json", stackie_ps), ("supervisorctl status", supervisorctl_status),
             ("supervisord getAllProcessInfo (XML-RPC, no client start-up)", supervisord_rpc)]
    times = {label: [] for label, _ in SIDES}
    for label, fn in SIDES:  # warm up (page cache, imports)
        fn()
    for i in range(calls):
        for label, fn in SIDES[i % 3:] + SIDES[:i % 3]:
            t0 = time.perf_counter()
            fn()
            times[label].append((time.perf_counter() - t0) * 1000)
    a = times[SIDES[0][0]]
    rows = []
    for label, _ in SIDES:
        t = times[label]
        rows.append([label, f"{median(t):.1f}", f"{percentile(t, 90):.1f}",
                     "" if t is a else f"{ratio(median(a), median(t)):.3f}x"])
    print()
    print(f"control: status of {n} running blocks, ms per call (a whole CLI process where one is "
          f"named), {calls} alternating calls each")
    table(["command", "median ms", "p90 ms", "stackie/peer (median)"], rows)
finally:
    st.cli("down", "-f", st.stack_file, check=False)
    st.stop()
    sv.stop()
