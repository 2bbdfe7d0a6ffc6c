"""Shared by the bench scripts: statistics, /proc readers, a port prober, and drivers for
stackied, supervisord and s6-svscan, each in its own directory under the bench's temp dir.

Nothing here is a test: the scripts print tables of medians and ratios."""
import os
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")

# A bench started in the background (SIGINT ignored) or stopped with SIGTERM still runs its
# `finally` blocks, which stop the daemons it started.
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
PAGE = os.sysconf("SC_PAGE_SIZE")


# ---- statistics and output ----------------------------------------------------------------

def median(xs):
    return statistics.median(xs) if xs else float("nan")


def percentile(xs, p):
    """Nearest-rank percentile (p in 0..100)."""
    if not xs:
        return float("nan")
    s = sorted(xs)
    k = max(0, min(len(s) - 1, int(round(p / 100 * len(s) + 0.5)) - 1))
    return s[k]


def ratio(a, b):
    return a / b if b else float("inf")


def table(headers, rows):
    """Prints an aligned text table (every cell already a string)."""
    widths = [max(len(str(r[i])) for r in [headers] + rows) for i in range(len(headers))]
    line = lambda r: "  ".join(str(c).rjust(w) if i else str(c).ljust(w)
                               for i, (c, w) in enumerate(zip(r, widths)))
    print(line(headers))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(r))


def log(*args):
    print(*args, flush=True)


# ---- /proc --------------------------------------------------------------------------------

def _stat_fields(pid):
    with open(f"/proc/{pid}/stat") as f:
        text = f.read()
    return text[text.rindex(")") + 2:].split()  # fields from "state" on (field 3)


def cpu_seconds(pid):
    """User + system CPU of the process (all its threads), in seconds."""
    try:
        f = _stat_fields(pid)
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return (int(f[11]) + int(f[12])) / CLK_TCK


def system_cpu_seconds(pid):
    """System CPU of the process (all its threads), in seconds: the kernel's part of
    cpu_seconds()."""
    try:
        f = _stat_fields(pid)
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return int(f[12]) / CLK_TCK


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0


def smaps_rollup(pid):
    """{'Rss': KiB, 'Pss': KiB, ...} from /proc/PID/smaps_rollup."""
    out = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2 and parts[0].endswith(":") and parts[1].isdigit():
                out[parts[0][:-1]] = int(parts[1])
    return out


def context_switches(pid):
    """Voluntary + involuntary context switches summed over every thread of the process."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                        total += int(line.split()[1])
        except FileNotFoundError:
            pass
    return total


def thread_count(pid):
    return len(os.listdir(f"/proc/{pid}/task"))


def parents():
    """{pid: ppid} of every process we can see."""
    out = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                out[int(name)] = int(_stat_fields(name)[1])
            except (FileNotFoundError, ProcessLookupError, IndexError):
                pass
    return out


def descendants(pid):
    children = {}
    for child, parent in parents().items():
        children.setdefault(parent, []).append(child)
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except FileNotFoundError:
        return ""


def wait_pid_gone(pid, timeout=30):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not os.path.exists(f"/proc/{pid}") or _zombie(pid):
            return True
        time.sleep(0.01)
    return False


def _zombie(pid):
    try:
        return _stat_fields(pid)[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):
        return True


def wait_cpu_settled(pids, quiet=0.3, timeout=60):
    """Waits until the summed CPU time of `pids` stops growing for `quiet` seconds."""
    end = time.monotonic() + timeout
    last = sum(cpu_seconds(p) for p in pids)
    while time.monotonic() < end:
        time.sleep(quiet)
        now = sum(cpu_seconds(p) for p in pids)
        if now == last:
            return now
        last = now
    return last


class RssSampler:
    """Samples the summed VmRSS (KiB) of `pids_fn()` every `period` seconds on a thread."""

    def __init__(self, pids_fn, period=0.1):
        self.pids_fn, self.period, self.samples = pids_fn, period, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            self.samples.append(sum(rss_kib(p) for p in self.pids_fn()))
            self._stop.wait(self.period)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


# ---- ports --------------------------------------------------------------------------------

def port_accepts(port):
    """True when the block's own listener serves the port: bench-listener accepts and closes,
    so the client reads a clean end of stream. A connect alone is not enough: stackie's
    forwarder holds the host port for the whole life of the stack and resets a connection
    while the block is not up yet."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(5)
    try:
        s.connect(("127.0.0.1", port))
        return s.recv(1) == b""
    except OSError:
        return False
    finally:
        s.close()


def wait_ports(ports, accepting, timeout=120, poll=0.001):
    """Polls until every port accepts (accepting=True) or refuses; returns the monotonic time
    at which the last one changed, or None on timeout."""
    pending = set(ports)
    end = time.monotonic() + timeout
    while pending:
        for p in list(pending):
            if port_accepts(p) == accepting:
                pending.discard(p)
        if not pending:
            break
        if time.monotonic() > end:
            return None
        time.sleep(poll)
    return time.monotonic()


# ---- the systems under test ---------------------------------------------------------------

class Stackie:
    """One stackied with its own STACKIE_HOME and block catalog directory under `root`.
    Blocks are block definitions (the stack file cannot set a block's network mode)."""

    def __init__(self, build, root, network):
        self.build, self.root, self.network = build, root, network
        self.home = os.path.join(root, "home")
        self.blocks = os.path.join(root, "blocks")
        os.makedirs(self.blocks, exist_ok=True)
        self.env = dict(os.environ, STACKIE_HOME=self.home, STACKIE_BLOCK_PATH=self.blocks)
        self.env.pop("XDG_RUNTIME_DIR", None)
        self.pid = None
        self.stack_file = None

    def cli(self, *args, check=True, timeout=300):
        r = subprocess.run([f"{self.build}/src/stackie", *args], env=self.env, cwd=self.root,
                           capture_output=True, text=True, timeout=timeout)
        if check and r.returncode != 0:
            raise RuntimeError(f"stackie {' '.join(args)}: exit {r.returncode}: "
                               f"{r.stderr.strip()}")
        return r

    def popen(self, *args, **kw):
        return subprocess.Popen([f"{self.build}/src/stackie", *args], env=self.env,
                                cwd=self.root, **kw)

    def define_block(self, name, program_dir, argv, port=None):
        """A block definition NAME.yml running argv (argv[0] a program in program_dir)."""
        sandbox = [f"network: {self.network}"]
        lines = [f"{name}:", "  description: benchmark block"]
        if port is not None:
            lines.append(f"  serves: {{p: {{port: {port}, type: {name.replace('.', '-')}}}}}")
        # On PATH, not the definition's `search:`: a definition's own search is not given /tmp
        # (stackie-block(5)); PATH is the user's choice.
        path = self.env.get("PATH", "/usr/bin:/bin")
        if program_dir not in path.split(":"):
            self.env["PATH"] = program_dir + ":" + path
        lines += [
            "  programs:",
            f"    {argv[0]}: {{}}",
            "  command: [" + ", ".join(f'"{a}"' for a in argv) + "]",
            "  stop_timeout: 10s",
            "  sandbox: {" + ", ".join(sandbox) + "}",
        ]
        with open(os.path.join(self.blocks, f"{name}.yml"), "w") as f:
            f.write("\n".join(lines) + "\n")

    def listening_stack(self, prefix, program_dir, ports):
        """A stack of one `bench-listener PORT` block per port, named PREFIX0, PREFIX1...;
        the daemon is started."""
        names = [f"{prefix}{i}" for i in range(len(ports))]
        for name, port in zip(names, ports):
            self.define_block(name, program_dir, ["bench-listener", str(port)], port=port)
        self.write_stack(names)
        self.start()

    def write_stack(self, names, stack="bench", read_write=()):
        """The stack of those blocks; each is given the read_write host directories (the
        stack gives a block the user's paths, a definition only the system's)."""
        self.stack_file = os.path.join(self.root, "stackie-stack.yml")
        with open(self.stack_file, "w") as f:
            f.write(f"{stack}:\n  blocks:\n")
            for n in names:
                f.write(f"    {n}:\n")
                if read_write:
                    f.write("      volumes: {" + ", ".join(
                        f'w{i}: "{p}"' for i, p in enumerate(read_write)) + "}\n")
        return self.stack_file

    def start(self):
        self.cli("daemon", "start")
        with open(os.path.join(self.home, "stackied.pid")) as f:
            self.pid = int(f.read().strip())

    def up(self):
        return self.cli("up", "-f", self.stack_file)

    def down(self):
        return self.cli("down", "-f", self.stack_file)

    def stop(self):
        if self.pid is None:
            return
        self.cli("daemon", "stop", check=False, timeout=60)
        if not wait_pid_gone(self.pid, 30):
            os.kill(self.pid, signal.SIGKILL)
        self.pid = None

    def version(self):
        return subprocess.run([f"{self.build}/src/stackied", "--version"], capture_output=True,
                              text=True).stdout.strip().splitlines()[0]


class Supervisord:
    """One supervisord (foreground, its own socket and logs) running `programs`:
    [(name, argv, {option: value})]; programs do not start by themselves unless told."""

    def __init__(self, root, programs, autostart=False):
        self.root = root
        os.makedirs(os.path.join(root, "logs"), exist_ok=True)
        self.conf = os.path.join(root, "supervisord.conf")
        self.sock = os.path.join(root, "supervisor.sock")
        parts = [
            f"[unix_http_server]\nfile={self.sock}\nchmod=0700\n",
            f"[supervisord]\nlogfile={root}/supervisord.log\npidfile={root}/supervisord.pid\n"
            f"childlogdir={root}/logs\nnodaemon=true\nloglevel=info\n",
            "[rpcinterface:supervisor]\n"
            "supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface\n",
            f"[supervisorctl]\nserverurl=unix://{self.sock}\n",
        ]
        for name, argv, options in programs:
            opts = {"command": " ".join(shlex.quote(a) for a in argv),
                    "autostart": "true" if autostart else "false", "startsecs": "0",
                    "autorestart": "unexpected", "stopsignal": "TERM", "stopwaitsecs": "10",
                    "stdout_logfile": f"{root}/logs/{name}.out.log",
                    "stderr_logfile": f"{root}/logs/{name}.err.log"}
            opts.update(options)
            parts.append(f"[program:{name}]\n" + "".join(f"{k}={v}\n" for k, v in opts.items()))
        with open(self.conf, "w") as f:
            f.write("\n".join(parts))
        self.proc = None
        self.pid = None

    def start(self):
        self.proc = subprocess.Popen(["supervisord", "-n", "-c", self.conf],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.pid = self.proc.pid
        end = time.monotonic() + 30
        while time.monotonic() < end:
            if os.path.exists(self.sock) and self.ctl("pid", check=False).returncode == 0:
                return
            time.sleep(0.05)
        raise RuntimeError("supervisord did not come up")

    def ctl(self, *args, check=True, timeout=300):
        r = subprocess.run(["supervisorctl", "-c", self.conf, *args], capture_output=True,
                           text=True, timeout=timeout)
        if check and r.returncode != 0:
            raise RuntimeError(f"supervisorctl {' '.join(args)}: exit {r.returncode}: "
                               f"{r.stdout.strip()} {r.stderr.strip()}")
        return r

    def rpc(self):
        """An XML-RPC proxy on the socket: supervisord without supervisorctl's start-up."""
        import xmlrpc.client
        from supervisor.xmlrpc import SupervisorTransport
        return xmlrpc.client.ServerProxy(
            "http://127.0.0.1", transport=SupervisorTransport(None, None, "unix://" + self.sock))

    def ctl_popen(self, *args, **kw):
        return subprocess.Popen(["supervisorctl", "-c", self.conf, *args], **kw)

    def stop(self):
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None


class S6:
    """One s6-svscan over a scan directory of services [(name, argv, log_dir)], each with an
    s6-log logger service (ISO 8601 timestamps, 10 MiB files, 5 kept: as stackied's logs)."""

    def __init__(self, root, services):
        self.scan = os.path.join(root, "scan")
        for name, argv, log_dir in services:
            svc = os.path.join(self.scan, name)
            os.makedirs(os.path.join(svc, "log"), exist_ok=True)
            os.makedirs(log_dir, exist_ok=True)
            self._script(os.path.join(svc, "run"),
                         "exec " + " ".join(shlex.quote(a) for a in argv))
            self._script(os.path.join(svc, "log", "run"),
                         f"exec s6-log -b n5 s10485760 T {shlex.quote(log_dir)}")
        self.proc = None
        self.pid = None

    @staticmethod
    def _script(path, body):
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + body + "\n")
        os.chmod(path, 0o755)

    def start(self):
        self.proc = subprocess.Popen(["s6-svscan", self.scan], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        self.pid = self.proc.pid

    def loggers(self):
        """The s6 processes (svscan, supervise, log): the ones doing the supervising."""
        if self.pid is None:
            return []
        return [self.pid] + [p for p in descendants(self.pid) if comm(p).startswith("s6-")]

    def stop(self):
        if self.proc is None:
            return
        tree = descendants(self.pid)
        subprocess.run(["s6-svscanctl", "-t", self.scan], capture_output=True)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for p in tree:  # anything left behind (it should not be)
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc = None


def versions():
    def first_line(cmd):
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
            return (r.stdout or r.stderr).strip().splitlines()[0]
        except (OSError, IndexError, subprocess.TimeoutExpired):
            return "?"
    return {
        "supervisord": first_line(["supervisord", "--version"]),
        "s6": first_line(["dpkg-query", "-W", "-f=${Version}", "s6"]),
        "bwrap": first_line(["bwrap", "--version"]),
    }
