import collections, statistics
rows = [l.split() for l in open("/var/tmp/zt-trace.log")]
spawns = []; cur = None
for r in rows:
    pid, name, t = r[0], r[1], int(r[2]); flt = int(r[3]) if len(r) > 3 else None
    if name == "C0-send":
        cur = {"t0": t}; spawns.append(cur)
    elif cur is not None and name not in cur:
        cur[name] = (t - cur["t0"], flt, pid)
spawns = spawns[5:]
names = collections.OrderedDict()
for s in spawns:
    for k in s:
        if k != "t0": names[k] = 1
med = {k: statistics.median([s[k][0] for s in spawns if k in s]) for k in names}
flt = {k: statistics.median([s[k][1] for s in spawns if k in s and s[k][1] is not None] or [0]) for k in names}
prev = 0
for k, v in sorted(med.items(), key=lambda kv: kv[1]):
    print(f"{k:24s} {v/1000:8.0f} us  (+{(v-prev)/1000:6.0f})  minflt {flt[k]:.0f}"); prev = v
print("n", len(spawns))
