"""The MCP server's stdin, read one bounded line at a time (no SDK import).

The SDK's stdio transport reads whole lines, however long. This reader keeps
at most :data:`MAX_LINE_BYTES` of one message: a longer line is read to its
end and discarded, and in its place the transport gets an :class:`Oversized`
record of its first and last bytes (where a JSON-RPC id may be found), so the
client receives an error response instead of waiting forever. Projections far
below this cap but above the dispatcher's own caps are refused with a
structured result instead.

At end of input the reader runs its ``on_eof`` callback once (the server ends
the gateways still running for a client that has gone).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO, Final

__all__ = ["EDGE_BYTES", "MAX_LINE_BYTES", "BoundedLineReader", "Oversized"]

#: One JSON-RPC message: 4 MiB of stdin can take six times that once JSON-escaped.
MAX_LINE_BYTES: Final = 32 * 1024 * 1024
#: How many first and last bytes of an oversized line are kept.
EDGE_BYTES: Final = 512


@dataclass(frozen=True, slots=True)
class Oversized:
    """A line longer than the cap, already skipped: only its edges are left."""

    head: bytes
    tail: bytes


class BoundedLineReader:
    """A line source over a binary stream whose ``readline`` never holds more than one cap."""

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
        return Oversized(data[:EDGE_BYTES], self._skip_rest(data[-EDGE_BYTES:]))

    def _skip_rest(self, tail: bytes) -> bytes:
        """Read and drop the rest of the line; return its last bytes."""
        while True:
            chunk = self._source.readline(self._cap)
            if not chunk:
                return tail
            tail = (tail + chunk)[-EDGE_BYTES:]
            if chunk.endswith(b"\n"):
                return tail

    def _eof(self) -> None:
        callback, self._on_eof = self._on_eof, None
        if callback is not None:
            callback()
