"""The MCP server's stdin, read one bounded line at a time (no SDK import).

The SDK's stdio transport reads whole lines, however long. This reader keeps
at most :data:`MAX_LINE_BYTES` of one message: a longer line is read to its
end and discarded, and in its place the transport gets an :class:`Oversized`
record of its first and last bytes (where a JSON-RPC id may be found), so the
client receives an error response instead of waiting forever. Projections far
below this cap but above the dispatcher's own caps are refused with a
structured result instead.

:class:`LineReader` is read from the event loop: on a pipe or a socket (what
an MCP client gives its server, :func:`pollable`) it waits until the
descriptor is readable and then reads what is there, so a request reaches the
loop without a thread hop. It holds at most one cap of a line, plus one read's
worth of what follows it. A terminal is read the same way. On anything else
(a file, ``/dev/null``) the server reads with :class:`BoundedLineReader` in a
worker thread.

At end of input either reader runs its ``on_eof`` callback once (the server
ends the gateways still running for a client that has gone).
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import BinaryIO, Final

__all__ = [
    "EDGE_BYTES",
    "MAX_LINE_BYTES",
    "READ_BYTES",
    "BoundedLineReader",
    "LineReader",
    "Oversized",
    "pollable",
]

#: One JSON-RPC message: 4 MiB of stdin can take six times that once JSON-escaped.
MAX_LINE_BYTES: Final = 32 * 1024 * 1024
#: How many first and last bytes of an oversized line are kept.
EDGE_BYTES: Final = 512
#: The most one read asks for.
READ_BYTES: Final = 1 << 16
_LINUX: Final = sys.platform.startswith("linux")


@dataclass(frozen=True, slots=True)
class Oversized:
    """A line longer than the cap, already skipped: only its edges are left."""

    head: bytes
    tail: bytes


class BoundedLineReader:
    """A line source over a binary stream whose ``readline`` never holds more than one cap.

    Blocking: the server reads with it in a worker thread when stdin is not
    a pipe or a socket (see :class:`LineReader`).
    """

    def __init__(
        self,
        source: BinaryIO,
        *,
        on_eof: Callable[[], object],
        max_line_bytes: int = MAX_LINE_BYTES,
    ) -> None:
        self._source = source
        self._on_eof: Callable[[], object] | None = on_eof
        self._cap = max_line_bytes

    def readline(self) -> bytes | Oversized:
        """One line (with its newline, if any), an oversized one's edges, or ``b""`` at the end."""
        data = self._source.readline(self._cap + 1)
        if not data:
            self._eof()
            return b""
        if len(data) <= self._cap or data.endswith(b"\n"):
            return data
        head, tail = data[:EDGE_BYTES], data[-EDGE_BYTES:]
        del data  # the cap read is dropped now, not held while the rest is skipped
        return Oversized(head, self._skip_rest(tail))

    def _skip_rest(self, tail: bytes) -> bytes:
        """Read and drop the rest of the line, one read at a time; return its last bytes."""
        while True:
            chunk = self._source.readline(min(self._cap, READ_BYTES))
            if not chunk:
                return tail
            tail = (tail + chunk)[-EDGE_BYTES:]
            if chunk.endswith(b"\n"):
                return tail

    def _eof(self) -> None:
        callback, self._on_eof = self._on_eof, None
        if callback is not None:
            callback()


class LineReader:
    """The lines :class:`BoundedLineReader` gives, read from the event loop (a pipe or a socket).

    It waits until the descriptor is readable, then reads what is there
    (at most :data:`READ_BYTES`). ``on_eof`` runs once, in a worker thread,
    at the end. ``fill`` replaces the read (tests): an awaitable read of at
    most :data:`READ_BYTES`, ``b""`` at the end.
    """

    def __init__(
        self,
        fd: int,
        *,
        on_eof: Callable[[], object],
        max_line_bytes: int = MAX_LINE_BYTES,
        fill: Callable[[], Awaitable[bytes]] | None = None,
    ) -> None:
        self._fd = fd
        self._on_eof: Callable[[], object] | None = on_eof
        self._cap = max_line_bytes
        self._buffer = bytearray()
        self._scanned = 0  # the buffer holds no newline before this offset
        self._ended = False
        self._fill = fill or self._when_ready

    async def readline(self) -> bytes | Oversized:
        """One line (with its newline, if any), an oversized one's edges, or ``b""`` at the end."""
        data = await self._take(self._cap + 1)
        if not data:
            await self._eof()
            return b""
        if len(data) <= self._cap or data.endswith(b"\n"):
            return data
        head, tail = data[:EDGE_BYTES], data[-EDGE_BYTES:]
        del data  # the cap read is dropped now, not held while the rest is skipped
        while True:  # read and drop the rest of the line, one read at a time, keeping its end
            chunk = await self._take(min(self._cap, READ_BYTES))
            if not chunk:
                return Oversized(head, tail)
            tail = (tail + chunk)[-EDGE_BYTES:]
            if chunk.endswith(b"\n"):
                return Oversized(head, tail)

    async def _take(self, limit: int) -> bytes:
        """At most ``limit`` bytes, through the first newline; ``b""`` only at the end."""
        while True:
            end = self._line_end(limit)
            if end is not None:
                break
            if self._ended:
                end = len(self._buffer)
                break
            chunk = await self._fill()
            if chunk:
                self._buffer += chunk
            else:
                self._ended = True
        # One copy of the line; the rest (at most one read) moves to a fresh buffer, so
        # the line's old buffer is freed now, not kept while the line is checked.
        with memoryview(self._buffer) as view:
            taken = bytes(view[:end])
            self._buffer = bytearray(view[end:])
        self._scanned = 0
        return taken

    def _line_end(self, limit: int) -> int | None:
        index = self._buffer.find(b"\n", self._scanned, limit)
        if index >= 0:
            return index + 1
        if len(self._buffer) >= limit:
            return limit
        self._scanned = len(self._buffer)
        return None

    async def _when_ready(self) -> bytes:
        import anyio

        while True:
            await anyio.wait_readable(self._fd)
            try:
                return os.read(self._fd, READ_BYTES)  # readable: returns what is there at once
            except BlockingIOError:  # a stdin left non-blocking, and nothing there after all
                continue

    async def _eof(self) -> None:
        import anyio
        import anyio.to_thread

        callback, self._on_eof = self._on_eof, None
        if callback is not None:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(callback)


def pollable(fd: int) -> bool:
    """A pipe, a socket or a terminal on Linux: the event loop can wait for it to be readable.

    A terminal is read from the loop too: one left non-blocking (the flag is
    shared with the shell) would make the threaded reader's buffered
    ``readline`` see "nothing yet" as the end of input.
    """
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return _LINUX and (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd))
