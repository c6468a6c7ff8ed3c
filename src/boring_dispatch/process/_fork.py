"""The dispatcher's side of the clean fork server (a long-lived process: ``dispatcher mcp``).

A live call that spawns its gateway pays a fresh interpreter and the runner's
imports. A captured launch whose limits ask for it
(:attr:`~boring_dispatch.records.ExecLimits.fork_server`, set by
``dispatcher mcp`` unless ``--spawn-gateways``) asks
:mod:`boring_dispatch.process.child.forkserver` to fork a child that has
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
import functools
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from contextlib import suppress
from typing import Final

from boring_dispatch.process._command import CHILD_FLAGS, RUNNER_MODULE
from boring_dispatch.process._forked_popen import Forked, recv_exact
from boring_dispatch.process.env import child_environment
from boring_dispatch.process.wire import write_message

__all__ = [
    "AVAILABLE",
    "FORKSERVER_MODULE",
    "START_TIMEOUT_S",
    "Forked",
    "server_pid",
    "start",
    "stop",
]

FORKSERVER_MODULE: Final = "boring_dispatch.process.child.forkserver"
#: How long the server and the forked child may take to start a call.
START_TIMEOUT_S: Final = 10.0
_REQUEST: Final = b"F"
_STOP_WAIT_S: Final = 5.0

#: Whether this platform has the fork server (Linux: pidfds, ``SCM_RIGHTS``, ``/proc``).
AVAILABLE: Final = sys.platform.startswith("linux")
_LOCK: Final = threading.Lock()
_STATE: dict[str, object] = {}


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
                *CHILD_FLAGS,
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
        pid_bytes = recv_exact(status_ours, 4)
        status_ours.settimeout(None)
        forked = Forked(
            argv,
            _started(pid_bytes),
            status=status_ours,
            stdin=None,
            stdout=out_r,
            stderr=err_r,
            answer_s=START_TIMEOUT_S,
            distrust=functools.partial(_distrust, server),
        )
        _set_up(recv_exact(spec_ours, 4))
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
