"""The dispatcher's side of the clean fork server (a long-lived process: ``dispatcher mcp``).

A live call that spawns its gateway pays a fresh interpreter and the runner's
imports. With the fork server enabled (:func:`enable`), a captured launch
asks :mod:`boring_dispatch.process.child.forkserver` to fork a child that has
the runner imported already. The server is started as a gateway child is:
``-I -B -X utf8``, the allowlisted environment without a trace id, cwd ``/``,
only its control socket open, its own session; it never loads repository
code and never sees a call's data (the forked child reads its own spec).

:func:`start` hands over the call's descriptors (spec and status sockets,
stdin, stdout, stderr, broker), writes the spec (the runner command, the
environment, the cwd) and waits, bounded, for the pid (status socket) and
the child's set-up status (spec socket). It returns a :class:`Forked`, a
``Popen`` whose wait and poll read the exit status the server reports; the
server keeps the exited leader unreaped until :meth:`Forked.release`, so the
pid (the group id) is not reused while the launcher may still signal the group.

Failures are closed: a server that is gone is started again once; a server
that does not answer within :data:`START_TIMEOUT_S` is killed and the launch
fails (``OSError``, turned into ``dispatcher.launch_failed``); a status socket
that ends without a status (the server died) reads as ``SIGKILL``.

Never used for ``--run-as`` (the switch of user needs the spawn: a fork server
would have to run as root), nor for a launch made from inside a gateway, nor
for the CLI (one call per process: nothing to amortise).
"""

from __future__ import annotations

import errno
import math
import os
import select
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from contextlib import suppress
from typing import Final

from boring_dispatch.process._command import RUNNER_MODULE
from boring_dispatch.process.env import child_environment
from boring_dispatch.process.wire import write_message

__all__ = [
    "FORKSERVER_MODULE",
    "START_TIMEOUT_S",
    "Forked",
    "disable",
    "enable",
    "enabled",
    "server_pid",
    "start",
    "stop",
]

FORKSERVER_MODULE: Final = "boring_dispatch.process.child.forkserver"
#: How long the server and the forked child may take to start a call.
START_TIMEOUT_S: Final = 10.0
_REQUEST: Final = b"F"
_REAP: Final = b"R"
_REAPED: Final = b"r"
_STOP_WAIT_S: Final = 5.0

_LOCK: Final = threading.Lock()
_STATE: dict[str, object] = {"enabled": False}


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
        server: subprocess.Popen[bytes] | None = None,
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
        self._server = server
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
            if not _readable([self._status.fileno()], START_TIMEOUT_S):
                self._wedged = True
                self.returncode = -int(signal.SIGKILL)  # unknown: never read as a success
                return self.returncode
            try:
                data = _recv_exact(self._status, 4)
            except OSError:
                data = b""
            if len(data) != 4:
                # No status: the server died (its children get their parent-death signal).
                self.returncode = -int(signal.SIGKILL)
                return self.returncode
            # Reaped, as Popen.wait reaps: the pid may be reused only from now on.
            self._status.settimeout(START_TIMEOUT_S)
            try:
                self._status.sendall(_REAP)
                self._wedged = _recv_exact(self._status, 1) != _REAPED
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
        if self._wedged and self._server is not None:
            _distrust(self._server)
            self._server = None

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


def _distrust(proc: subprocess.Popen[bytes]) -> None:
    """Kill a server that did not answer; forget it if it is still the current one."""
    with suppress(OSError):
        proc.kill()
    with _LOCK:
        if _STATE.get("proc") is proc:
            _stop_locked()
        else:
            with suppress(subprocess.TimeoutExpired):
                proc.wait(_STOP_WAIT_S)


def _recv_exact(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            break
        data += chunk
    return data


def enable() -> None:
    """Use the fork server for captured launches of this process (Linux only)."""
    _STATE["enabled"] = sys.platform.startswith("linux")


def disable() -> None:
    """Spawn every gateway again (a running server stays until :func:`stop`)."""
    _STATE["enabled"] = False


def enabled() -> bool:
    """Whether captured launches go through the fork server."""
    return _STATE["enabled"] is True


def _server() -> tuple[subprocess.Popen[bytes], socket.socket]:
    """The running server, started when there is none (called under the lock)."""
    proc = _STATE.get("proc")
    control = _STATE.get("control")
    if isinstance(proc, subprocess.Popen) and isinstance(control, socket.socket):
        if proc.poll() is None:
            return proc, control
        _stop_locked()
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-I",
                "-B",
                "-X",
                "utf8",
                "-m",
                FORKSERVER_MODULE,
                f"--control-fd={theirs.fileno()}",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",
            env=child_environment(),
            close_fds=True,
            pass_fds=(theirs.fileno(),),
            start_new_session=True,
            shell=False,
        )
    finally:
        theirs.close()
    _STATE["proc"], _STATE["control"] = proc, ours
    if "atexit" not in _STATE:
        import atexit

        atexit.register(stop)  # the server ends with this process
        _STATE["atexit"] = True
    return proc, ours


def _stop_locked() -> None:
    control = _STATE.pop("control", None)
    proc = _STATE.pop("proc", None)
    if isinstance(control, socket.socket):
        control.close()  # the server kills and reaps its children, then exits
    if isinstance(proc, subprocess.Popen):
        try:
            proc.wait(_STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(_STOP_WAIT_S)


def stop() -> None:
    """Stop the server (started again by the next launch)."""
    with _LOCK:
        _stop_locked()


def server_pid() -> int | None:
    """The running server's pid (tests), ``None`` when none runs."""
    with _LOCK:
        proc = _STATE.get("proc")
        return proc.pid if isinstance(proc, subprocess.Popen) and proc.poll() is None else None


def _request(fds: Sequence[int]) -> subprocess.Popen[bytes]:
    """Send one fork request; a server that is gone is started again once; returns it."""
    with _LOCK:
        proc, control = _server()
        try:
            socket.send_fds(control, [_REQUEST], list(fds))
        except OSError:
            _stop_locked()
            proc, control = _server()
            try:
                socket.send_fds(control, [_REQUEST], list(fds))
            except OSError:
                _stop_locked()
                raise
        return proc


def _started(pid_bytes: bytes) -> int:
    """The pid the server reports.

    Raises:
        OSError: the server closed the status socket instead (it refused or died).
    """
    if len(pid_bytes) != 4:
        raise OSError(errno.ECHILD, "the fork server did not start the call")
    return int.from_bytes(pid_bytes, "big")


def _set_up(word: bytes) -> None:
    """The forked child's set-up status, as ``Popen`` reports a failed ``exec``.

    Raises:
        OSError: the child could not set itself up (its errno), or did not say.
    """
    code = int.from_bytes(word, "big") if len(word) == 4 else errno.EPROTO
    if code:
        raise OSError(code, os.strerror(code))


def start(
    command: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: str | os.PathLike[str],
    broker_fd: int,
    stdin: bool,
) -> Forked:
    """Fork one gateway child for the runner ``command`` :func:`child_argv` built.

    The forked child gets what follows the runner module in it (the runner
    options, ``--``, the gateway's argv); the interpreter and its flags are the server's.

    Raises:
        OSError: the server or the child could not start the call (``strerror`` says why).
    """
    argv = list(command[list(command).index(RUNNER_MODULE) + 1 :])
    spec_ours, spec_theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    status_ours, status_theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    in_r, in_w = os.pipe() if stdin else (os.open(os.devnull, os.O_RDONLY), -1)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    theirs = [spec_theirs.fileno(), status_theirs.fileno(), in_r, out_w, err_w, broker_fd]
    forked: Forked | None = None
    try:
        try:
            server = _request(theirs)
        finally:
            spec_theirs.close()
            status_theirs.close()
            for fd in (in_r, out_w, err_w):
                os.close(fd)
        spec_ours.settimeout(START_TIMEOUT_S)
        status_ours.settimeout(START_TIMEOUT_S)
        write_message(spec_ours, {"argv": argv, "env": dict(env), "cwd": os.fspath(cwd)})
        pid_bytes = _recv_exact(status_ours, 4)
        status_ours.settimeout(None)
        forked = Forked(
            argv,
            _started(pid_bytes),
            status=status_ours,
            stdin=None,
            stdout=out_r,
            stderr=err_r,
            server=server,
        )
        _set_up(_recv_exact(spec_ours, 4))
    except BaseException as error:
        if forked is None:
            status_ours.close()
            os.close(out_r)
            os.close(err_r)
        else:
            forked.discard()
        if stdin:
            os.close(in_w)
        if isinstance(error, TimeoutError):
            with _LOCK:
                _stop_locked()  # a server that does not answer is not trusted again
        raise
    finally:
        spec_ours.close()
    if stdin:
        forked.stdin = os.fdopen(in_w, "wb")
    return forked
