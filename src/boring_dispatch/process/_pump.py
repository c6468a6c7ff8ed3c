"""Draining a child's stdout and stderr concurrently, with a cap per stream, while feeding stdin."""

from __future__ import annotations

import os
import selectors
import subprocess
import time
from contextlib import suppress
from typing import IO, Final

__all__ = ["Pump", "drain", "pump"]

_CHUNK: Final = 65536


class Pump:
    """Bytes read so far, and why reading stopped.

    A plain slotted class, not a dataclass: ``dataclasses`` would load ``inspect``
    into every gateway process that makes a nested call.
    """

    __slots__ = (
        "leader_exited",
        "stderr",
        "stderr_truncated",
        "stdout",
        "stdout_truncated",
        "timed_out",
    )

    def __init__(self) -> None:
        self.stdout = bytearray()
        self.stderr = bytearray()
        self.stdout_truncated = False
        self.stderr_truncated = False
        self.timed_out = False
        #: The child exited while a pipe was still open (something it left holds it).
        self.leader_exited = False


def pump(
    proc: subprocess.Popen[bytes],
    data: bytes | None,
    cap: int,
    deadline: float,
    *,
    exit_fd: int | None = None,
) -> Pump:
    """Read both pipes (and write stdin) until EOF on both, a cap, or the deadline.

    With ``exit_fd`` (a pidfd of the child), reading also stops when the child
    exits while a pipe is still open (still open once what is ready was read:
    the exit and the EOF often arrive together): ``leader_exited`` is set, and the caller
    ends what holds the pipe and calls :func:`drain` with a short deadline.
    """
    result = Pump()
    _loop(result, proc, data, (cap, deadline), exit_fd)
    return result


def drain(proc: subprocess.Popen[bytes], result: Pump, cap: int, deadline: float) -> None:
    """Read what is left in the open pipes into ``result`` until EOF, a cap, or ``deadline``.

    Reaching the deadline here is not a timeout of the call: ``timed_out`` is left alone.
    """
    timed_out = result.timed_out
    _loop(result, proc, None, (cap, deadline), None)
    result.timed_out = timed_out


def _loop(
    result: Pump,
    proc: subprocess.Popen[bytes],
    data: bytes | None,
    bounds: tuple[int, float],
    exit_fd: int | None,
) -> None:
    cap, deadline = bounds
    names = {
        pipe.fileno(): name
        for name, pipe in (("stdout", proc.stdout), ("stderr", proc.stderr))
        if pipe is not None and not pipe.closed
    }
    pending = memoryview(data or b"")
    with selectors.DefaultSelector() as selector:
        _register(selector, proc, names, pending, exit_fd)
        while _reading(selector, names) and not _truncated(result):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                result.timed_out = True
                return
            for key, _ in selector.select(remaining):
                if key.fd == exit_fd:
                    selector.unregister(key.fd)
                    result.leader_exited = True
                elif key.fd in names:
                    _read_event(result, proc, selector, (key.fd, names[key.fd]), cap)
                else:
                    pending = _write_some(proc.stdin, pending)
                    if not pending:
                        selector.unregister(key.fd)
            if result.leader_exited:
                _drain_ready(result, proc, selector, names, cap)
                # Both pipes at EOF: nothing the child left holds them (the usual exit).
                result.leader_exited = _reading(selector, names)
                return


def _register(
    selector: selectors.BaseSelector,
    proc: subprocess.Popen[bytes],
    names: dict[int, str],
    pending: memoryview,
    exit_fd: int | None,
) -> None:
    for fd in names:
        selector.register(fd, selectors.EVENT_READ)
    if proc.stdin is not None and not proc.stdin.closed and pending:
        os.set_blocking(proc.stdin.fileno(), False)
        selector.register(proc.stdin.fileno(), selectors.EVENT_WRITE)
    elif proc.stdin is not None:
        proc.stdin.close()
    if exit_fd is not None:
        selector.register(exit_fd, selectors.EVENT_READ)


def _truncated(result: Pump) -> bool:
    return result.stdout_truncated or result.stderr_truncated


def _read_event(
    result: Pump,
    proc: subprocess.Popen[bytes],
    selector: selectors.BaseSelector,
    pipe: tuple[int, str],
    cap: int,
) -> None:
    fd, name = pipe
    try:
        at_eof = _read_into(result, name, fd, cap)
    except BlockingIOError:  # a spurious wake-up
        return
    if at_eof:
        selector.unregister(fd)
        _close(proc, name)


def _drain_ready(
    result: Pump,
    proc: subprocess.Popen[bytes],
    selector: selectors.BaseSelector,
    names: dict[int, str],
    cap: int,
) -> None:
    """Read what the exited child left in the pipes, without waiting for more.

    A pipe whose only writer was the child reaches EOF here; a pipe that stays
    open and empty is held by something the child left running.
    """
    for fd, name in names.items():
        if fd not in selector.get_map():
            continue
        os.set_blocking(fd, False)
        while not _truncated(result):
            try:
                at_eof = _read_into(result, name, fd, cap)
            except BlockingIOError:
                break
            if at_eof:
                selector.unregister(fd)
                _close(proc, name)
                break


def _reading(selector: selectors.BaseSelector, names: dict[int, str]) -> bool:
    """Whether a pipe is still open for reading."""
    return any(fd in names for fd in selector.get_map())


def _close(proc: subprocess.Popen[bytes], name: str) -> None:
    """Close a pipe that reached EOF, so a later drain does not read it again."""
    pipe = proc.stdout if name == "stdout" else proc.stderr
    if pipe is not None:
        with suppress(OSError):
            pipe.close()


def _read_into(result: Pump, name: str, fd: int, cap: int) -> bool:
    """Append one chunk to the named buffer; True at EOF. Sets the truncation flag on overflow."""
    chunk = os.read(fd, _CHUNK)
    if not chunk:
        return True
    buffer = result.stdout if name == "stdout" else result.stderr
    room = cap - len(buffer)
    buffer += chunk[:room]
    if len(chunk) > room:
        if name == "stdout":
            result.stdout_truncated = True
        else:
            result.stderr_truncated = True
    return False


def _write_some(pipe: IO[bytes] | None, pending: memoryview) -> memoryview:
    """Write what the pipe takes now; closes it and returns an empty view when done."""
    if pipe is None:
        return memoryview(b"")
    try:
        written = os.write(pipe.fileno(), pending[:_CHUNK])
    except BlockingIOError:
        return pending
    except OSError:  # BrokenPipeError: the child does not read stdin
        written = len(pending)
    rest = pending[written:]
    if not rest:
        with suppress(OSError):
            pipe.close()
    return rest
