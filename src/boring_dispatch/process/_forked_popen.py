"""A gateway forked by the fork server: ``Popen``'s interface over the server's status socket.

The server reports the leader's pid, later its wait status, and keeps the
exited leader unreaped until :meth:`Forked.release` (or the reaping asked for
once the status is read), so that its pid, the group id, is not reused while
the launcher may still signal the group. :class:`Forked` also watches the
leader through its own pidfd: once the leader has exited, a server that does
not report it within ``answer_s`` (stopped by a gateway, or stuck) makes the
call read as killed (never as a success) and is killed itself on release.
"""

from __future__ import annotations

import math
import os
import select
import signal
import socket
import subprocess
import threading
from collections.abc import Callable, Sequence
from contextlib import suppress
from typing import Final

__all__ = ["Forked", "recv_exact"]

_REAP: Final = b"R"
_REAPED: Final = b"r"


class Forked(subprocess.Popen[bytes]):
    """A gateway forked by the server: ``Popen``'s interface over the server's status socket."""

    def __init__(  # noqa: PLR0913 - the fields a launcher reads
        self,
        args: Sequence[str],
        pid: int,
        *,
        status: socket.socket,
        stdin: int | None,
        stdout: int,
        stderr: int,
        answer_s: float,
        distrust: Callable[[], None] | None = None,
    ) -> None:
        # Popen.__init__ is not called: nothing is spawned here.
        self.args = list(args)
        self.pid = pid
        self.returncode: int | None = None
        self._child_created = False  # Popen.__del__ must not try to reap a non-child
        self._sigint_wait_secs = 0.25
        self.text_mode = False
        self.universal_newlines = False
        self.encoding = None
        self.errors = None
        self.stdin = None if stdin is None else os.fdopen(stdin, "wb")
        self.stdout = os.fdopen(stdout, "rb")
        self.stderr = os.fdopen(stderr, "rb")
        self._status = status
        self._status_lock = threading.Lock()
        #: How long the server may take to report an exited leader, or to reap it.
        self._answer_s = answer_s
        #: Kills the server (it did not answer for this call) once the pid is no longer used.
        self._distrust = distrust
        #: The leader itself (opened while the server keeps it unreaped): its exit is
        #: seen here even when the server does not report it.
        self._pidfd = _pidfd(pid)
        #: The server did not report the exit of our leader in time: not trusted again.
        self._wedged = False

    def _read_status(self, timeout: float | None) -> int | None:
        with self._status_lock:
            if self.returncode is not None:
                return self.returncode
            if not _readable([self._status.fileno(), self._pidfd], timeout):
                return None
            # The server answered, or the leader has exited: the server answers at once
            # (bounded: a server that was stopped or is stuck must not hang the call).
            if not _readable([self._status.fileno()], self._answer_s):
                self._wedged = True
                self.returncode = -int(signal.SIGKILL)  # unknown: never read as a success
                return self.returncode
            try:
                data = recv_exact(self._status, 4)
            except OSError:
                data = b""
            if len(data) != 4:
                # No status: the server died (its children get their parent-death signal).
                self.returncode = -int(signal.SIGKILL)
                return self.returncode
            # Reaped, as Popen.wait reaps: the pid may be reused only from now on.
            self._status.settimeout(self._answer_s)
            try:
                self._status.sendall(_REAP)
                self._wedged = recv_exact(self._status, 1) != _REAPED
            except OSError:
                self._wedged = True
            self.returncode = int.from_bytes(data, "big", signed=True)
            return self.returncode

    def _internal_poll(self, *_args: object, **_kwargs: object) -> int | None:
        return self._read_status(0)

    def _wait(self, timeout: float | None) -> int:
        code = self._read_status(None if timeout is None else max(0.0, timeout))
        if code is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
        return code

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            with suppress(ProcessLookupError, PermissionError):
                if self._pidfd is not None:
                    signal.pidfd_send_signal(self._pidfd, sig)
                else:
                    os.kill(self.pid, sig)

    def _close(self) -> None:
        with suppress(OSError):
            self._status.close()
        pidfd, self._pidfd = self._pidfd, None
        if pidfd is not None:
            with suppress(OSError):
                os.close(pidfd)

    def release(self) -> None:
        """Let the server reap the leader (it kills the group first if it still runs).

        A server that did not answer for this call is killed now that the
        launcher is done with the leader's pid (the server kept it unreaped until
        then), and the next launch starts a new one.
        """
        self._close()
        distrust, self._distrust = self._distrust, None
        if self._wedged and distrust is not None:
            distrust()

    def discard(self) -> None:
        """Release the child (the server kills its group) and close our pipe ends."""
        self.release()
        for pipe in (self.stdin, self.stdout, self.stderr):
            if pipe is not None:
                with suppress(OSError):
                    pipe.close()

    def __del__(self) -> None:
        self._close()  # never the lock of the server state (a collection may run under it)


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):  # not Linux >= 5.3: the server's report alone
        return None


def _readable(fds: Sequence[int | None], timeout: float | None) -> bool:
    """Whether one of ``fds`` is readable within ``timeout`` (``None``: no bound)."""
    poller = select.poll()
    for fd in fds:
        if fd is not None:
            poller.register(fd, select.POLLIN)
    wait_ms = None if timeout is None else max(0, math.ceil(timeout * 1000))
    return bool(poller.poll(wait_ms))


def recv_exact(sock: socket.socket, size: int) -> bytes:
    """Up to ``size`` bytes: fewer only at the end of the stream."""
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            break
        data += chunk
    return data
