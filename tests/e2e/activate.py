#!/usr/bin/env python3
"""A tiny service manager for tests: socket activation and sd_notify, as systemd does them.

    activate.py LISTEN_PATH NOTIFY_ADDRESS NOTIFY_LOG -- COMMAND [ARG...]

Binds and listens on the Unix stream socket LISTEN_PATH, binds the datagram socket
NOTIFY_ADDRESS (a path, or "@name" in the abstract namespace), then runs COMMAND with the
listening socket as fd 3, LISTEN_FDS=1, LISTEN_PID=<its pid>, LISTEN_FDNAMES and NOTIFY_SOCKET.
Every notification is appended to NOTIFY_LOG, one a line. Exits with COMMAND's status.
"""
import os
import select
import socket
import sys


def main():
    if len(sys.argv) < 6 or sys.argv[4] != "--":
        sys.stderr.write(__doc__)
        return 2
    listen_path, notify_address, notify_log = sys.argv[1:4]
    command = sys.argv[5:]

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(listen_path)
    os.chmod(listen_path, 0o600)
    listener.listen(16)
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind("\0" + notify_address[1:] if notify_address.startswith("@") else notify_address)

    pid = os.fork()
    if pid == 0:
        if listener.fileno() != 3:
            os.dup2(listener.fileno(), 3)
        os.set_inheritable(3, True)  # Python's sockets are close-on-exec
        os.closerange(4, 256)
        env = dict(os.environ)
        env.update(LISTEN_FDS="1", LISTEN_PID=str(os.getpid()), LISTEN_FDNAMES="stackied.socket",
                   NOTIFY_SOCKET=notify_address)
        try:
            os.execvpe(command[0], command, env)
        finally:
            os._exit(127)
    listener.close()  # the child has it; as systemd, we would keep ours, but the test wants none

    with open(notify_log, "a", buffering=1) as log:
        while True:
            ready, _, _ = select.select([notify], [], [], 0.1)
            if ready:
                log.write(notify.recv(4096).decode() + "\n")
                continue
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                # Datagrams sent just before the exit are already queued.
                while select.select([notify], [], [], 0)[0]:
                    log.write(notify.recv(4096).decode() + "\n")
                return os.waitstatus_to_exitcode(status) if status else 0


if __name__ == "__main__":
    sys.exit(main())
