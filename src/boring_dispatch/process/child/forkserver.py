"""The clean fork server: ``python -I -m boring_dispatch.process.child.forkserver``.

Started by the dispatcher (:mod:`boring_dispatch.process._fork`) the way a
gateway child is started today: isolated (``-I -B -X utf8``), the allowlisted
environment of :func:`~boring_dispatch.process.env.child_environment` without
a trace id, cwd ``/``, every descriptor closed but its control socket, its own
session. It imports the runner and nothing of any repository, makes itself
non-dumpable (a gateway of the same uid cannot read its memory or open its
descriptors through ``/proc``), then forks one child per request.

The server never sees a call's data. A request is one byte on the control
socket (``SOCK_SEQPACKET``) with exactly six descriptors: the call's spec
socket, its status socket, the child's stdin, stdout and stderr, and the
broker socket. The forked child, not the server, reads the runner command,
the environment and the working directory from the spec socket
(:mod:`~boring_dispatch.process.child._forked`). The server only writes the
child's pid, and later its wait status, on the status socket.

The server stays single-threaded (it refuses to fork otherwise) and keeps an
exited child as a zombie (``waitid(WNOWAIT)``) until the dispatcher has read
its status and asks for the reaping (``R``, answered ``r``), as ``Popen.wait``
reaps a spawned child: the leader's pid, which is its process group and
session id, cannot be reused before that. A status socket closed while its
child runs kills the child's group, then reaps it. When the
control socket ends (the dispatcher died or stopped it), the server kills the
groups of every child it still has, reaps them and exits; a child whose
server dies gets its parent-death signal (the runner's deadline).
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import signal
import socket
import sys
from typing import Final

__all__ = ["CONTROL_FD_OPTION", "REAP", "REAPED", "REQUEST", "serve"]

#: The runner's one option: ``--control-fd=N``.
CONTROL_FD_OPTION: Final = "--control-fd="
#: The request byte; the descriptors ride with it (``SCM_RIGHTS``).
REQUEST: Final = b"F"
#: On a status socket, after the status: reap the exited child; its answer.
REAP: Final = b"R"
REAPED: Final = b"r"
#: spec, status, stdin, stdout, stderr, broker.
_FDS_PER_CALL: Final = 6
_PR_SET_DUMPABLE: Final = 4


class _Call:
    """A forked child (in the child: what it must set up before the runner)."""

    def __init__(self, pid: int, status: socket.socket, fds: list[int]) -> None:
        self.pid = pid
        #: The server as the child must see it as its parent (set before the fork).
        self.server_pid = 0
        self.status = status
        self.fds = fds
        self.pidfd: int | None = None
        self.exited = False
        self.reaped = False


def _single_threaded() -> bool:
    try:
        return len(os.listdir("/proc/self/task")) == 1  # noqa: PTH208 - a count
    except OSError:
        return False


def _non_dumpable() -> None:
    from boring_dispatch.process import _reach

    if _reach.libc().prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError("cannot make the fork server non-dumpable")


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


def _receive(control: socket.socket) -> tuple[bytes, list[int]]:
    data, fds, _flags, _addr = socket.recv_fds(control, 16, _FDS_PER_CALL + 1)
    return data, list(fds)


class _Server:
    def __init__(self, control: socket.socket) -> None:
        self.control = control
        self.poller = select.poll()
        self.poller.register(control.fileno(), select.POLLIN)
        self.by_pidfd: dict[int, _Call] = {}
        self.by_status: dict[int, _Call] = {}

    def fork(self, fds: list[int]) -> _Call | None:
        """Fork one child; in the child, return its call; in the server, ``None``."""
        try:
            status = _stream_socket(fds[1])
        except OSError:  # malformed: refused; the dispatcher sees its spec socket end
            _close_all(fds)
            return None
        server_pid = os.getpid()
        try:
            pid = os.fork()
        except OSError:  # EAGAIN, ENOMEM: this call fails (its status ends), the server stays
            status.close()
            _close_all([fds[0], *fds[2:]])
            return None
        if pid == 0:
            child = _Call(0, status, fds)
            child.server_pid = server_pid
            return child
        # The server keeps only the status socket; every other descriptor is the child's.
        _close_all([fds[0], *fds[2:]])
        call = _Call(pid, status, [])
        try:
            call.pidfd = os.pidfd_open(pid)
            status.sendall(pid.to_bytes(4, "big"))
        except OSError:
            os.kill(pid, signal.SIGKILL)
        if call.pidfd is not None:
            self.by_pidfd[call.pidfd] = call
            self.poller.register(call.pidfd, select.POLLIN)
        self.by_status[status.fileno()] = call
        self.poller.register(status.fileno(), select.POLLIN)
        return None

    def child_exited(self, call: _Call) -> None:
        """Report the wait status; keep the zombie until the dispatcher releases it."""
        assert call.pidfd is not None  # noqa: S101 - registered only with a pidfd
        self.poller.unregister(call.pidfd)
        del self.by_pidfd[call.pidfd]
        os.close(call.pidfd)
        call.pidfd = None
        call.exited = True
        info = os.waitid(os.P_PID, call.pid, os.WEXITED | os.WNOWAIT)
        if info is None:
            code = -int(signal.SIGKILL)
        elif info.si_code == os.CLD_EXITED:
            code = info.si_status
        else:
            code = -info.si_status
        with contextlib.suppress(OSError):
            call.status.sendall(code.to_bytes(4, "big", signed=True))

    def reap(self, call: _Call) -> None:
        """The dispatcher read the status and asks for the reaping (``Popen.wait`` reaps)."""
        if call.exited and not call.reaped:
            os.waitpid(call.pid, 0)
            call.reaped = True
        with contextlib.suppress(OSError):
            call.status.sendall(REAPED)

    def released(self, call: _Call) -> None:
        """The dispatcher closed the status socket: reap (killing a child still running)."""
        self.poller.unregister(call.status.fileno())
        del self.by_status[call.status.fileno()]
        call.status.close()
        if call.reaped:
            return
        if not call.exited:
            _kill_group(call.pid)
            if call.pidfd is not None:
                self.poller.unregister(call.pidfd)
                del self.by_pidfd[call.pidfd]
                os.close(call.pidfd)
        os.waitpid(call.pid, 0)

    def shutdown(self) -> None:
        calls = [call for call in self.by_status.values() if not call.reaped]
        for call in calls:
            _kill_group(call.pid)
        for call in calls:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(call.pid, 0)

    def step(self) -> _Call | bool | None:
        """One round: ``False`` to stop, a call in a forked child, ``None`` otherwise."""
        for fd, _events in self.poller.poll():
            if fd == self.control.fileno():
                data, fds = _receive(self.control)
                if not data and not fds:
                    return False  # the dispatcher is gone
                if data != REQUEST or len(fds) != _FDS_PER_CALL or not _single_threaded():
                    _close_all(fds)  # malformed: refuse; the dispatcher sees its status EOF
                    continue
                forked = self.fork(fds)
                if forked is not None:
                    return forked
            elif fd in self.by_pidfd:
                self.child_exited(self.by_pidfd[fd])
            elif fd in self.by_status:
                call = self.by_status[fd]
                try:
                    word = call.status.recv(1)
                except OSError:  # ECONNRESET: closed with an answer of ours unread
                    word = b""
                if word == REAP:
                    self.reap(call)
                else:
                    self.released(call)
        return None


def _stream_socket(fd: int) -> socket.socket:
    """The status socket of a request: a unix stream socket, or ``OSError``."""
    sock = socket.socket(fileno=fd)
    if sock.family != socket.AF_UNIX or sock.type != socket.SOCK_STREAM:
        sock.detach()
        raise OSError(errno.EPROTOTYPE, "the status descriptor is not a unix stream socket")
    return sock


def _kill_group(pid: int) -> None:
    for kill in (os.killpg, os.kill):
        with contextlib.suppress(OSError):
            kill(pid, signal.SIGKILL)


def serve(control_fd: int) -> _Call | None:
    """Serve until the control socket ends; returns a call only in a forked child."""
    control = socket.socket(fileno=control_fd)
    server = _Server(control)
    while True:
        outcome = server.step()
        if outcome is False:
            server.shutdown()
            return None
        if isinstance(outcome, _Call):
            # The forked child leaves the server's state behind: its socket objects are
            # detached so that their collection never closes a descriptor number the
            # gateway reuses (the child closes every descriptor but its own anyway).
            control.detach()
            outcome.status.detach()
            for other in server.by_status.values():
                other.status.detach()
            return outcome


def main(argv: list[str]) -> int:
    """Start the server; in a forked child, run the call and return its exit status."""
    if len(argv) != 1 or not argv[0].startswith(CONTROL_FD_OPTION):
        print("error: expected --control-fd=N", file=sys.stderr)  # noqa: T201
        return 2
    if not sys.flags.isolated:
        print("error: the fork server must run isolated (python -I)", file=sys.stderr)  # noqa: T201
        return 2
    control_fd = int(argv[0][len(CONTROL_FD_OPTION) :])
    from boring_dispatch.process.child import _forked  # the runner and everything it needs

    _forked.preload()
    _non_dumpable()
    call = serve(control_fd)
    if call is None:
        return 0
    return _forked.run_call(call.fds, server_pid=call.server_pid)


if __name__ == "__main__":
    # The server and a forked child alike end through the interpreter's own exit, as a
    # spawned runner does: a gateway's buffers are flushed, its temporary files removed
    # and its finalizers run (``os._exit`` would skip all of that).
    raise SystemExit(main(sys.argv[1:]))
