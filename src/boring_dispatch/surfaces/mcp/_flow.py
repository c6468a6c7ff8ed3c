"""Back-pressure for the MCP stdio session: what it holds for the client, and the waits.

A :class:`Flow` counts the requests read and not yet answered (a request is
pending until its response is written, or until the SDK says none will be),
the bytes of their lines, and the encoded bytes that wait for the client to
read them. The next line is read only while fewer than
:data:`MAX_PENDING_REQUESTS` requests are pending, their lines total less
than :data:`MAX_PENDING_BYTES` and less than :data:`MAX_UNSENT_BYTES` wait
unread (:meth:`Flow.room_to_read`); a tool call starts only under the last
bound (:meth:`Flow.room_to_answer`). The streams that report to it are in
:mod:`._transport`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Final

import anyio

if TYPE_CHECKING:
    from mcp_types import RequestId

__all__ = ["MAX_PENDING_BYTES", "MAX_PENDING_REQUESTS", "MAX_UNSENT_BYTES", "Flow"]

#: Requests read and not yet answered: waiting for a worker, running, or being written.
MAX_PENDING_REQUESTS: Final = 64
#: The lines of those requests, together (one line over it is still read, alone).
MAX_PENDING_BYTES: Final = 8 << 20
#: Encoded messages the client has not read yet (one result over it is still sent).
MAX_UNSENT_BYTES: Final = 4 << 20


class Flow:
    """What the session holds for the client, and the waits that keep it bounded."""

    def __init__(
        self,
        *,
        max_pending: int = MAX_PENDING_REQUESTS,
        max_pending_bytes: int = MAX_PENDING_BYTES,
        max_unsent_bytes: int = MAX_UNSENT_BYTES,
    ) -> None:
        self._max_pending = max_pending
        self._max_pending_bytes = max_pending_bytes
        self._max_unsent_bytes = max_unsent_bytes
        self._pending: dict[RequestId, int] = {}
        self._pending_bytes = 0
        self._unsent_bytes = 0
        self._changed = anyio.Event()

    def admit(self, key: RequestId, size: int) -> bool:
        """Count a request as pending; ``False`` when its id is already pending."""
        if key in self._pending:
            return False
        self._pending[key] = size
        self._pending_bytes += size
        return True

    def settle(self, key: RequestId) -> None:
        """The request's response is written, or there will be none (it was cancelled)."""
        size = self._pending.pop(key, None)
        if size is not None:
            self._pending_bytes -= size
            self._wake()

    def settler(self, key: RequestId) -> Callable[[], Awaitable[None]]:
        """The SDK's ``on_request_unanswered`` hook for one request."""

        async def settle() -> None:
            self.settle(key)

        return settle

    def queued(self, size: int) -> None:
        """``size`` encoded bytes wait to be written."""
        self._unsent_bytes += size

    def sent(self, size: int) -> None:
        """``size`` bytes were written (or will never be)."""
        self._unsent_bytes -= size
        self._wake()

    async def room_to_read(self) -> None:
        """Wait until another line may be read."""
        while (
            len(self._pending) >= self._max_pending
            or self._pending_bytes >= self._max_pending_bytes
            or self._unsent_bytes >= self._max_unsent_bytes
        ):
            await self._changed.wait()

    async def room_to_answer(self) -> None:
        """Wait until the client has read enough for one more call to start."""
        while self._unsent_bytes >= self._max_unsent_bytes:
            await self._changed.wait()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()
