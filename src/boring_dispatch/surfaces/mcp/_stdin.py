"""The MCP server's stdin, read one bounded line at a time (no SDK import).

The SDK's stdio transport reads whole lines, however long. This reader keeps
at most :data:`MAX_LINE_BYTES` of one message: a longer line is read to its
end and discarded, and in its place the transport gets a tiny request with
the same JSON-RPC id (when the id can be read from the line's first or last
bytes) and a method no server has, so the client receives an error response
for that id instead of waiting forever. Projections far below this cap but
above the dispatcher's own caps are refused with a structured result instead.

At end of input the reader runs its ``on_eof`` callback once (the server ends
the gateways still running for a client that has gone).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import BinaryIO, Final

__all__ = ["MAX_LINE_BYTES", "OVERSIZED_METHOD", "BoundedLineReader"]

#: One JSON-RPC message: 4 MiB of stdin can take six times that once JSON-escaped.
MAX_LINE_BYTES: Final = 32 * 1024 * 1024
#: The method of the stand-in request that replaces an oversized message.
OVERSIZED_METHOD: Final = "boring-dispatch/message-too-large"
_EDGE: Final = 512
_ID: Final = rb'(-?\d{1,18}|"(?:[^"\\]|\\.){0,128}")'
_HEAD_ID: Final = re.compile(rb'\A\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*' + _ID)
_TAIL_ID: Final = re.compile(rb'"id"\s*:\s*' + _ID + rb"\s*\}\s*\Z")


class BoundedLineReader:
    """A line source over a binary stream whose ``readline`` never holds more than one cap.

    It offers just what ``anyio.wrap_file`` and the SDK transport use: ``readline``
    and ``close`` (which leaves the binary stream open: it is not ours).
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

    def close(self) -> None:
        """Nothing to release."""

    def readline(self) -> str:
        """One line, a stand-in for an oversized one, or ``""`` at end of input."""
        data = self._source.readline(self._cap + 1)
        if not data:
            self._eof()
            return ""
        if len(data) <= self._cap or data.endswith(b"\n"):
            return data.decode("utf-8", "replace")
        head = data[:_EDGE]
        tail = self._skip_rest(data[-_EDGE:])
        return _stand_in(head, tail)

    def _skip_rest(self, tail: bytes) -> bytes:
        """Read and drop the rest of the line; return its last bytes."""
        while True:
            chunk = self._source.readline(self._cap)
            if not chunk:
                return tail
            tail = (tail + chunk)[-_EDGE:]
            if chunk.endswith(b"\n"):
                return tail

    def _eof(self) -> None:
        callback, self._on_eof = self._on_eof, None
        if callback is not None:
            callback()


def _stand_in(head: bytes, tail: bytes) -> str:
    """A request carrying the oversized message's id, or an unparsable line without one."""
    match = _HEAD_ID.match(head) or _TAIL_ID.search(tail.rstrip(b"\r\n"))
    if match is None:
        return "{}\n"  # the transport reports it as a parse error and carries on
    try:
        request_id = json.loads(match.group(1))
    except ValueError:
        return "{}\n"
    stand_in = {"jsonrpc": "2.0", "id": request_id, "method": OVERSIZED_METHOD}
    return json.dumps(stand_in) + "\n"
