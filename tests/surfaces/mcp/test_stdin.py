"""The event-loop line reader gives the threaded reader's lines, in bounded memory.

The reference is :class:`BoundedLineReader` over a blocking stream (what the
server still uses when stdin is not a pipe or a socket).
"""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boring_dispatch.surfaces.mcp._stdin import (
    EDGE_BYTES,
    READ_BYTES,
    BoundedLineReader,
    LineReader,
    Oversized,
    pollable,
)

_CAP = 40


def _reference(data: bytes, cap: int) -> list[bytes | Oversized]:
    """The lines of the threaded reader (a blocking stream)."""
    ended: list[bool] = []
    reader = BoundedLineReader(
        io.BytesIO(data), on_eof=lambda: ended.append(True), max_line_bytes=cap
    )
    out: list[bytes | Oversized] = []
    while (line := reader.readline()) != b"":
        out.append(line)
    assert ended == [True]
    return out


def _read_all(reader: LineReader) -> list[bytes | Oversized]:
    async def main() -> list[bytes | Oversized]:
        out: list[bytes | Oversized] = []
        with anyio.fail_after(30):
            while (line := await reader.readline()) != b"":
                out.append(line)
            assert await reader.readline() == b""  # the end stays the end
        return out

    return anyio.run(main)


_LINE = st.one_of(
    st.binary(max_size=3 * _CAP),
    st.integers(min_value=0, max_value=EDGE_BYTES * 3).map(
        lambda n: bytes(i % 251 for i in range(n))
    ),
    st.integers(min_value=_CAP - 2, max_value=_CAP + 2).map(lambda n: b"x" * n),
)
_STREAM = st.lists(st.tuples(_LINE, st.booleans()), max_size=12).map(
    lambda parts: b"".join(body + (b"\n" if newline else b"") for body, newline in parts)
)


@settings(max_examples=400)
@given(data=_STREAM, cuts=st.lists(st.integers(min_value=1, max_value=70), max_size=40))
def test_lines_are_those_of_the_former_reader_however_the_input_arrives(
    data: bytes, cuts: list[int]
) -> None:
    chunks: list[bytes] = []
    rest = data
    for cut in cuts:
        if not rest:
            break
        chunks.append(rest[:cut])
        rest = rest[cut:]
    if rest:
        chunks.append(rest)
    pending = list(chunks)
    held: list[int] = []
    reader: LineReader

    async def fill() -> bytes:
        held.append(len(reader._buffer))
        return pending.pop(0) if pending else b""

    ended: list[bool] = []
    reader = LineReader(-1, on_eof=lambda: ended.append(True), max_line_bytes=_CAP, fill=fill)
    assert _read_all(reader) == _reference(data, _CAP)
    assert ended == [True]  # once, at the end
    assert max(held, default=0) <= _CAP + max((len(c) for c in chunks), default=0)


def test_a_huge_line_is_skipped_in_bounded_memory_and_its_edges_kept() -> None:
    line = b'{"jsonrpc":"2.0","id":7,' + b"a" * (50 * READ_BYTES) + b',"id":7}\n'
    pending = [line[i : i + READ_BYTES] for i in range(0, len(line), READ_BYTES)] + [b"{}\n"]
    held: list[int] = []
    reader: LineReader

    async def fill() -> bytes:
        held.append(len(reader._buffer))
        return pending.pop(0) if pending else b""

    cap = 4 * READ_BYTES
    reader = LineReader(-1, on_eof=lambda: None, max_line_bytes=cap, fill=fill)
    lines = _read_all(reader)
    assert lines == [Oversized(line[:EDGE_BYTES], line[-EDGE_BYTES:]), b"{}\n"]
    assert max(held) <= cap + READ_BYTES


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the loop reads pipes on Linux")
def test_a_pipe_read_from_the_loop_gives_the_lines_of_a_file_read_in_a_thread(
    tmp_path: Path,
) -> None:
    data = b'{"a":1}\n\n' + b"z" * 100 + b"\n" + b'{"last":true}'
    path = tmp_path / "in"
    path.write_bytes(data)
    read_fd, write_fd = os.pipe()
    os.write(write_fd, data)
    os.close(write_fd)
    file_fd = os.open(path, os.O_RDONLY)
    ended: list[bool] = []
    try:
        assert pollable(read_fd)
        assert not pollable(file_fd)
        reader = LineReader(read_fd, on_eof=lambda: ended.append(True), max_line_bytes=64)
        assert _read_all(reader) == _reference(data, 64)
    finally:
        os.close(read_fd)
        os.close(file_fd)
    assert ended == [True]
    assert not pollable(read_fd)  # closed


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the loop reads pipes on Linux")
@pytest.mark.parametrize("blocking", [True, False])
def test_lines_that_arrive_in_pieces_are_waited_for_on_the_loop(blocking: bool) -> None:
    pieces = [b'{"jsonrpc":', b'"2.0"}\n{"b"', b":2}\n", b"tail"]
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, blocking)
    ended: list[bool] = []
    reader = LineReader(read_fd, on_eof=lambda: ended.append(True), max_line_bytes=64)

    async def main() -> list[bytes | Oversized]:
        out: list[bytes | Oversized] = []

        async def read() -> None:
            while (line := await reader.readline()) != b"":
                out.append(line)

        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                group.start_soon(read)
                for piece in pieces:
                    await anyio.wait_all_tasks_blocked()  # the reader waits on the loop
                    os.write(write_fd, piece)
                await anyio.wait_all_tasks_blocked()
                os.close(write_fd)
        return out

    try:
        assert anyio.run(main) == _reference(b"".join(pieces), 64)
    finally:
        os.close(read_fd)
    assert ended == [True]


@pytest.mark.parametrize("caps", [2, 5, 20])
def test_a_skipped_line_holds_no_more_than_the_cap_and_one_copy(caps: int) -> None:
    """The module's bound: one cap of a line (and its one copy), never a second cap while the
    rest of an oversized line is read and dropped."""
    import tracemalloc

    cap = 1 << 20
    total = caps * cap
    sent = [0]
    piece = b"a" * READ_BYTES

    async def fill() -> bytes:
        if sent[0] >= total:
            done, sent[0] = sent[0] > total, total + 1
            return b"" if done else b"\n"
        sent[0] += READ_BYTES
        return piece

    async def main() -> tuple[bytes | Oversized, int]:
        reader = LineReader(-1, on_eof=lambda: None, max_line_bytes=cap, fill=fill)
        tracemalloc.start()
        try:
            line = await reader.readline()
            return line, tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    line, peak = anyio.run(main)
    assert line == Oversized(b"a" * EDGE_BYTES, b"a" * (EDGE_BYTES - 1) + b"\n")
    assert peak < 2.5 * cap  # the cap read (with growth room), its copy, then small pieces


@pytest.mark.parametrize("caps", [2, 5])
def test_the_threaded_reader_skips_a_line_holding_no_more_than_its_cap(caps: int) -> None:
    import tracemalloc

    cap = 1 << 20
    source = io.BytesIO(b"a" * (caps * cap) + b"\n{}\n")
    reader = BoundedLineReader(source, on_eof=lambda: None, max_line_bytes=cap)
    tracemalloc.start()
    try:
        line = reader.readline()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert line == Oversized(b"a" * EDGE_BYTES, b"a" * (EDGE_BYTES - 1) + b"\n")
    assert reader.readline() == b"{}\n"
    assert peak < 1.5 * cap


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the loop reads ttys on Linux")
def test_a_terminal_stdin_left_non_blocking_waits_for_its_line_instead_of_ending() -> None:
    """A non-blocking terminal has nothing to read yet: that is not the end of the session."""
    from boring_dispatch.surfaces.mcp._transport import _line_source

    leader, follower = os.openpty()
    os.set_blocking(follower, False)
    ended: list[bool] = []
    readline = _line_source(follower, lambda: ended.append(True))

    async def main() -> list[bytes | Oversized]:
        lines: list[bytes | Oversized] = []
        with anyio.move_on_after(0.3):  # nothing typed yet: the reader must still be waiting
            lines.append(await readline())
        os.write(leader, b'{"jsonrpc":"2.0","method":"ping","id":1}\n')
        with anyio.fail_after(30):
            lines.append(await readline())
        return lines

    try:
        lines = anyio.run(main)
    finally:
        os.close(leader)
        os.close(follower)
    assert lines == [b'{"jsonrpc":"2.0","method":"ping","id":1}\n']
    assert ended == []
