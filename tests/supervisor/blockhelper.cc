// A stand-in block for the supervisor tests: a small program whose behaviour is spelled out on
// its command line, one action after another.
//
//   print TEXT | eprint TEXT     a line on stdout / stderr
//   stamp FILE                   append "<pid> <monotonic ms>\n" to FILE (counts starts)
//   sleep MS                     sleep
//   exit N                       exit with status N now
//   ignore SIGNAME               ignore TERM or INT
//   exit-on SIGNAME N            exit N when the signal arrives
//   daemonize PIDFILE            fork a setsid()'d, double-forked grandchild that writes its
//                                pid to PIDFILE and sleeps forever
//   flood N                      N lines of 100 bytes on stdout, as fast as the pipe takes
//   longline N                   one line of N 'x'
//   serve PORT STATUS            listen on 127.0.0.1:PORT; answer every connection with an
//                                HTTP status line STATUS (0 = close at once); never returns
//   check-file FILE              exit 0 if FILE exists, else 1
//   require FILE                 exit 1 (saying so on stderr) unless FILE exists; go on if it does
//   binary                       one stdout line holding a NUL and bytes that are not UTF-8
//   tick MS                      "tick N" on stdout every MS milliseconds, forever
//   fork-bomb N                  fork up to N children that sleep forever, stopping at the first
//                                failure; print "forked K ok|ERRNO-NAME" (a hostile block)
//   alloc MIB                    touch MIB MiB of private memory; print "alloc ok" or
//                                "alloc ERRNO-NAME" (a hostile block)
//   spin MS                      keep one CPU busy for MS ms (0: forever)
//   name TEXT                    set this process's name (comm; /proc/PID/stat) to TEXT, which
//                                may hold ") " and numbers (a hostile block)
//   write-file FILE MIB          write MIB MiB to FILE and fsync it
//   await FILE                   wait until FILE exists (checked every 10 ms)
//   stdio                        one stdout line: "stdout fifo|socket|other SIZE", SIZE the
//                                pipe's capacity in bytes (F_GETPIPE_SZ; -1 for no pipe)
//   namespaces FILE              append "uid=N user=user:[I] net=net:[I]\n" to FILE: the uid
//                                and the user and network namespaces it runs in (Linux)
//   wait                         sleep forever
// Without `exit`, it exits 0 after the last action.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/mman.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <string_view>

namespace {

int exit_code_on_signal[65];

// The errno's name ("ENOMEM"), which the tests read back: glibc's strerrorname_np, else the
// few names these actions can meet (macOS has no such call).
const char* errno_name(int error) {
#ifdef __GLIBC__
  return strerrorname_np(error);
#else
  switch (error) {
    case EAGAIN: return "EAGAIN";
    case ENOMEM: return "ENOMEM";
    case ENOSPC: return "ENOSPC";
    case EDQUOT: return "EDQUOT";
    case EFBIG: return "EFBIG";
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    default: return "EOTHER";
  }
#endif
}

void exit_with_code(int signum) {
  _exit(exit_code_on_signal[signum]);
}

int signal_number(std::string_view name) {
  if (name == "TERM") return SIGTERM;
  if (name == "INT") return SIGINT;
  if (name == "HUP") return SIGHUP;
  std::fprintf(stderr, "blockhelper: unknown signal %.*s\n", int(name.size()), name.data());
  std::exit(99);
}

long monotonic_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

void write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n <= 0) std::exit(98);
    done += size_t(n);
  }
}

[[noreturn]] void serve(int port, int status) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(uint16_t(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd, 16) != 0) {
    std::perror("blockhelper: listen");
    std::exit(97);
  }
  std::printf("listening on %d\n", port);
  std::fflush(stdout);
  for (;;) {
    int client = accept(fd, nullptr, nullptr);
    if (client < 0) continue;
    if (status != 0) {
      char buf[1024];
      (void)!read(client, buf, sizeof buf);
      std::string reply = "HTTP/1.0 " + std::to_string(status) + " X\r\nContent-Length: 0\r\n\r\n";
      (void)!write(client, reply.data(), reply.size());
    }
    close(client);
  }
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
  for (int i = 1; i < argc; ++i) {
    std::string_view action = argv[i];
    auto arg = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "blockhelper: %s needs an argument\n", argv[i]);
        std::exit(99);
      }
      return argv[++i];
    };
    if (action == "print") {
      std::printf("%s\n", arg());
      std::fflush(stdout);
    } else if (action == "eprint") {
      std::fprintf(stderr, "%s\n", arg());
    } else if (action == "stamp") {
      FILE* f = std::fopen(arg(), "a");
      if (f == nullptr) return 96;
      std::fprintf(f, "%d %ld\n", getpid(), monotonic_ms());
      std::fclose(f);
    } else if (action == "sleep") {
      long ms = std::atol(arg());
      timespec ts{ms / 1000, (ms % 1000) * 1000000L};
      while (nanosleep(&ts, &ts) != 0) {
      }
    } else if (action == "exit") {
      return std::atoi(arg());
    } else if (action == "ignore") {
      std::signal(signal_number(arg()), SIG_IGN);
    } else if (action == "exit-on") {
      int signum = signal_number(arg());
      exit_code_on_signal[signum] = std::atoi(arg());
      std::signal(signum, exit_with_code);
    } else if (action == "daemonize") {
      const char* pidfile = arg();
      if (fork() == 0) {
        setsid();
        if (fork() == 0) {
          FILE* f = std::fopen(pidfile, "w");
          if (f != nullptr) {
            std::fprintf(f, "%d\n", getpid());
            std::fclose(f);
          }
          for (;;) pause();
        }
        _exit(0);
      }
    } else if (action == "flood") {
      long n = std::atol(arg());
      std::string line(99, 'f');
      line += '\n';
      std::string chunk;
      for (int k = 0; k < 100; ++k) chunk += line;
      for (long k = 0; k < n / 100; ++k) write_all(1, chunk);
      for (long k = 0; k < n % 100; ++k) write_all(1, line);
    } else if (action == "await") {
      const char* file = arg();
      while (access(file, F_OK) != 0) usleep(10000);
    } else if (action == "stdio") {
      struct stat out {};
      fstat(1, &out);
      const char* kind = S_ISFIFO(out.st_mode)   ? "fifo"
                         : S_ISSOCK(out.st_mode) ? "socket"
                                                 : "other";
#ifdef F_GETPIPE_SZ
      const int size = fcntl(1, F_GETPIPE_SZ);
#else
      const int size = -1;
#endif
      std::printf("stdout %s %d\n", kind, size);
      std::fflush(stdout);
    } else if (action == "longline") {
      write_all(1, std::string(size_t(std::atol(arg())), 'x') + "\n");
    } else if (action == "serve") {
      int port = std::atoi(arg());
      serve(port, std::atoi(arg()));
    } else if (action == "check-file") {
      return access(arg(), F_OK) == 0 ? 0 : 1;
    } else if (action == "require") {
      const char* file = arg();
      if (access(file, F_OK) != 0) {
        std::fprintf(stderr, "blockhelper: %s is missing\n", file);
        return 1;
      }
    } else if (action == "tick") {
      long ms = std::atol(arg());
      for (long n = 1;; ++n) {
        std::printf("tick %ld\n", n);
        std::fflush(stdout);
        timespec ts{ms / 1000, (ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0) {
        }
      }
    } else if (action == "binary") {
      write_all(1, std::string("nul[\0] bad[\xff\xfe] end\n", 19));
    } else if (action == "fork-bomb") {
      long wanted = std::atol(arg());
      long forked = 0;
      int err = 0;
      for (; forked < wanted; ++forked) {
        pid_t child = fork();
        if (child == 0) {
          for (;;) pause();
        }
        if (child < 0) {
          err = errno;
          break;
        }
      }
      std::printf("forked %ld %s\n", forked, err ? errno_name(err) : "ok");
      std::fflush(stdout);
    } else if (action == "alloc") {
      size_t bytes = static_cast<size_t>(std::atol(arg())) << 20;
      void* block =
          mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (block != MAP_FAILED) std::memset(block, 1, bytes);
      std::printf("alloc %s\n", block != MAP_FAILED ? "ok" : errno_name(errno));
      std::fflush(stdout);
    } else if (action == "spin") {
      long ms = std::atol(arg());
      long until = monotonic_ms() + ms;
      volatile unsigned long sink = 0;
      while (ms == 0 || monotonic_ms() < until)
        for (int k = 0; k < 100000; ++k) sink = sink + static_cast<unsigned long>(k);
    } else if (action == "name") {
#ifdef __linux__
      prctl(PR_SET_NAME, arg(), 0, 0, 0);
#else
      pthread_setname_np(arg());  // macOS: the calling thread's name, what ps shows
#endif
    } else if (action == "write-file") {
      const char* file = arg();
      long mib = std::atol(arg());
      int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
      std::string chunk(1 << 20, 'w');
      for (long k = 0; fd >= 0 && k < mib; ++k) write_all(fd, chunk);
      if (fd >= 0) {
        fsync(fd);
        close(fd);
      }
      std::printf("wrote %s\n", fd >= 0 ? "ok" : errno_name(errno));
      std::fflush(stdout);
    } else if (action == "namespaces") {
      FILE* f = std::fopen(arg(), "a");
      if (f == nullptr) return 96;
      char user[64] = "", net[64] = "";
      (void)!readlink("/proc/self/ns/user", user, sizeof user - 1);
      (void)!readlink("/proc/self/ns/net", net, sizeof net - 1);
      std::fprintf(f, "uid=%d user=%s net=%s\n", static_cast<int>(getuid()), user, net);
      std::fclose(f);
    } else if (action == "wait") {
      for (;;) pause();
    } else {
      std::fprintf(stderr, "blockhelper: unknown action %s\n", argv[i]);
      return 99;
    }
  }
  return 0;
}
