"""Draining a child's stdout and stderr concurrently, with a cap per stream, while feeding stdin."""

from __future__ import annotations

import os
import selectors
import subprocess
import time
from contextlib import suppress
from typing import IO, Final

__all__ = ["Pump", "pump"]

_CHUNK: Final = 65536


class Pump:
    """Bytes read so far, and why reading stopped.

    A plain slotted class, not a dataclass: ``dataclasses`` would load ``inspect``
    into every gateway process that makes a nested call.
    """

    __slots__ = ("stderr", "stderr_truncated", "stdout", "stdout_truncated", "timed_out")

    def __init__(self) -> None:
        self.stdout = bytearray()
        self.stderr = bytearray()
        self.stdout_truncated = False
        self.stderr_truncated = False
        self.timed_out = False


def pump(proc: subprocess.Popen[bytes], data: bytes | None, cap: int, deadline: float) -> Pump:
    """Read both pipes (and write stdin) until EOF on both, a cap, or the deadline."""
    result = Pump()
    names = {
        pipe.fileno(): name
        for name, pipe in (("stdout", proc.stdout), ("stderr", proc.stderr))
        if pipe is not None
    }
    pending = memoryview(data or b"")
    with selectors.DefaultSelector() as selector:
        for fd in names:
            selector.register(fd, selectors.EVENT_READ)
        if proc.stdin is not None and pending:
            os.set_blocking(proc.stdin.fileno(), False)
            selector.register(proc.stdin.fileno(), selectors.EVENT_WRITE)
        elif proc.stdin is not None:
            proc.stdin.close()
        while selector.get_map() and not (result.stdout_truncated or result.stderr_truncated):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                result.timed_out = True
                break
            for key, _ in selector.select(remaining):
                if key.fd in names:
                    if _read_into(result, names[key.fd], key.fd, cap):
                        selector.unregister(key.fd)
                else:
                    pending = _write_some(proc.stdin, pending)
                    if not pending:
                        selector.unregister(key.fd)
    return result


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
