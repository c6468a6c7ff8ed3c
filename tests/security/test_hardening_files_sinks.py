"""Audit, trace and span files: one safe appender, whole records, torn lines survived.

Findings 1 and 2 of the files group: the audit sinks followed a symlink planted
at their path, kept a pre-existing 0666 file's mode and blocked forever on a
FIFO (the span writer did not); a record cut by ``kill -9`` or by a full disk
glued the next record to itself, and nothing read such files safely.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from boring_dispatch import Observation, Registry, Tool
from boring_dispatch.observe.audit import AuditEvent, JsonLinesAuditSink, TraceRecorder
from boring_dispatch.observe.trace import Span, new_trace_id, spans_path, write_span

BOUND = 10.0  # the longest any child process may take
KINDS = ("audit", "trace", "span")
ROOT = os.geteuid() == 0


def event(index: int = 0, blob: str = "") -> AuditEvent:
    return AuditEvent(
        time=1_700_000_000.0 + index,
        surface="files",
        tool="note",
        outcome="ok",
        duration_ms=1.0,
        args={"index": index, "blob": blob},
        observation=Observation.success({"index": index}),
    )


def span_record() -> Span:
    return Span(new_trace_id(), "dispatcher.process", time.time(), 1.0, "ok")


@pytest.fixture
def logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "logs"
    monkeypatch.setenv("ASSISTANT_LOGS", str(directory))
    monkeypatch.delenv("BORING_DISPATCH_OTEL", raising=False)
    (directory / "dispatch").mkdir(parents=True)
    return directory


def target(kind: str, tmp_path: Path) -> Path:
    """Where the writer of ``kind`` appends (the span file is fixed by ASSISTANT_LOGS)."""
    return spans_path() if kind == "span" else tmp_path / f"{kind}.jsonl"


def write_one(kind: str, path: Path) -> None:
    """Append one record the way the writer of ``kind`` does; a refusal may raise."""
    if kind == "span":
        write_span(span_record())  # swallows every failure by contract
        return
    sink = JsonLinesAuditSink(path) if kind == "audit" else TraceRecorder(path)
    with sink:
        sink.record(event())


# --------------------------------------------------------------------------- #
# Finding 1: what stands at the path


def plant(planted: str, path: Path, victim: Path) -> None:
    victim.write_text("victim\n")
    victim.chmod(0o600)
    if planted == "symlink":
        path.symlink_to(victim)
    elif planted == "dangling_symlink":
        path.symlink_to(victim.parent / "created-through-link")
    elif planted == "hard_link":
        path.hardlink_to(victim)
    elif planted == "socket":
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        server.close()
    elif planted == "directory":
        path.mkdir()
    elif planted == "other_owner":
        path.write_text("")
        os.chown(path, 65534, 65534)
    else:
        raise AssertionError(planted)


REFUSED = ["symlink", "dangling_symlink", "hard_link", "socket", "directory", "other_owner"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("planted", REFUSED)
def test_nothing_is_written_through_what_was_planted_at_the_path(
    kind: str, planted: str, tmp_path: Path, logs: Path
) -> None:
    if planted == "other_owner" and not ROOT:
        pytest.skip("chown to another user needs root")
    path = target(kind, tmp_path)
    victim = tmp_path / "victim.txt"
    plant(planted, path, victim)
    before = path.lstat()
    if kind == "span":
        write_one(kind, path)
    else:
        with pytest.raises(ValueError, match=r"symlink|regular|another user|hard link"):
            write_one(kind, path)
    assert victim.read_text() == "victim\n"
    assert not (victim.parent / "created-through-link").exists()
    after = path.lstat()
    assert (after.st_ino, after.st_mode, after.st_size) == (
        before.st_ino,
        before.st_mode,
        before.st_size,
    )


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("mode", [0o666, 0o622, 0o660, 0o606, 0o620, 0o602, 0o644, 0o640])
def test_a_group_or_world_writable_file_loses_those_bits(
    kind: str, mode: int, tmp_path: Path, logs: Path
) -> None:
    path = target(kind, tmp_path)
    path.write_text("")
    path.chmod(mode)
    write_one(kind, path)
    now = stat.S_IMODE(path.stat().st_mode)
    assert now & 0o022 == 0
    assert now == mode & ~0o022  # read bits the operator chose stay
    assert path.read_text().count("\n") == 1


@pytest.mark.parametrize("kind", KINDS)
def test_a_fifo_at_the_path_neither_blocks_nor_is_written(kind: str, tmp_path: Path) -> None:
    # In a child process, so that an open that blocks fails the test instead of hanging it.
    logs = tmp_path / "logs"
    (logs / "dispatch").mkdir(parents=True)
    env = {"PATH": "/usr/bin:/bin", "ASSISTANT_LOGS": str(logs)}
    code = f"""
        import os, sys
        from pathlib import Path
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_hardening_files_sinks import target, write_one
        path = target({kind!r}, Path({str(tmp_path)!r}))
        os.mkfifo(path)
        try:
            write_one({kind!r}, path)
        except ValueError as error:
            print("refused", error)
        else:
            print("not refused")
    """
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=BOUND,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("refused" if kind != "span" else "not refused")


# --------------------------------------------------------------------------- #
# Finding 2: torn records


def read(path: Path) -> tuple[list[dict[str, object]], tuple[int, ...]]:
    """The records of a JSON-lines file and the numbers of the lines that are not one.

    Parsed here, as any reader would; :func:`read_records` must agree.
    """
    records: list[dict[str, object]] = []
    skipped: list[int] = []
    for number, line in enumerate(path.read_bytes().split(b"\n")[:-1], start=1):
        try:
            value = json.loads(line)
        except ValueError:
            value = None
        if isinstance(value, dict):
            records.append(value)
        else:
            skipped.append(number)
    return records, tuple(skipped)


def agree(path: Path, records: list[dict[str, object]], skipped: tuple[int, ...]) -> None:
    from boring_dispatch.observe.audit import read_records

    read = read_records(path)
    assert [record for _, record in read.records] == records
    assert read.skipped == skipped


def full_record(kind: str, tmp_path: Path) -> bytes:
    """One record exactly as the writer of ``kind`` writes it."""
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    if kind == "span":
        # The span file is per day: write into a throwaway logs directory.
        old = os.environ.get("ASSISTANT_LOGS")
        os.environ["ASSISTANT_LOGS"] = str(scratch)
        try:
            write_span(span_record())
            return spans_path().read_bytes()
        finally:
            os.environ["ASSISTANT_LOGS"] = old or ""
    path = scratch / f"{kind}.jsonl"
    write_one(kind, path)
    data = path.read_bytes()
    path.unlink()
    return data


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("fraction", [0.01, 0.2, 0.5, 0.77, 0.99])
def test_the_record_after_a_torn_one_starts_on_a_fresh_line(
    kind: str, fraction: float, tmp_path: Path, logs: Path
) -> None:
    path = target(kind, tmp_path)
    record = full_record(kind, tmp_path)
    cut = min(max(1, int(len(record) * fraction)), len(record) - 2)  # the closing } is lost
    path.write_bytes(record + record[:cut])  # a whole record, then one cut by a kill
    path.chmod(0o600)
    write_one(kind, path)
    records, skipped = read(path)
    assert len(records) == 2
    assert skipped == (2,)
    assert path.read_bytes().endswith(b"}\n")
    agree(path, records, skipped)


@pytest.mark.parametrize("kind", ["audit", "trace"])
@pytest.mark.parametrize("cap", [4096, 5000, 20_000])
def test_a_record_over_the_cap_is_replaced_by_a_small_one(
    kind: str, cap: int, tmp_path: Path
) -> None:
    path = tmp_path / "audit.jsonl"
    sink_type = JsonLinesAuditSink if kind == "audit" else TraceRecorder
    with sink_type(path, max_record_bytes=cap) as sink:
        sink.record(event(1, "x" * cap))
        sink.record(event(2, "é" * cap))  # six bytes of JSON each
    lines = path.read_bytes().splitlines(keepends=True)
    assert len(lines) == 2
    for line in lines:
        record = json.loads(line)
        assert record["record_too_large"] > cap
        assert "blob" not in line.decode()
        assert record.get("tool", record.get("name")) == "note"


def test_the_default_cap_keeps_a_huge_call_to_one_small_line(tmp_path: Path) -> None:
    def note(text: str) -> dict[str, int]:
        return {"length": len(text)}

    path = tmp_path / "audit.jsonl"
    with JsonLinesAuditSink(path) as audit, TraceRecorder(tmp_path / "trace.jsonl") as trace:
        registry = Registry({"note": Tool(note, description="Note.")}, sinks=[audit, trace])
        assert registry.dispatch("note", {"text": "\u0430" * (1 << 20)}).ok
    for written in (path, tmp_path / "trace.jsonl"):
        data = written.read_bytes()
        assert len(data) < 1024
        assert json.loads(data)["record_too_large"] > 1 << 20


WRITER = """
import sys
from boring_dispatch import Observation
from boring_dispatch.observe.audit import AuditEvent, TraceRecorder

path, child, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with TraceRecorder(path) as recorder:
    for index in range(1_000_000):
        recorder.record(AuditEvent(0.0, "files", "note", "ok", 1.0,
                                   {"child": child, "index": index, "blob": "x" * size},
                                   Observation.success(index)))
        sys.stdout.write(f"{index}\\n")
        sys.stdout.flush()
"""


def test_writers_killed_mid_write_lose_only_their_own_torn_record(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    kills = 8
    for child in range(kills):
        size = (512 << 10) + child * 7919  # large records (under the cap): long writes
        proc = subprocess.Popen(
            [sys.executable, str(script), str(path), str(child), str(size)],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert proc.stdout is not None
            for _ in range(1 + child % 3):  # each line: one more record is complete
                assert proc.stdout.readline() != ""
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(BOUND)
            if proc.stdout is not None:
                proc.stdout.close()
    last = subprocess.run(
        [sys.executable, "-c", WRITER.replace("range(1_000_000)", "range(1)"), path, "99", "10"],
        capture_output=True,
        timeout=BOUND,
        check=True,
    )
    assert last.stdout == b"0\n"
    records, skipped = read(path)
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""
    assert len(records) + len(skipped) == len(lines) - 1
    counts: dict[int, int] = {}
    for record in records:
        args = record["args"]
        assert isinstance(args, dict)
        counts[args["child"]] = counts.get(args["child"], 0) + 1
    # Every child's acknowledged records are there, whole, and so is the last writer's.
    assert counts[99] == 1
    for child in range(kills):
        assert counts.get(child, 0) >= 1 + child % 3
    for number in skipped:  # a torn line holds a part of one record, never a glued second
        assert lines[number - 1].count(b'{"name"') == 1
    agree(path, records, skipped)


# --------------------------------------------------------------------------- #
# Finding 2: a full disk (a real, tiny tmpfs)


def fill(directory: Path, write: Callable[[int], None]) -> int:
    """Write records until the disk is full; return how many went in whole."""
    written = 0
    while True:
        try:
            write(written)
        except OSError as error:
            if error.errno != errno.ENOSPC:
                raise
            return written
        written += 1


@pytest.mark.parametrize("kind", ["audit", "trace"])
@pytest.mark.parametrize("blob", [1000, 3333, 5000, 9001, 20_000])
def test_a_full_disk_leaves_one_torn_line_and_the_next_record_whole(
    kind: str, blob: int, tiny_fs: Path
) -> None:
    filler = tiny_fs / "filler"
    filler.write_bytes(b"f" * (16 << 10))
    path = tiny_fs / f"{kind}.jsonl"
    sink = JsonLinesAuditSink(path) if kind == "audit" else TraceRecorder(path)
    with sink:
        whole = fill(tiny_fs, lambda index: sink.record(event(index, "y" * blob)))
        assert not path.read_bytes().endswith(b"\n")  # the disk filled up mid-record
        filler.unlink()  # space again
        sink.record(event(whole + 1))
    records, skipped = read(path)
    assert [record["args"]["index"] for record in records] == [  # type: ignore[index]
        *range(whole),
        whole + 1,
    ]
    assert skipped == (whole + 1,)
    agree(path, records, skipped)


def test_a_full_disk_does_not_glue_the_next_writers_record_either(tiny_fs: Path) -> None:
    filler = tiny_fs / "filler"
    filler.write_bytes(b"f" * (16 << 10))
    path = tiny_fs / "audit.jsonl"
    with JsonLinesAuditSink(path) as first:
        whole = fill(tiny_fs, lambda index: first.record(event(index, "z" * 3000)))
    filler.unlink()
    with JsonLinesAuditSink(path) as second:  # another process, later: it knows nothing
        second.record(event(1000))
    records, skipped = read(path)
    assert len(records) == whole + 1
    assert records[-1]["args"]["index"] == 1000  # type: ignore[index]
    assert len(skipped) == 1
    agree(path, records, skipped)
