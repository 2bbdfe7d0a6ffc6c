"""bench/memory: the daemon's RSS and PSS with N running blocks, stackied vs supervisord, a
fresh daemon per measurement, alternating. See bench/memory."""
import os
import sys
import time

from benchlib import Stackie, Supervisord, comm, descendants, log, median, smaps_rollup, table

build, tmp, network = sys.argv[1], sys.argv[2], sys.argv[3]
counts = [int(n) for n in sys.argv[4].split(",")]
runs = int(sys.argv[5])
bindir = os.path.join(tmp, "bin")


def stackie_memory(n):
    st = Stackie(build, os.path.join(tmp, f"stackie-{n}-{time.monotonic_ns()}"), network)
    names = [f"bench.m{i}" for i in range(n)]
    for i, name in enumerate(names):
        st.define_block(name, bindir, ["bench-listener", str(25000 + i)], port=25000 + i)
    st.write_stack(names)
    st.start()
    try:
        st.up()
        time.sleep(1)
        m = smaps_rollup(st.pid)
        # Not the daemon, but also Stackie's cost per block: the lockbox monitor and the
        # sandbox's pid 1 (two processes per block; supervisord has none).
        launchers = [p for p in descendants(st.pid) if comm(p) == "stackie-lockbox"]
        m["LockboxPss"] = sum(smaps_rollup(p)["Pss"] for p in launchers)
        m["LockboxCount"] = len(launchers)
        return m
    finally:
        st.cli("down", "-f", st.stack_file, check=False)
        st.stop()


def supervisord_memory(n):
    sv = Supervisord(os.path.join(tmp, f"supervisord-{n}-{time.monotonic_ns()}"),
                     [(f"m{i}", [f"{bindir}/bench-listener", str(26000 + i)], {})
                      for i in range(n)], autostart=True)
    sv.start()
    try:
        sv.ctl("start", "all", check=False)
        time.sleep(1)
        return smaps_rollup(sv.pid)
    finally:
        sv.stop()


SIDES = [("stackied", stackie_memory), ("supervisord", supervisord_memory)]
data = {}
for n in counts:
    for r in range(runs):
        for label, fn in SIDES[r % 2:] + SIDES[:r % 2]:
            m = fn(n)
            data.setdefault((label, n), []).append(m)
            log(f"# memory {label} N={n} run {r + 1}: Rss {m['Rss']} KiB, Pss {m['Pss']} KiB, "
                f"Private_Dirty {m.get('Private_Dirty', 0)} KiB"
                + (f", {m['LockboxCount']} stackie-lockbox processes: Pss {m['LockboxPss']} KiB"
                   if "LockboxPss" in m else ""))

print()
print(f"memory of the daemon process itself (/proc/PID/smaps_rollup), KiB, medians of {runs} "
      f"fresh daemons; base and per-block slope by least squares over N = "
      f"{', '.join(map(str, counts))}")
rows = []
for label, _ in SIDES:
    for key in ("Rss", "Pss") + (("LockboxPss",) if label == "stackied" else ()):
        ys = [median([m[key] for m in data[(label, n)]]) for n in counts]
        mx, my = sum(counts) / len(counts), sum(ys) / len(ys)
        sxx = sum((x - mx) ** 2 for x in counts)
        slope = sum((x - mx) * (y - my) for x, y in zip(counts, ys)) / sxx if sxx else 0.0
        base = my - slope * mx
        rows.append([label, key] + [f"{y:.0f}" for y in ys] + [f"{base:.0f}", f"{slope:.1f}"])
for row in rows:
    if row[1] == "LockboxPss":
        row[0], row[1] = "stackie-lockbox processes", "Pss"
table(["daemon", "KiB"] + [f"N={n}" for n in counts] + ["base", "per block"], rows)
