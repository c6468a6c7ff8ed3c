"""The MCP server's memory is bounded: back-pressure instead of buffering, refusal of the oversized.

Findings: only running calls were limited. Waiting calls and unsent responses
were not, and the server kept reading while its stdout was blocked (20,000
pipelined 16 KiB calls from a client that never reads took it from 68 MB to
949 MB); one 31 MiB ``[[],[],...]`` message peaked at 2.4 GB while parsed.
Now the server stops reading while too many requests are unanswered, their
lines are too large together, or too much output is unread; a tool call does
not start while output is unread; one message is bounded in size and in
values before it is parsed, and refused with a JSON-RPC error beyond that; a
cancelled call keeps its worker slot until its thread ends.

Peak memory is the server's ``VmHWM`` from ``/proc``, measured against its
peak after the handshake and one call. Both pipes are shrunk to one page, so
"the server stopped reading" shows as a write that stays blocked.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

from kits.gateways import wait_until
from kits.mcpwire import RawServer, peak_rss_kib, write_hostile_table

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/status").exists(), reason="peak memory is read from Linux /proc"
)

INVALID_REQUEST: Final = -32600
MIB: Final = 1024
#: How long a write may stay blocked before the server counts as no longer reading.
STALL_S: Final = 0.5
#: Growth of the server's peak memory a bounded server stays under (KiB).
GROWTH_LIMIT_KIB: Final = 48 * MIB


@pytest.fixture(scope="module")
def table_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("table")
    write_hostile_table(directory)
    return directory


@pytest.fixture
def server(table_dir: Path) -> Iterator[RawServer]:
    with RawServer(["mcp", "--registry", "hostile_table:TABLE"], cwd=table_dir) as raw:
        raw.initialize()
        raw.call(1, "echo", {"text": "warm"})
        proc = raw.proc
        assert proc is not None
        assert proc.stdout is not None
        for fd in (raw.stdin_fd, proc.stdout.fileno()):
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, 4096)
        yield raw


def _push_until_stalled(fd: int, data: bytes) -> int:
    """Write ``data`` until all is written or no write is possible for :data:`STALL_S`."""
    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_NONBLOCK)
    view, sent = memoryview(data), 0
    try:
        while sent < len(data) and select.select([], [fd], [], STALL_S)[1]:
            try:
                sent += os.write(fd, view[sent : sent + (1 << 20)])
            except BlockingIOError:
                continue
    finally:
        fcntl.fcntl(fd, fcntl.F_SETFL, flags)
    return sent


def _drain(
    server: RawServer, data: bytes, sent: int, expected: set[int]
) -> list[dict[str, object]]:
    """Write the rest of ``data`` while reading every answer; bounded in time."""
    proc = server.proc
    assert proc is not None
    assert proc.stdout is not None
    answers: list[dict[str, object]] = []
    deadline = time.monotonic() + 120.0
    while len(answers) < len(expected):
        assert time.monotonic() < deadline, f"{len(answers)} of {len(expected)} answers"
        writable = [server.stdin_fd] if sent < len(data) else []
        readable, can_write, _ = select.select([proc.stdout], writable, [], 1.0)
        if can_write:
            sent += os.write(server.stdin_fd, data[sent : sent + 4096])
        if readable:
            line = server.receive_line(0.0)
            while line is not None:
                answers.append(json.loads(line))
                line = server.receive_line(0.0)
    assert {answer["id"] for answer in answers} == expected
    return answers


def _call(request_id: int, name: str, arguments: dict[str, object]) -> bytes:
    params = {"name": name, "arguments": arguments}
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    return json.dumps(message).encode() + b"\n"


@pytest.mark.parametrize(
    ("count", "name", "arguments"),
    [
        pytest.param(1500, "echo", {"text": "x" * (16 << 10)}, id="16KiB-requests"),
        pytest.param(2000, "echo", {"text": "x" * 512}, id="small-requests"),
        pytest.param(300, "sized", {"size": 256 << 10}, id="256KiB-results"),
        pytest.param(48, "echo", {"text": "x" * (1 << 20)}, id="1MiB-requests"),
    ],
)
def test_a_client_that_does_not_read_stops_being_read_and_memory_stays_bounded(
    server: RawServer, count: int, name: str, arguments: dict[str, object]
) -> None:
    base = peak_rss_kib(server.pid)
    ids = set(range(100, 100 + count))
    data = b"".join(_call(request_id, name, arguments) for request_id in sorted(ids))
    sent = _push_until_stalled(server.stdin_fd, data)
    assert sent < len(data), "the server read every call while its client read nothing"
    assert peak_rss_kib(server.pid) - base < GROWTH_LIMIT_KIB
    # Once the client reads, every call is answered and the server serves on.
    answers = _drain(server, data, sent, ids)
    assert all("result" in answer for answer in answers)
    server.ping(99)
    assert peak_rss_kib(server.pid) - base < GROWTH_LIMIT_KIB


def _huge(item: bytes) -> bytes:
    """A message of about 31 MiB: a list of ``item`` under ``params``."""
    body = item + (b"," + item) * ((31 << 20) // (len(item) + 1))
    return b'{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":[' + body + b"]}}"


@pytest.mark.parametrize("item", [b"[]", b"{}", b"0", b'""', b'"a,b:[{"', b'{"k":[]}'])
def test_one_huge_message_is_refused_before_it_is_built(server: RawServer, item: bytes) -> None:
    base = peak_rss_kib(server.pid)
    line = _huge(item)
    server.send(line)
    answer = server.receive(120.0)
    assert answer["id"] == 5
    assert answer["error"]["code"] == INVALID_REQUEST
    # Reading the line costs about twice its size; building it would cost twenty times and more.
    assert peak_rss_kib(server.pid) - base < 3 * len(line) // 1024
    server.ping(6)


@pytest.mark.parametrize(
    ("line", "request_id"),
    [
        (
            b'{"jsonrpc":"2.0","id":41,"method":"ping","params":{"x":"'
            + b"a" * (33 << 20)
            + b'"}}',
            41,
        ),
        (
            b'{"method":"ping","params":{"x":"'
            + b"b" * (33 << 20)
            + b'"},"jsonrpc":"2.0","id":"t"}',
            "t",
        ),
        (b'{"params":{"x":"' + b"c" * (33 << 20) + b'"}}', None),
    ],
    ids=["id-first", "id-last", "no-id"],
)
def test_a_message_over_the_size_cap_is_refused_with_its_id(
    server: RawServer, line: bytes, request_id: object
) -> None:
    base = peak_rss_kib(server.pid)
    server.send(line)
    answer = server.receive(120.0)
    assert answer["id"] == request_id
    assert answer["error"]["code"] == INVALID_REQUEST
    assert peak_rss_kib(server.pid) - base < 3 * len(line) // 1024
    server.ping(7)


def test_cancelled_calls_keep_their_slots_until_their_threads_end(
    server: RawServer, tmp_path: Path
) -> None:
    first = [tmp_path / f"first-{n}" for n in range(8)]
    for request_id, marker in enumerate(first, start=10):
        server.send(_call(request_id, "block", {"marker": str(marker)}).rstrip(b"\n"))
    assert wait_until(lambda: all(marker.exists() for marker in first), timeout_s=30.0)
    threads = _threads(server.pid)
    for request_id in range(10, 18):
        cancel = {"requestId": request_id, "reason": "test"}
        server.send_json({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel})
    second = [tmp_path / f"second-{n}" for n in range(8)]
    for request_id, marker in enumerate(second, start=20):
        server.send(_call(request_id, "block", {"marker": str(marker)}).rstrip(b"\n"))
    server.ping(30)  # the server reads and answers; the cancelled calls were never answered
    # The eight handlers still run, so no new one starts, and no thread is added for one
    # (one more worker thread may write the ping's answer).
    assert not wait_until(lambda: any(marker.exists() for marker in second), timeout_s=STALL_S)
    assert _threads(server.pid) <= threads + 1


def _threads(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    raise AssertionError("no Threads in /proc/<pid>/status")


def test_cancelled_requests_no_longer_count_against_the_pending_bound(
    server: RawServer, tmp_path: Path
) -> None:
    markers = [tmp_path / f"held-{n}" for n in range(8)]
    for request_id, marker in enumerate(markers, start=10):
        server.send(_call(request_id, "block", {"marker": str(marker)}).rstrip(b"\n"))
    assert wait_until(lambda: all(marker.exists() for marker in markers), timeout_s=30.0)
    # Every slot is held: each call below waits, is cancelled, and is never answered.
    for request_id in range(100, 100 + 3 * 64):
        server.send(_call(request_id, "echo", {"text": "x"}).rstrip(b"\n"))
        cancel = {"requestId": request_id, "reason": "test"}
        server.send_json({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel})
    server.ping(99)  # read and answered: the cancelled requests were settled
