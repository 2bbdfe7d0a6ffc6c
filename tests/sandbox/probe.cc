// Runs inside the lockbox and reports what it could do, one word or number on stdout, so the
// tests (lockbox_isolation_test.cc) assert the outcome from outside. Each syscall probe passes
// arguments the kernel itself would reject with a *different* errno (EINVAL, EFAULT, EBADF,
// ENOENT): seeing EPERM/ENOSYS proves the filter answered, not the kernel.
#include <arpa/inet.h>
#include <asm/unistd.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

int result(long rc) {
  if (rc >= 0)
    std::puts("ok");
  else
    std::printf("%s\n", strerrorname_np(errno));
  return 0;
}

long raw(long nr, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0) {
  return syscall(nr, a, b, c, d, e);
}

// Hostile block for the --join seam (issue 14): every process that enters this pid namespace
// is raced for a writable /proc/N/mem while it still runs stackie-lockbox (a joiner's child
// between dropping its capabilities and execve). Such a write reaches the joiner's memory. The
// write puts back the byte it read, so a win proves the access without breaking the victim.
// Prints "ready", "saw N" per process raced, "WON N" per successful write; runs until killed.
// An fd of /proc/N/mem or /proc/N/maps stays bound to the mm of the moment it was opened, even
// after execve replaces the process's mm.
bool race_for_mem(long pid, const std::function<long()>& last_pid) {
  std::string proc = "/proc/" + std::to_string(pid);
  int missing = 0;
  for (int attempt = 0; attempt < 200000; ++attempt) {
    int mem = open((proc + "/mem").c_str(), O_RDWR | O_CLOEXEC);
    if (mem < 0) {
      // Not there: not yet (the pid is counted before /proc shows it) or gone (a newer
      // process exists: race that one instead).
      if ((errno == ENOENT || errno == ESRCH) && (++missing > 500 || last_pid() != pid))
        return false;
      continue;  // else not (yet) ours to open
    }
    // Maps opened after mem and still showing the lockbox: both are the joiner's mm (an mm is
    // only ever replaced by execve, never back).
    int maps_fd = open((proc + "/maps").c_str(), O_RDONLY | O_CLOEXEC);
    std::string maps;
    char buffer[4096];
    ssize_t n;
    while (maps_fd >= 0 && (n = read(maps_fd, buffer, sizeof buffer)) > 0)
      maps.append(buffer, static_cast<size_t>(n));
    if (maps_fd >= 0) close(maps_fd);
    bool won = false;
    if (maps.find("stackie-lockbox") != std::string::npos) {
      // The first writable mapping: read a byte and write it back.
      size_t at = maps.find(" rw-p ");
      size_t line = at == std::string::npos ? at : maps.rfind('\n', at);
      unsigned long address = 0;
      if (at != std::string::npos)
        address =
            std::strtoul(maps.c_str() + (line == std::string::npos ? 0 : line + 1), nullptr, 16);
      char byte;
      if (address && pread(mem, &byte, 1, static_cast<off_t>(address)) == 1 &&
          pwrite(mem, &byte, 1, static_cast<off_t>(address)) == 1)
        won = true;
    }
    close(mem);
    return won;
  }
  return false;
}

int mem_racer() {
  int last = open("/proc/sys/kernel/ns_last_pid", O_RDONLY | O_CLOEXEC);
  if (last < 0) {
    std::printf("no ns_last_pid: %s\n", strerrorname_np(errno));
    return 1;
  }
  std::function<long()> read_last = [last] {
    char text[32] = {};
    return pread(last, text, sizeof text - 1, 0) > 0 ? std::atol(text) : 0L;
  };
  long seen = read_last();
  std::puts("ready");
  std::fflush(stdout);
  // Always the newest process: one that was missed while racing another is long past its
  // window (and counted as seen).
  for (;;) {
    long now = read_last();
    if (now == seen) continue;
    bool won = now != getpid() && race_for_mem(now, read_last);
    for (long pid = seen + 1; pid < now; ++pid) std::printf("saw %ld\n", pid);
    std::printf(won ? "WON %ld\n" : "saw %ld\n", now);
    std::fflush(stdout);
    seen = now;
  }
}

// Hostile block for the exec terminal seam (issue 14): scans every process's fds for a
// terminal that is not a pty of this sandbox's own devpts (the caller's, if `stackie exec`
// handed it in; or the pty exec made for CMD), and writes "HUNTER MAJ:MIN WAS HERE" to each.
// Prints "ready", then "tty MAJ:MIN (hex, as stat -c %t:%T) LINK write ok|ERRNO" per terminal
// found. Runs until killed, scanning every 20 ms; with MAX > 0 stops after MAX finds.
int tty_hunter(int max) {
  struct stat own_pts;
  bool have_own = stat("/dev/pts/ptmx", &own_pts) == 0;
  std::vector<std::string> reported;
  std::puts("ready");
  std::fflush(stdout);
  for (;;) {
    DIR* proc = opendir("/proc");
    while (dirent* entry = proc ? readdir(proc) : nullptr) {
      if (!std::isdigit(static_cast<unsigned char>(entry->d_name[0]))) continue;
      if (std::atol(entry->d_name) == getpid()) continue;
      std::string fds = std::string("/proc/") + entry->d_name + "/fd";
      DIR* dir = opendir(fds.c_str());
      while (dirent* fd = dir ? readdir(dir) : nullptr) {
        if (fd->d_name[0] == '.') continue;
        std::string path = fds + "/" + fd->d_name;
        struct stat st;
        if (stat(path.c_str(), &st) != 0 || !S_ISCHR(st.st_mode)) continue;
        if (have_own && major(st.st_rdev) == major(own_pts.st_rdev) && st.st_dev == own_pts.st_dev)
          continue;  // a pty of this sandbox's own devpts
        int tty = open(path.c_str(), O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        if (tty < 0 || !isatty(tty)) {
          if (tty >= 0) close(tty);
          continue;
        }
        char link[256] = {};
        if (readlink(path.c_str(), link, sizeof link - 1) < 0) link[0] = '?';
        char device[32];
        std::snprintf(device, sizeof device, "%x:%x", major(st.st_rdev), minor(st.st_rdev));
        if (std::find(reported.begin(), reported.end(), device) == reported.end()) {
          reported.push_back(device);
          std::string line = std::string("\r\nHUNTER ") + device + " WAS HERE\r\n";
          bool wrote = write(tty, line.data(), line.size()) > 0;
          std::printf("tty %s %s write %s\n", device, link, wrote ? "ok" : strerrorname_np(errno));
          std::fflush(stdout);
          if (max > 0 && static_cast<int>(reported.size()) >= max) return 0;
        }
        close(tty);
      }
      if (dir) closedir(dir);
    }
    if (proc) closedir(proc);
    usleep(20000);
  }
}

int probe(const std::string& what, char** args) {
  if (what == "mem-racer") return mem_racer();
  if (what == "tty-hunter") return tty_hunter(args[0] ? std::atoi(args[0]) : 0);
  if (what == "keyctl") return result(raw(__NR_keyctl, 0x7fff, 0, 0, 0, 0));
  if (what == "add_key") return result(raw(__NR_add_key, 0, 0, 0, 0, 0));
  if (what == "request_key") return result(raw(__NR_request_key, 0, 0, 0, 0));
  if (what == "bpf") return result(raw(__NR_bpf, 9999, 0, 0));
  if (what == "perf_event_open") return result(raw(__NR_perf_event_open, 0, 0, -1, -1, 0));
  if (what == "userfaultfd") return result(raw(__NR_userfaultfd, 1 | 0x40000000));
  if (what == "io_uring_setup") return result(raw(__NR_io_uring_setup, 0, 0));
  if (what == "mount") return result(mount("none", "/", nullptr, MS_NOUSER, nullptr));
  if (what == "umount2") return result(umount2("/", 0xffff));
  if (what == "chroot") return result(chroot("/nonexistent-dir"));
  if (what == "pivot_root") return result(raw(__NR_pivot_root, 0, 0));
  if (what == "setns") return result(setns(-1, 0));
  if (what == "unshare-user") return result(unshare(CLONE_NEWUSER));
  if (what == "clone-newuser") {
    long pid = raw(__NR_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
    if (pid == 0) _exit(0);
    if (pid > 0) waitpid(static_cast<pid_t>(pid), nullptr, 0);
    return result(pid);
  }
  if (what == "clone3") return result(raw(__NR_clone3, 0, 0));
  if (what == "fsopen") return result(raw(__NR_fsopen, 0, 0));
  if (what == "open_tree") return result(raw(__NR_open_tree, -1, 0, 0));
  if (what == "move_mount") return result(raw(__NR_move_mount, -1, 0, -1, 0, 0));
  if (what == "mount_setattr") return result(raw(__NR_mount_setattr, -1, 0, 0, 0, 0));
  if (what == "ptrace") {
    pid_t child = fork();
    if (child == 0) {
      pause();
      _exit(0);
    }
    long rc = ptrace(PTRACE_ATTACH, child, 0, 0);
    int err = errno;
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    errno = err;
    return result(rc);
  }
  if (what == "process_vm_readv") {
    char buffer[8];
    iovec local{buffer, sizeof buffer}, remote{nullptr, sizeof buffer};
    return result(process_vm_readv(getpid(), &local, 1, &remote, 1, 0));
  }
  if (what == "tiocsti") {
    char c = 'x';
    return result(ioctl(0, TIOCSTI, &c));
  }
  if (what == "tiocsti-highbits") {
    char c = 'x';
    return result(raw(__NR_ioctl, 0, (1L << 32) | TIOCSTI, reinterpret_cast<long>(&c)));
  }
  if (what == "tioclinux") {
    char c = 0;
    return result(ioctl(0, TIOCLINUX, &c));
  }
  if (what == "mknod")  // mknod [PATH]: a character device (/dev/null's numbers)
    return result(mknod(args[0] ? args[0] : "/tmp/node", S_IFCHR | 0600, makedev(1, 3)));
  if (what == "x32-keyctl") return result(raw(0x40000000 | 250, 0x7fff));
  if (what == "write") {  // write PATH: create or truncate and write
    int fd = open(args[0], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return result(-1);
    return result(write(fd, "data", 4));
  }
  if (what == "read") {
    FILE* f = std::fopen(args[0], "r");
    if (!f) return result(-1);
    char line[4096] = {};
    size_t n = std::fread(line, 1, sizeof line - 1, f);
    std::fwrite(line, 1, n, stdout);
    return 0;
  }
  if (what == "exists") return result(access(args[0], F_OK));
  if (what == "mkdir") return result(mkdir(args[0], 0755));
  if (what == "statvfs") {  // flags of the mount holding PATH
    struct statvfs st;
    if (statvfs(args[0], &st) != 0) return result(-1);
    std::printf("%s%s%s\n", st.f_flag & ST_RDONLY ? "ro " : "rw ",
                st.f_flag & ST_NOSUID ? "nosuid " : "", st.f_flag & ST_NODEV ? "nodev" : "");
    return 0;
  }
  if (what == "remount-rw")
    return result(mount(nullptr, args[0], nullptr, MS_REMOUNT | MS_BIND, nullptr));
  if (what == "list") {  // directory entries, sorted, space separated
    DIR* dir = opendir(args[0]);
    if (!dir) return result(-1);
    std::vector<std::string> names;
    while (dirent* e = readdir(dir))
      if (e->d_name[0] != '.') names.emplace_back(e->d_name);
    std::sort(names.begin(), names.end());
    for (auto& n : names) std::printf("%s ", n.c_str());
    std::puts("");
    return 0;
  }
  if (what == "fds") {
    DIR* dir = opendir("/proc/self/fd");
    int self = dirfd(dir);
    std::vector<int> fds;
    while (dirent* e = readdir(dir))
      if (e->d_name[0] != '.' && std::atoi(e->d_name) != self) fds.push_back(std::atoi(e->d_name));
    std::sort(fds.begin(), fds.end());
    for (int fd : fds) std::printf("%d ", fd);
    std::puts("");
    return 0;
  }
  if (what == "status") {  // a field of /proc/self/status
    FILE* f = std::fopen("/proc/self/status", "r");
    char line[512];
    while (std::fgets(line, sizeof line, f))
      if (std::strncmp(line, args[0], std::strlen(args[0])) == 0 &&
          line[std::strlen(args[0])] == ':')
        std::printf("%s", line + std::strlen(args[0]) + 2);
    return 0;
  }
  if (what == "ids") {
    std::printf("%d %d\n", getuid(), getgid());
    return 0;
  }
  if (what == "session") {  // am I a session leader, and do I have a controlling terminal?
    int tty = open("/dev/tty", O_RDWR);
    std::printf("%s %s\n", getsid(0) == getpid() ? "leader" : "member",
                tty >= 0 ? "tty" : strerrorname_np(errno));
    return 0;
  }
  if (what == "kill") return result(kill(std::atoi(args[0]), 0));
  if (what == "pid") {
    std::printf("%d\n", getpid());
    return 0;
  }
  if (what == "interfaces") {
    struct if_nameindex* names = if_nameindex();
    for (struct if_nameindex* i = names; i && i->if_index; ++i) std::printf("%s ", i->if_name);
    std::puts("");
    return 0;
  }
  if (what == "connect-port") {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(std::atoi(args[0])));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return result(connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr));
  }
  if (what == "talk-port") {  // connect to 127.0.0.1:PORT, send "ping", print the reply
    int s = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(std::atoi(args[0])));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return result(-1);
    if (write(s, "ping", 4) != 4) return result(-1);
    char reply[64] = {};
    ssize_t n = read(s, reply, sizeof reply - 1);
    std::puts(n > 0 ? reply : "no reply");
    return 0;
  }
  if (what == "serve-port") {  // listen on 127.0.0.1:PORT, answer one client "pong", exit
    int l = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(std::atoi(args[0])));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(l, reinterpret_cast<sockaddr*>(&addr), sizeof addr) || listen(l, 4)) return result(-1);
    int c = accept(l, nullptr, nullptr);
    if (c < 0 || write(c, "pong", 4) != 4) return result(-1);
    close(c);
    std::puts("served");
    return 0;
  }
  if (what == "listen-connect") {  // listen-connect [PORT]: loopback works inside
    int l = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(args[0] ? std::atoi(args[0]) : 0));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (bind(l, reinterpret_cast<sockaddr*>(&addr), len) || listen(l, 1) ||
        getsockname(l, reinterpret_cast<sockaddr*>(&addr), &len))
      return result(-1);
    int c = socket(AF_INET, SOCK_STREAM, 0);
    return result(connect(c, reinterpret_cast<sockaddr*>(&addr), len));
  }
  if (what == "bind-port") {  // bind 127.0.0.1:PORT and listen: "ok" or the errno
    int l = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(std::atoi(args[0])));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(l, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return result(-1);
    return result(listen(l, 1));
  }
  if (what == "unix-connect") {  // connect to the socket file PATH
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    if (s < 0) return result(-1);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, args[0], sizeof addr.sun_path - 1);
    return result(connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr));
  }
  if (what == "parent-environ") {  // the environment of whoever started me (the monitor)
    return result(open(("/proc/" + std::to_string(getppid()) + "/environ").c_str(), O_RDONLY));
  }
  if (what == "unlink") return result(unlink(args[0]));
  if (what == "abstract-socket") {
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    if (s < 0) return result(-1);  // the landlock backend refuses unix sockets
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path + 1, args[0], sizeof addr.sun_path - 2);
    socklen_t len =
        static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + std::strlen(args[0]));
    return result(connect(s, reinterpret_cast<sockaddr*>(&addr), len));
  }
  if (what == "sethostname") {
    long rc = sethostname("evil", 4);
    int err = errno;
    char name[256] = {};
    gethostname(name, sizeof name - 1);
    errno = err;
    std::printf("%s ", name);
    return result(rc);
  }
  if (what == "hostname") {
    char name[256] = {};
    gethostname(name, sizeof name - 1);
    std::puts(name);
    return 0;
  }
  if (what == "shm") return result(shmget(std::atoi(args[0]), 0, 0));
  if (what == "env") {
    for (char** e = environ; *e; ++e) std::printf("%s\n", *e);
    return 0;
  }
  if (what == "threads") {
    std::vector<std::thread> threads;
    std::atomic<int> sum{0};
    for (int i = 0; i < 8; ++i) threads.emplace_back([&sum, i] { sum += i; });
    for (auto& t : threads) t.join();
    std::printf("%d\n", sum.load());
    return 0;
  }
  if (what == "exit") _exit(std::atoi(args[0]));
  if (what == "raise") raise(std::atoi(args[0]));
  if (what == "wait-signal") {  // print the signal received, exit 0
    sigset_t set;
    sigemptyset(&set);
    for (int sig : {SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGQUIT}) sigaddset(&set, sig);
    sigprocmask(SIG_BLOCK, &set, nullptr);
    std::puts("ready");
    std::fflush(stdout);
    int sig = 0;
    sigwait(&set, &sig);
    std::printf("%s\n", sigabbrev_np(sig));
    return 0;
  }
  if (what == "sleep") {
    std::puts("ready");
    std::fflush(stdout);
    sleep(static_cast<unsigned>(std::atoi(args[0])));
    return 0;
  }
  if (what == "daemonize") {  // a setsid'd grandchild that keeps stdout open and sleeps
    if (fork() == 0) {
      setsid();
      if (fork() == 0) {
        std::puts("ready");
        std::fflush(stdout);
        sleep(60);
        _exit(0);
      }
      _exit(0);
    }
    wait(nullptr);
    sleep(60);
    return 0;
  }
  if (what == "proc-mem") {  // read pid 1's memory and environment
    int fd = open("/proc/1/mem", O_RDONLY);
    int err = errno;
    int env = open("/proc/1/environ", O_RDONLY);
    std::printf("%s %s\n", fd >= 0 ? "mem-open" : strerrorname_np(err),
                env >= 0 ? "environ-open" : strerrorname_np(errno));
    return 0;
  }
  if (what == "fork-bomb") {
    // Up to N children that sleep until the sandbox dies; stop at the first failed fork.
    // Prints "forked K ERRNO" (or "forked N ok"), then sleeps with them (or exits, leaving
    // them, with "then-exit").
    int wanted = std::atoi(args[0]);
    int forked = 0;
    int err = 0;
    for (; forked < wanted; ++forked) {
      pid_t child = fork();
      if (child == 0) {
        close(1);  // the parent's report alone ends the reader's wait
        close(2);
        for (;;) pause();
      }
      if (child < 0) {
        err = errno;
        break;
      }
    }
    std::printf("forked %d %s\n", forked, err ? strerrorname_np(err) : "ok");
    std::fflush(stdout);
    if (args[1] != nullptr && std::string(args[1]) == "then-exit") return 0;
    for (;;) pause();
  }
  if (what == "heavy-tree") {
    // N children that each touch M MiB and keep stdout open: a tree whose exit takes a while
    // (every page given back). Prints "ready" once all have touched theirs, then sleeps.
    int wanted = std::atoi(args[0]);
    size_t bytes = static_cast<size_t>(std::atol(args[1])) << 20;
    int touched[2];
    if (pipe(touched) != 0) return result(-1);
    for (int i = 0; i < wanted; ++i) {
      if (fork() == 0) {
        void* memory =
            mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (memory != MAP_FAILED) std::memset(memory, 1, bytes);
        char done = memory == MAP_FAILED ? 'x' : '.';
        (void)write(touched[1], &done, 1);
        for (;;) pause();
      }
    }
    std::string reports;
    char buffer[64];
    ssize_t n;
    while (reports.size() < static_cast<size_t>(wanted) &&
           (n = read(touched[0], buffer, sizeof buffer)) > 0)
      reports.append(buffer, static_cast<size_t>(n));
    std::puts(reports.find('x') == std::string::npos ? "ready" : "ENOMEM");
    std::fflush(stdout);
    for (;;) pause();
  }
  if (what == "alloc") {  // touch N MiB of private memory: "ok" or the errno of the failure
    size_t bytes = static_cast<size_t>(std::atol(args[0])) << 20;
    void* block = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (block == MAP_FAILED) return result(-1);
    std::memset(block, 1, bytes);
    return result(0);
  }
  if (what == "malloc") {  // the same through malloc (brk and mmap both count)
    size_t bytes = static_cast<size_t>(std::atol(args[0])) << 20;
    char* block = static_cast<char*>(std::malloc(bytes));
    if (block == nullptr) {
      std::puts("ENOMEM");
      return 0;
    }
    std::memset(block, 1, bytes);
    std::printf("ok %d\n", block[bytes - 1]);
    return 0;
  }
  if (what == "fs-size") {  // total bytes of the filesystem at PATH
    struct statvfs info {};
    if (statvfs(args[0], &info) != 0) return result(-1);
    std::printf("%llu\n", static_cast<unsigned long long>(info.f_blocks) * info.f_frsize);
    return 0;
  }
  if (what == "fill") {  // write N MiB to the file PATH: "ok" or the errno (ENOSPC)
    int fd = open(args[0], O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return result(-1);
    std::vector<char> chunk(1 << 20, 'x');
    for (int i = 0; i < std::atoi(args[1]); ++i) {
      for (size_t done = 0; done < chunk.size();) {
        ssize_t n = write(fd, chunk.data() + done, chunk.size() - done);
        if (n < 0) return result(-1);
        done += static_cast<size_t>(n);
      }
    }
    return result(close(fd));
  }
  if (what == "cwd") {
    char dir[4096];
    std::puts(getcwd(dir, sizeof dir) ? dir : "?");
    return 0;
  }
  std::fprintf(stderr, "probe: unknown probe '%s'\n", what.c_str());
  return 2;
}

}  // namespace

// In the ASan build (scripts/test --sanitize) this program runs inside the lockbox, whose
// seccomp filter refuses ptrace: LeakSanitizer needs it to stop the process at exit, would fail
// and turn every exit status into 1. Leaks are checked where the code under test runs.
extern "C" const char* __asan_default_options();
extern "C" const char* __asan_default_options() {
  return "detect_leaks=0";
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: probe WHAT [ARG...]\n");
    return 2;
  }
  int rc = probe(argv[1], argv + 2);
  std::fflush(stdout);
  return rc;
}
