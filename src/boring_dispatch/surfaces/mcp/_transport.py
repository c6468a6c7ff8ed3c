"""The MCP server's stdio transport: the read and write streams ``Server.run`` is given.

The SDK's ``stdio_server`` reads lines of any size with lenient JSON rules,
drops what it cannot parse (its client then waits forever), keeps reading
while its output is blocked, and ends the session when a message cannot be
encoded. ``Server.run`` takes any pair of streams, so this module supplies its
own (the SDK still does all JSON-RPC and MCP work):

- Reading: one bounded line at a time (:mod:`._stdin`, from the event loop
  when stdin is a pipe), strict JSON (:mod:`._wire`), then the SDK's JSON-RPC
  message model, on the loop for a line of at most :data:`INLINE_CHECK_BYTES`
  and in a worker thread for a longer one. A message that
  is refused is answered at once with a JSON-RPC error (-32700 or -32600, with
  its id when one can be recovered, else ``null``); a malformed *response* is
  dropped, since a response is never answered. A request whose id is still in
  progress is refused too.
- Back-pressure, not buffering: the next line is read only while the
  session's :class:`~._flow.Flow` has room (few enough requests unanswered,
  their lines small enough, and little enough output unread by the client),
  and every written message is reported to it.
- Writing: every message is encoded here, once. One that cannot be encoded
  becomes an internal-error response for its id instead of ending the session.
  It is written from the event loop while the stdout pipe has room, and what
  does not fit by a worker thread (:class:`_ReadyPipe`).
- While serving, fd 0 reads ``/dev/null`` and fd 1 writes to stderr, so a
  handler's stray ``input()`` or ``print()`` never touches the wire; the wire
  uses private duplicates of both.
"""

from __future__ import annotations

import fcntl
import functools
import logging
import os
import select
import stat
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Self

import anyio
import anyio.to_thread
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp_types import (
    INTERNAL_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from boring_dispatch.surfaces.mcp._flow import Flow
from boring_dispatch.surfaces.mcp._stdin import (
    MAX_LINE_BYTES,
    BoundedLineReader,
    LineReader,
    Oversized,
    pollable,
)
from boring_dispatch.surfaces.mcp._wire import INVALID_REQUEST, Message, Refusal, read_message

if TYPE_CHECKING:
    from types import TracebackType

    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

__all__ = ["stdio_streams"]

_LOG: Final = logging.getLogger("boring_dispatch")
#: Where ``poll`` on a pipe means room for :data:`select.PIPE_BUF` bytes (see :class:`_ReadyPipe`).
_LINUX: Final = sys.platform.startswith("linux")


@dataclass(slots=True)
class _Out:
    """Encoded bytes on their way to stdout, counted until written (with the request answered)."""

    data: bytes
    flow: Flow
    #: The request this response settles once written (``None``: a refusal or a notification).
    answers: RequestId | None
    done: bool = False

    def release(self) -> None:
        if not self.done:
            self.done = True
            self.flow.sent(len(self.data))
            if self.answers is not None:
                self.flow.settle(self.answers)


class WireWriter:
    """The write stream ``Server.run`` is given: encode once, count, queue for the writer task."""

    def __init__(self, send: MemoryObjectSendStream[_Out], flow: Flow) -> None:
        self._send = send
        self._flow = flow

    async def send(self, item: SessionMessage, /) -> None:
        """Send one of the SDK's messages; a response settles its request once written."""
        message = item.message
        answers = None
        if isinstance(message, JSONRPCResponse | JSONRPCError) and message.id is not None:
            answers = coerce_request_id(message.id)
        await self._queue(_encode(message), answers)

    async def refuse(self, refusal: Refusal) -> None:
        """Answer a message the transport refused (its id, if any, settles nothing)."""
        error = ErrorData(code=refusal.code, message=refusal.message)
        message = JSONRPCError(jsonrpc="2.0", id=refusal.request_id, error=error)
        await self._queue(_encode(message), None)

    async def _queue(self, data: bytes, answers: RequestId | None) -> None:
        out = _Out(data, self._flow, answers)
        if not data:
            out.release()
            return
        self._flow.queued(len(data))
        try:
            await self._send.send(out)
        except BaseException:
            out.release()
            raise

    async def aclose(self) -> None:
        """No more messages: the writer task ends once the queue is written."""
        await self._send.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()


def _encode(message: JSONRPCMessage) -> bytes:
    """One line of UTF-8 JSON; a response that cannot be encoded becomes an internal error."""
    try:
        return message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
    except (ValueError, UnicodeError) as error:  # PydanticSerializationError is a ValueError
        _LOG.error(
            "dispatcher mcp: a %s could not be encoded as JSON (%s)",
            type(message).__name__,
            type(error).__name__,
        )
    if not isinstance(message, JSONRPCResponse | JSONRPCError):
        return b""  # a notification that cannot be encoded is not sent
    failure = ErrorData(code=INTERNAL_ERROR, message="internal error: the response is not JSON")
    fallback = JSONRPCError(jsonrpc="2.0", id=message.id, error=failure)
    return fallback.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"


@dataclass(frozen=True, slots=True)
class _Incoming:
    message: JSONRPCMessage
    size: int


#: A line up to this size is checked on the event loop; a longer one in a worker thread.
INLINE_CHECK_BYTES: Final = 1 << 16


def _check_line(line: bytes | Oversized) -> _Incoming | Refusal | None:
    """Check one line; ``None``: nothing to do for it."""
    if isinstance(line, bytes) and not line.strip():
        return None  # a blank line is no message
    parsed = read_message(line, max_line_bytes=MAX_LINE_BYTES)
    if not isinstance(parsed, Message):
        return parsed
    try:
        message = jsonrpc_message_adapter.validate_python(parsed.value, by_name=False)
    except ValidationError:
        if parsed.is_response:
            return None
        return Refusal(
            INVALID_REQUEST,
            "the message is not a JSON-RPC 2.0 request, notification or response",
            parsed.request_id,
        )
    return _Incoming(message, len(line) if isinstance(line, bytes) else 0)


async def _read_loop(
    readline: Callable[[], Awaitable[bytes | Oversized]],
    send: MemoryObjectSendStream[SessionMessage | Exception],
    writer: WireWriter,
    flow: Flow,
) -> None:
    async with send:
        while True:
            await flow.room_to_read()
            line = await readline()
            if line == b"":
                return
            if isinstance(line, bytes) and len(line) <= INLINE_CHECK_BYTES:
                item = _check_line(line)
            else:
                item = await anyio.to_thread.run_sync(_check_line, line, abandon_on_cancel=True)
            if isinstance(item, Refusal):
                await writer.refuse(item)
            elif item is not None:
                await _forward(item.message, item.size, send, writer, flow)


async def _forward(
    message: JSONRPCMessage,
    size: int,
    send: MemoryObjectSendStream[SessionMessage | Exception],
    writer: WireWriter,
    flow: Flow,
) -> None:
    metadata = None
    if isinstance(message, JSONRPCRequest):
        key = coerce_request_id(message.id)
        if not flow.admit(key, size):
            busy = "the id belongs to a request that is still in progress"
            await writer.refuse(Refusal(INVALID_REQUEST, busy, message.id))
            return
        metadata = ServerMessageMetadata(on_request_unanswered=flow.settler(key))
    await send.send(SessionMessage(message, metadata=metadata))


async def _write_loop(receive: MemoryObjectReceiveStream[_Out], fd: int) -> None:
    ready = _ReadyPipe.of(fd)
    async with receive:
        async for out in receive:
            try:
                rest = ready.write(out.data) if ready is not None else memoryview(out.data)
                if rest:
                    await anyio.to_thread.run_sync(_write_all, fd, rest)
            finally:
                out.release()


class _ReadyPipe:
    """Writes to a pipe from the event loop while it has room: no thread hop for an answer.

    Only for a pipe (what an MCP client's stdio is): ``poll`` reports it
    writable while a whole buffer of :data:`select.PIPE_BUF` bytes or more is
    free, and a write of at most that many bytes then completes at once. What
    does not fit is left to a worker thread, which may block (the client is
    not reading) without stalling the event loop.
    """

    __slots__ = ("_fd", "_poll")

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._poll = select.poll()
        self._poll.register(fd, select.POLLOUT)

    @classmethod
    def of(cls, fd: int) -> _ReadyPipe | None:
        """One for ``fd`` if it is a pipe on which ``poll`` works, else ``None``."""
        try:
            return cls(fd) if _LINUX and stat.S_ISFIFO(os.fstat(fd).st_mode) else None
        except (OSError, ValueError, AttributeError):
            return None

    def write(self, data: bytes) -> memoryview:
        """Write what fits without blocking, a buffer at a time; return the rest."""
        view = memoryview(data)
        while view and self._room():
            try:
                view = view[os.write(self._fd, view[: select.PIPE_BUF]) :]
            except BlockingIOError:  # a non-blocking pipe another writer filled meanwhile
                break
        return view

    def _room(self) -> bool:
        return any(events & select.POLLOUT for _, events in self._poll.poll(0))


def _write_all(fd: int, data: bytes | memoryview) -> None:
    """Write all of ``data``, waiting for room (in a worker thread: it may block).

    The client may hand over a non-blocking stdout (the flag belongs to the
    open file it shares with us, so it is left as it is): a write without room
    then fails with ``EAGAIN`` instead of waiting, and is retried once
    ``poll`` reports room (or an error, which the retry raises).
    """
    view = memoryview(data)
    room: select.poll | None = None
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            if room is None:
                room = select.poll()
                room.register(fd, select.POLLOUT)
            room.poll()


@contextmanager
def _private_stdio() -> Iterator[tuple[int, int]]:
    """Private duplicates of fd 0 and 1; meanwhile fd 0 reads /dev/null and fd 1 goes to stderr."""
    with suppress(OSError, ValueError):
        sys.stdout.flush()
    stdin_fd = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    stdout_fd = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDWR)
    try:
        os.dup2(null, 0)
        try:
            os.dup2(2, 1)
        except OSError:  # no stderr: stray output goes nowhere
            os.dup2(null, 1)
    finally:
        os.close(null)
    try:
        yield stdin_fd, stdout_fd
    finally:
        with suppress(OSError, ValueError):
            sys.stdout.flush()
        os.dup2(stdout_fd, 1)
        os.dup2(stdin_fd, 0)
        # The duplicates stay open: an abandoned worker thread may still be reading one.


def _line_source(
    fd: int, on_eof: Callable[[], object]
) -> Callable[[], Awaitable[bytes | Oversized]]:
    """Read lines from the event loop (a pipe or a socket), else in a worker thread each."""
    if pollable(fd):
        return LineReader(fd, on_eof=on_eof).readline
    # closefd=False: the descriptor outlives the session (see _private_stdio).
    lines = BoundedLineReader(open(fd, "rb", closefd=False), on_eof=on_eof)  # noqa: SIM115
    return functools.partial(anyio.to_thread.run_sync, lines.readline, abandon_on_cancel=True)


@asynccontextmanager
async def stdio_streams(
    flow: Flow, *, on_eof: Callable[[], object]
) -> AsyncIterator[tuple[MemoryObjectReceiveStream[SessionMessage | Exception], WireWriter]]:
    """The read and write streams of one session over this process's stdin and stdout.

    ``on_eof`` runs once, in a worker thread, when stdin ends.
    """
    with _private_stdio() as (stdin_fd, stdout_fd):
        readline = _line_source(stdin_fd, on_eof)
        read_send, read_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        out_send, out_receive = anyio.create_memory_object_stream[_Out](0)
        writer = WireWriter(out_send, flow)
        async with anyio.create_task_group() as writing:
            writing.start_soon(_write_loop, out_receive, stdout_fd)
            async with anyio.create_task_group() as reading:
                reading.start_soon(_read_loop, readline, read_send, writer, flow)
                yield read_receive, writer
                reading.cancel_scope.cancel()
            await writer.aclose()
