"""The event-loop line reader: the lines the former threaded reader gave, in bounded memory.

The reference is the former reader's algorithm over ``io.BytesIO`` (whose
``readline(limit)`` is the buffered reader's): ``readline(cap + 1)``, and for a
line over the cap, its edges while the rest is read with ``readline(cap)``.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boring_dispatch.surfaces.mcp._stdin import EDGE_BYTES, READ_BYTES, LineReader, Oversized

_CAP = 40


def _reference(data: bytes, cap: int) -> list[bytes | Oversized]:
    source = io.BytesIO(data)
    out: list[bytes | Oversized] = []
    while True:
        line = source.readline(cap + 1)
        if not line:
            return out
        if len(line) <= cap or line.endswith(b"\n"):
            out.append(line)
            continue
        head, tail = line[:EDGE_BYTES], line[-EDGE_BYTES:]
        while True:
            chunk = source.readline(cap)
            if not chunk:
                break
            tail = (tail + chunk)[-EDGE_BYTES:]
            if chunk.endswith(b"\n"):
                break
        out.append(Oversized(head, tail))


def _read_all(reader: LineReader) -> list[bytes | Oversized]:
    async def main() -> list[bytes | Oversized]:
        out: list[bytes | Oversized] = []
        with anyio.fail_after(30):
            while (line := await reader.readline()) != b"":
                out.append(line)
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

    reader = LineReader(-1, max_line_bytes=_CAP, fill=fill)
    assert _read_all(reader) == _reference(data, _CAP)
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
    reader = LineReader(-1, max_line_bytes=cap, fill=fill)
    lines = _read_all(reader)
    assert lines == [Oversized(line[:EDGE_BYTES], line[-EDGE_BYTES:]), b"{}\n"]
    assert max(held) <= cap + READ_BYTES


@pytest.mark.parametrize("kind", ["pipe", "file"])
def test_a_pipe_and_a_file_give_the_same_lines(tmp_path: Path, kind: str) -> None:
    data = b'{"a":1}\n\n' + b"z" * 100 + b"\n" + b'{"last":true}'
    if kind == "file":
        path = tmp_path / "in"
        path.write_bytes(data)
        fd = os.open(path, os.O_RDONLY)
    else:
        fd, write_fd = os.pipe()
        os.write(write_fd, data)
        os.close(write_fd)
    try:
        assert _read_all(LineReader(fd, max_line_bytes=64)) == _reference(data, 64)
    finally:
        os.close(fd)
