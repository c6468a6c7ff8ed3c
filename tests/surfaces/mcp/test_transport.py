"""The answer writer's event-loop path: a pipe is written only while it has room.

Each test pipe is non-blocking on its own side, so a write that would have
blocked the event loop fails the test (``BlockingIOError``) instead of hanging.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boring_dispatch.surfaces.mcp._transport import _ReadyPipe
from kits.mcp import projection, write_tools_repository
from kits.mcpwire import INITIALIZE

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux pipes")

_CAPACITY = 1 << 16
_SLOTS = _CAPACITY // select.PIPE_BUF


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read_fd, write_fd = os.pipe()
    try:
        fcntl.fcntl(write_fd, fcntl.F_SETPIPE_SZ, _CAPACITY)
        os.set_blocking(write_fd, False)
        os.set_blocking(read_fd, False)
        yield read_fd, write_fd
    finally:
        for fd in (read_fd, write_fd):
            with contextlib.suppress(OSError):
                os.close(fd)


def _fill(fd: int, size: int) -> int:
    """Write up to ``size`` bytes without blocking; how many went in."""
    try:
        return os.write(fd, b"p" * size) if size else 0
    except BlockingIOError:
        return 0


def _drain(fd: int) -> bytes:
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return b"".join(chunks)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


@linux_only
@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    prefill=st.integers(min_value=0, max_value=_CAPACITY),
    data=st.binary(max_size=3 * _CAPACITY).map(lambda raw: raw or b"")
    | st.integers(min_value=0, max_value=3 * _CAPACITY).map(
        lambda n: bytes(range(256)) * (n // 256)
    ),
)
def test_a_ready_pipe_writes_what_fits_in_order_and_never_blocks(
    pipe: tuple[int, int], prefill: int, data: bytes
) -> None:
    read_fd, write_fd = pipe
    _drain(read_fd)
    filled = _fill(write_fd, prefill)
    ready = _ReadyPipe.of(write_fd)
    assert ready is not None
    rest = ready.write(data)  # BlockingIOError here: it wrote to a pipe without room
    written = len(data) - len(rest)
    if rest:  # it stopped only because no buffer was free any more
        assert not select.select([], [write_fd], [], 0)[1]
    assert bytes(rest) == data[written:]
    assert _drain(read_fd) == b"p" * filled + data[:written]
    if math.ceil(filled / select.PIPE_BUF) + math.ceil(len(data) / select.PIPE_BUF) < _SLOTS:
        assert not rest  # what fits is written, all of it


@linux_only
def test_a_pipe_whose_reader_is_gone_fails_as_the_thread_write_did(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    os.close(read_fd)
    ready = _ReadyPipe.of(write_fd)
    assert ready is not None
    with pytest.raises(BrokenPipeError):
        ready.write(b'{"jsonrpc":"2.0"}\n')


@linux_only
def test_only_a_pipe_is_written_from_the_event_loop(tmp_path: Path, pipe: tuple[int, int]) -> None:
    assert _ReadyPipe.of(pipe[1]) is not None
    with (tmp_path / "out").open("wb") as regular:
        assert _ReadyPipe.of(regular.fileno()) is None
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        assert _ReadyPipe.of(null) is None
    finally:
        os.close(null)
    closed = os.dup(pipe[1])
    os.close(closed)
    assert _ReadyPipe.of(closed) is None


@linux_only
def test_an_empty_answer_writes_nothing(pipe: tuple[int, int]) -> None:
    ready = _ReadyPipe.of(pipe[1])
    assert ready is not None
    assert not ready.write(b"")
    assert _drain(pipe[0]) == b""


def _answer(sock: socket.socket, buffer: bytearray, deadline: float) -> dict[str, object]:
    while b"\n" not in buffer:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        chunk = sock.recv(1 << 16)
        assert chunk, "the server closed the session"
        buffer += chunk
    line, _, rest = bytes(buffer).partition(b"\n")
    buffer[:] = rest
    answer = json.loads(line)
    assert isinstance(answer, dict)
    return answer


@linux_only
def test_a_server_whose_stdio_is_a_socket_reads_from_its_loop_and_answers(tmp_path: Path) -> None:
    config = write_tools_repository(tmp_path / "repo")
    ours, theirs = socket.socketpair()
    proc = subprocess.Popen(
        [sys.executable, "-m", "boring_dispatch", "mcp", "--config", str(config)],
        stdin=theirs.fileno(),
        stdout=theirs.fileno(),
        stderr=subprocess.DEVNULL,
        env={**os.environ, "ASSISTANT_LOGS": str(tmp_path / "logs")},
    )
    theirs.close()
    buffer = bytearray()
    deadline = time.monotonic() + 60
    try:
        ours.sendall(json.dumps(INITIALIZE).encode() + b"\n")
        assert _answer(ours, buffer, deadline)["id"] == 0
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        # Two requests in one write, the second in two pieces: the reader splits and waits.
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": "invoke_security_0",
                "arguments": projection("streams-both", dry_run=True),
            },
        }
        ping = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}).encode() + b"\n"
        ours.sendall(
            json.dumps(initialized).encode() + b"\n" + json.dumps(call).encode() + b"\n" + ping[:9]
        )
        ours.sendall(ping[9:])
        answers = {}
        for _ in range(2):
            answer = _answer(ours, buffer, deadline)
            answers[answer["id"]] = answer
        assert set(answers) == {1, 2}
        result = answers[1]["result"]
        assert isinstance(result, dict)
        assert result["isError"] is False
        assert "dry_run" in result["structuredContent"]["result"]["dispatcher"]
        assert answers[2]["result"] == {}
        ours.shutdown(socket.SHUT_WR)  # the end of stdin ends the session
        assert proc.wait(timeout=60) == 0
    finally:
        ours.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)


def _write_through_the_loop(write_fd: int, answers: list[bytes]) -> None:
    """Run the transport's writer task over ``write_fd`` until every answer is written."""
    import anyio

    from boring_dispatch.surfaces.mcp._flow import Flow
    from boring_dispatch.surfaces.mcp._transport import _Out, _write_loop

    async def main() -> None:
        flow = Flow()
        send, receive = anyio.create_memory_object_stream[_Out](0)
        async with anyio.create_task_group() as group:
            group.start_soon(_write_loop, receive, write_fd)
            async with send:
                for data in answers:
                    flow.queued(len(data))
                    await send.send(_Out(data, flow, None))

    anyio.run(main)


@linux_only
@settings(max_examples=10, deadline=None)
@given(
    sizes=st.lists(
        st.integers(min_value=_CAPACITY, max_value=3 * _CAPACITY) | st.integers(1, 64),
        min_size=1,
        max_size=4,
    ).filter(lambda sizes: sum(sizes) > _CAPACITY)
)
def test_a_stdout_left_non_blocking_is_waited_for_not_failed(sizes: list[int]) -> None:
    """A client may hand over its stdout pipe non-blocking (the flag is on the open file the
    client shares): an answer that does not fit waits for room, it is not lost."""
    read_fd, write_fd = os.pipe()
    fcntl.fcntl(write_fd, fcntl.F_SETPIPE_SZ, _CAPACITY)
    os.set_blocking(write_fd, False)
    filled = _fill(write_fd, _CAPACITY)  # full: the first answer finds no room at all
    answers = [bytes([65 + index % 26]) * size + b"\n" for index, size in enumerate(sizes)]
    received = bytearray()

    def read_to_the_end() -> None:
        while chunk := os.read(read_fd, 256):  # a slow client: the writer keeps finding no room
            received.extend(chunk)

    reader = threading.Thread(target=read_to_the_end)
    reader.start()
    try:
        _write_through_the_loop(write_fd, answers)  # BlockingIOError: the session would end
    finally:
        os.close(write_fd)  # the reader sees the end
        reader.join(timeout=60)
        os.close(read_fd)
    assert not reader.is_alive()
    assert bytes(received) == b"p" * filled + b"".join(answers)
