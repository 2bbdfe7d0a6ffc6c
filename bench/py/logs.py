"""bench/logs: log throughput of stackied vs supervisord vs s6-log. See bench/logs."""
import os
import shutil
import subprocess
import sys
import time

from benchlib import (S6, RssSampler, Stackie, Supervisord, cpu_seconds, log, median, ratio,
                      system_cpu_seconds, table, wait_cpu_settled)

build, tmp, network = sys.argv[1], sys.argv[2], sys.argv[3]
size = int(sys.argv[4]) * 1024 * 1024
runs = int(sys.argv[5])
bindir = os.path.join(tmp, "bin")
GIB = 1024 ** 3


def spew_argv(results, i, n):
    return [f"{bindir}/bench-spew", str(size // n), f"{results}/{i}", f"{results}/go"]


def dir_bytes(path):
    total = 0
    for d, _, files in os.walk(path):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(d, f))
            except FileNotFoundError:
                pass
    return total


def measure(root, n, pids_fn):
    """Lets the blocks go, waits for every writer to finish and the supervisor to go quiet;
    returns (MB/s the blocks saw, CPU seconds of pids_fn(), RSS samples, MB/s until the
    supervisor had read every byte, the system part of those CPU seconds)."""
    results = os.path.join(root, "results")
    pids = pids_fn()
    cpu0 = sum(cpu_seconds(p) for p in pids)
    sys0 = sum(system_cpu_seconds(p) for p in pids)
    with RssSampler(pids_fn) as rss:
        open(os.path.join(results, "go"), "w").close()
        end = time.monotonic() + 900
        while len([f for f in os.listdir(results) if f != "go"]) < n:
            if time.monotonic() > end:
                raise RuntimeError(f"writers did not finish in {root}")
            time.sleep(0.05)
        cpu1 = wait_cpu_settled(pids)
        sys1 = sum(system_cpu_seconds(p) for p in pids)
    spans = []
    for i in range(n):
        with open(os.path.join(results, str(i))) as f:
            spans.append([int(x) for x in f.read().split()])
    elapsed = (max(s[1] for s in spans) - min(s[0] for s in spans)) / 1e9
    drained = (max(s[3] if len(s) > 3 else s[1] for s in spans) - min(s[0] for s in spans)) / 1e9
    written = sum(s[2] for s in spans)
    return written / elapsed / 1e6, cpu1 - cpu0, rss.samples, written / drained / 1e6, sys1 - sys0


def stackie_round(n, follower):
    root = os.path.join(tmp, f"stackie-{time.monotonic_ns()}")
    results = os.path.join(root, "results")
    os.makedirs(results)
    st = Stackie(build, root, network)
    names = [f"bench.s{i}" for i in range(n)]
    for i, name in enumerate(names):
        st.define_block(name, bindir, ["bench-spew"] + spew_argv(results, i, n)[1:])
    st.write_stack(names, read_write=[results])
    st.start()
    follow = None
    try:
        st.up()
        if follower == "follower":
            follow = st.popen("logs", "-f", names[0], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        elif follower == "stuck follower":  # a pipe nobody reads: the CLI stops reading too
            follow = st.popen("logs", "-f", names[0], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        log(f"# stackied pid {st.pid}")  # for a profiler: perf record -p PID
        follower_cpu0 = cpu_seconds(follow.pid) if follow else 0.0
        out = measure(root, n, lambda: [st.pid])
        if follow:  # the CLI competes with the block and the daemon for the cores
            log(f"# the follower (stackie logs -f) took {cpu_seconds(follow.pid) - follower_cpu0:.2f} "
                f"s of CPU")
        files = dir_bytes(os.path.join(st.home, "storage", "logs"))
    finally:
        if follow:
            follow.kill()
            follow.wait()
        st.cli("down", "-f", st.stack_file, check=False)
        st.stop()
        shutil.rmtree(root, ignore_errors=True)
    return out + (files,)


def supervisord_round(n, follower):
    root = os.path.join(tmp, f"supervisord-{time.monotonic_ns()}")
    results = os.path.join(root, "results")
    os.makedirs(results)
    rotation = {"stdout_logfile_maxbytes": "10MB", "stdout_logfile_backups": "4"}
    sv = Supervisord(root, [(f"s{i}", spew_argv(results, i, n), rotation) for i in range(n)],
                     autostart=True)
    sv.start()
    try:
        time.sleep(1.0)
        out = measure(root, n, lambda: [sv.pid])
        files = dir_bytes(os.path.join(root, "logs"))
    finally:
        sv.stop()
        shutil.rmtree(root, ignore_errors=True)
    return out + (files,)


def s6_round(n, follower):
    root = os.path.join(tmp, f"s6-{time.monotonic_ns()}")
    results = os.path.join(root, "results")
    os.makedirs(results)
    s6 = S6(root, [(f"s{i}", spew_argv(results, i, n), os.path.join(root, "logs", f"s{i}"))
                   for i in range(n)])
    s6.start()
    try:
        end = time.monotonic() + 30
        while sum(1 for p in s6.loggers() if open(f"/proc/{p}/comm").read().strip() == "s6-log") < n:
            if time.monotonic() > end:
                raise RuntimeError("s6-log did not start")
            time.sleep(0.05)
        time.sleep(0.5)
        loggers = s6.loggers()
        out = measure(root, n, lambda: loggers)
        files = dir_bytes(os.path.join(root, "logs"))
    finally:
        s6.stop()
        shutil.rmtree(root, ignore_errors=True)
    return out + (files,)


def floor_round(n, follower):
    """bench-logfloor (bench/logfloor.c): reads and writes only, nothing per line."""
    root = os.path.join(tmp, f"floor-{time.monotonic_ns()}")
    results = os.path.join(root, "results")
    logs = os.path.join(root, "logs")
    os.makedirs(results)
    os.makedirs(logs)
    floor = subprocess.Popen([f"{bindir}/bench-logfloor", logs, str(n), f"{bindir}/bench-spew",
                              str(size), results, os.path.join(results, "go")])
    try:
        time.sleep(0.5)
        out = measure(root, n, lambda: [floor.pid])
        files = dir_bytes(logs)
    finally:
        subprocess.run(["pkill", "-KILL", "-P", str(floor.pid)], check=False)
        floor.kill()
        floor.wait()
        shutil.rmtree(root, ignore_errors=True)
    return out + (files,)


CONFIGS = [
    ("stackie", 1, None, stackie_round),
    ("supervisord", 1, None, supervisord_round),
    ("s6-log", 1, None, s6_round),
    ("stackie", 8, None, stackie_round),
    ("supervisord", 8, None, supervisord_round),
    ("s6-log", 8, None, s6_round),
    ("floor", 1, None, floor_round),
    ("floor", 8, None, floor_round),
    ("stackie", 1, "follower", stackie_round),
    ("stackie", 1, "stuck follower", stackie_round),
]
# BENCH_LOGS_ONLY="stackie:8,supervisord:8,stackie:1:stuck follower" runs only those
# configurations (SYSTEM:BLOCKS[:FOLLOWER], "-" for none), say under a profiler.
only = os.environ.get("BENCH_LOGS_ONLY")
if only:
    def chosen(config):
        for item in only.split(","):
            fields = item.split(":")
            if fields[:2] == [config[0], str(config[1])] and \
                    (len(fields) < 3 or fields[2] == (config[2] or "-")):
                return True
        return False
    CONFIGS = [c for c in CONFIGS if chosen(c)]
samples = {c[:3]: [] for c in CONFIGS}
for r in range(runs):
    for system, n, follower, fn in CONFIGS:
        mbps, cpu, rss, drained, system_cpu, files = fn(n, follower)
        samples[(system, n, follower)].append((mbps, cpu, rss, drained))
        log(f"# logs run {r + 1} {system} x{n} {follower or ''}: {mbps:.1f} MB/s "
            f"({drained:.1f} drained), "
            f"CPU {cpu:.2f} s ({cpu / (size / GIB):.2f} s/GiB, {system_cpu:.2f} s in the kernel), RSS KiB over the run "
            f"{[rss[min(len(rss) - 1, len(rss) * q // 4)] for q in range(5)]} "
            f"(max {max(rss)}, {len(rss)} samples), {files} bytes in log files")

print()
print(f"logs: {size // 2**20} MiB of 100-byte lines in total per run, medians of {runs} runs "
      f"(configurations in turn); MB = 10^6 bytes; CPU of the supervising processes only "
      f"(stackied; supervisord; s6-svscan + s6-supervise + s6-log; the floor: bench-logfloor, a "
      f"loop that only reads each pipe and writes its file, rotated); \"drained\": MB/s until the "
      f"supervisor had read the last byte (a bigger pipe lets a writer finish earlier)")
rows = []
for system, n, follower, _ in CONFIGS:
    s = samples[(system, n, follower)]
    mbps = median([x[0] for x in s])
    cpu_gib = median([x[1] for x in s]) / (size / GIB)
    peer = samples.get(("supervisord", n, None)) or s
    peer_mbps = median([x[0] for x in peer])
    peer_cpu = median([x[1] for x in peer]) / (size / GIB)
    rss_first = median([x[2][0] for x in s]) / 1024
    rss_max = median([max(x[2]) for x in s]) / 1024
    drained = median([x[3] for x in s])
    peer_drained = median([x[3] for x in peer])
    rows.append([system, str(n), follower or "-", f"{mbps:.1f}", f"{drained:.1f}",
                 f"{cpu_gib:.2f}", f"{rss_first:.1f}", f"{rss_max:.1f}",
                 f"{ratio(mbps, peer_mbps):.2f}x", f"{ratio(drained, peer_drained):.2f}x",
                 f"{ratio(cpu_gib, peer_cpu):.2f}x"])
table(["system", "blocks", "follower", "MB/s", "drained", "CPU s/GiB", "RSS MiB before",
       "RSS MiB max", "MB/s vs supervisord", "drained vs supervisord", "CPU/GiB vs supervisord"],
      rows)
