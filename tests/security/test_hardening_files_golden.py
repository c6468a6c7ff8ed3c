"""Golden files and traces are read as a reviewer sees them, and only when they are files.

Findings 3 and 4 of the files group: ``splitlines()`` broke lines at U+2028,
U+0085, ``\\x1c``... where git, grep and editors show one line, so a golden
comment could approve a name nobody saw; and golden and trace files were read
whole, so ``/dev/zero`` ended in a MemoryError and a FIFO hung.
"""

from __future__ import annotations

import functools
import json
import os
import resource
import socket
import subprocess
import sys
import textwrap
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest

from boring_dispatch import Registry, Tool
from boring_dispatch.golden import compare, read_golden
from boring_dispatch.registry.replay import replay
from boring_dispatch.testing import assert_golden

BOUND = 10.0
ROOT = Path(__file__).resolve().parents[2]
BILLING_SPEC = "examples.support_and_billing.billing:BILLING"

CATEGORIES = ("Zl", "Zp", "Cc", "Cf")
#: Every character a reviewer would not see as part of one ordinary line, by category:
#: line and paragraph separators, controls (but tab and the newline itself), format characters.
FAMILY = {
    category: tuple(
        chr(code)
        for code in range(sys.maxunicode + 1)
        if unicodedata.category(chr(code)) == category and chr(code) not in "\t\n"
    )
    for category in CATEGORIES
}
REFUSED = tuple(char for category in CATEGORIES for char in FAMILY[category])


def test_the_family_is_what_the_finding_names() -> None:
    assert {"\u2028", "\u2029", "\x85", "\x1c", "\x1d", "\x1e", "\x0b", "\x0c", "\r"} <= set(
        REFUSED
    )
    assert {"\ufeff", "\u200b", "\u200d", "\u202e", "\u2066", "\x1b", "\x00"} <= set(REFUSED)
    assert len(REFUSED) > 200


def finish(answer: str) -> dict[str, str]:
    return {"answer": answer}


def refund(invoice: str) -> dict[str, str]:
    return {"refunded": invoice}


@functools.cache
def billing() -> Registry:
    return Registry(
        {
            "finish": Tool(finish, description="Finish."),
            "refund": Tool(refund, description="Refund."),
        }
    )


def names(char: str) -> str:
    return f"code U+{ord(char):04X}"


# --------------------------------------------------------------------------- #
# Finding 3: separators and invisible characters


@pytest.mark.parametrize("category", CATEGORIES)
def test_a_golden_file_with_a_hidden_line_is_refused_with_its_line_number(
    category: str, tmp_path: Path
) -> None:
    for char in FAMILY[category]:
        check_golden_refuses(char, tmp_path)


def check_golden_refuses(char: str, tmp_path: Path) -> None:
    from boring_dispatch.golden import FileRefused

    templates = [
        ("finish\n# removed in review{c}refund\n", 2),  # the attack: a hidden approved name
        ("{c}finish\nrefund\n", 1),  # a BOM or any invisible at the start
        ("finish\nrefund{c}\n", 2),
        ("# reviewed\n\nfinish\nre{c}fund\n", 4),
    ]
    readers: list[Callable[[Path], object]] = [
        read_golden,
        lambda p: compare(["finish", "refund"], p),
        lambda p: assert_golden(billing(), p),
    ]
    for index, (template, line) in enumerate(templates):
        if char == "\r" and "{c}\n" in template:
            continue  # CRLF: an ordinary line end, tested below
        # A fresh name each time: rewriting one file in place is slow on ext4.
        path = tmp_path / f"billing-{ord(char):x}-{index}.golden"
        path.write_bytes(template.format(c=char).encode("utf-8"))
        for read in readers if index == 0 else readers[:1]:
            with pytest.raises(FileRefused) as caught:
                read(path)  # (the failing character is in the traceback's locals)
            assert caught.value.reason == "bad_character"
            assert caught.value.line == line
            assert f"U+{ord(char):04X}" in str(caught.value)


def test_only_newline_ends_a_golden_line(tmp_path: Path) -> None:
    path = tmp_path / "billing.golden"
    path.write_bytes(b"# reviewed \xc3\xa9t\xc3\xa9\r\n\tfinish \r\nrefund")
    assert read_golden(path) == ("finish", "refund")
    assert_golden(billing(), path)


def test_the_cli_refuses_a_golden_comment_that_hides_a_name(tmp_path: Path) -> None:
    golden = tmp_path / "billing.golden"
    golden.write_text("finish\nlookup_invoice\n# removed in review\u2028refund\n")
    for error_format in ("text", "json"):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "boring_dispatch",
                "names",
                "--registry",
                BILLING_SPEC,
                "--golden",
                str(golden),
                "--error-format",
                error_format,
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 2, done.stderr
        assert done.stdout == ""
        assert "Traceback" not in done.stderr
        if error_format == "text":
            assert done.stderr.startswith("error: cannot read the golden file: line 3: U+2028")
        else:
            error = json.loads(done.stderr)
            assert error["code"] == "unreadable_file"
            assert (error["file"], error["reason"], error["line"]) == ("golden", "bad_character", 3)


@pytest.mark.parametrize("category", CATEGORIES)
def test_a_trace_line_is_split_and_judged_like_a_golden_line(category: str, tmp_path: Path) -> None:
    from boring_dispatch.registry.replay import FileRefused

    good = json.dumps({"name": "finish", "args": {"answer": "a"}})
    for char in FAMILY[category]:
        hidden = '{"name": "finish", "args": {"answer": "a{c}b"}}'.replace("{c}", char)
        trace = tmp_path / f"trace-{ord(char):x}.jsonl"
        trace.write_bytes(f"{good}\n{hidden}\n{good}\n".encode())
        with pytest.raises(FileRefused) as caught:
            replay(billing(), trace)
        assert (caught.value.reason, caught.value.line) == ("bad_character", 2), names(char)


def test_a_crlf_trace_replays_like_an_lf_trace(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    line = json.dumps({"name": "finish", "args": {"answer": "a"}})
    trace.write_bytes(f"{line}\r\n{line}\r\n".encode())
    report = replay(billing(), trace)
    assert report.ok
    assert len(report.lines) == 2


# --------------------------------------------------------------------------- #
# Finding 2 (readers): a torn last record is skipped and reported


@pytest.mark.parametrize("cut", [1, 5, 17, 30, 44])
def test_replay_skips_and_reports_a_torn_last_record(cut: int, tmp_path: Path) -> None:
    line = json.dumps({"name": "finish", "args": {"answer": "abcdefghijklmnop"}})
    assert cut < len(line) - 1
    trace = tmp_path / "trace.jsonl"
    trace.write_text(f"{line}\n{line}\n{line[:cut]}")
    report = replay(billing(), trace)
    assert [entry.line_number for entry in report.lines] == [1, 2]
    assert report.torn == (3,)
    assert report.ok
    if cut != 17:
        return  # the CLI reads through the same function: one run is enough
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "boring_dispatch",
            "replay",
            "--registry",
            BILLING_SPEC,
            "--live",
            str(trace),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 2
    assert done.stderr.startswith("warning: line 3: a torn last record")


def test_a_complete_last_record_without_a_newline_is_replayed(tmp_path: Path) -> None:
    line = json.dumps({"name": "finish", "args": {"answer": "a"}})
    trace = tmp_path / "trace.jsonl"
    trace.write_text(f"{line}\n{line}")
    report = replay(billing(), trace)
    assert len(report.lines) == 2
    assert report.torn == ()


# --------------------------------------------------------------------------- #
# Finding 4: only regular files, size-capped


def make(kind: str, path: Path) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev_zero":
        path.symlink_to("/dev/zero")
    elif kind == "dev_urandom":
        path.symlink_to("/dev/urandom")
    elif kind == "directory":
        path.mkdir()
    elif kind == "socket":
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        server.close()
    elif kind == "huge":
        with path.open("wb") as handle:  # sparse: 65 MiB of nothing, no disk used
            handle.truncate((64 << 20) + 1)
    elif kind == "world_writable":
        path.write_text("finish\nrefund\n")
        path.chmod(0o666)
    else:
        raise AssertionError(kind)


EXPECTED = {
    "fifo": "not_regular",
    "dev_zero": "not_regular",
    "dev_urandom": "not_regular",
    "directory": "not_regular",
    "socket": "not_regular",
    "huge": "too_large",
    "world_writable": "unsafe_mode",
}

PROBE = """
import json
from boring_dispatch import Registry, Tool
from boring_dispatch.golden import read_golden
from boring_dispatch.registry.replay import replay
from boring_dispatch.testing import assert_golden
def finish(answer: str) -> dict:
    return {{"answer": answer}}
def billing():
    return Registry({{"finish": Tool(finish, description="Finish.")}})
out = {{}}
for name, read in (("read_golden", read_golden), ("replay", lambda p: replay(billing(), p)),
                   ("assert_golden", lambda p: assert_golden(billing(), p))):
    try:
        read({path!r})
    except Exception as error:
        out[name] = [type(error).__name__, getattr(error, "reason", None)]
    else:
        out[name] = None
print(json.dumps(out))
"""


def _limited() -> None:
    # An unfixed reader of /dev/zero would eat memory: fail fast instead of swapping.
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


@pytest.mark.parametrize("kind", ["directory", "socket", "huge", "world_writable"])
def test_the_library_refuses_what_is_not_a_small_regular_file(kind: str, tmp_path: Path) -> None:
    from boring_dispatch.golden import FileRefused

    path = tmp_path / "names.golden"
    make(kind, path)
    readers: list[Callable[[Path], object]] = [
        read_golden,
        lambda p: replay(billing(), p),
        lambda p: assert_golden(billing(), p),
    ]
    for read in readers:
        with pytest.raises(FileRefused) as caught:
            read(path)
        assert caught.value.reason == EXPECTED[kind]


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "dev_urandom"])
def test_the_library_neither_blocks_on_nor_reads_an_endless_file(kind: str, tmp_path: Path) -> None:
    # In a child process: an unfixed read of a FIFO blocks, of /dev/zero never ends.
    path = tmp_path / "names.golden"
    make(kind, path)
    code = PROBE.format(path=str(path))
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=BOUND,
        check=False,
        preexec_fn=_limited,  # no threads run in the child before exec
    )
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)
    expected = ["FileRefused", EXPECTED[kind]]
    assert outcome == {"read_golden": expected, "replay": expected, "assert_golden": expected}


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "huge"])
@pytest.mark.parametrize("command", ["names", "replay"])
def test_the_cli_refuses_what_is_not_a_small_regular_file(
    kind: str, command: str, tmp_path: Path
) -> None:
    path = tmp_path / "file"
    make(kind, path)
    args: Callable[[str], list[str]] = (
        (lambda f: ["names", "--registry", BILLING_SPEC, "--golden", f])
        if command == "names"
        else (lambda f: ["replay", "--registry", BILLING_SPEC, "--live", f])
    )
    done = subprocess.run(
        [sys.executable, "-m", "boring_dispatch", *args(str(path)), "--error-format", "json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=BOUND,
        check=False,
        preexec_fn=_limited,  # no threads run in the child before exec
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    error = json.loads(done.stderr)
    assert error["code"] == "unreadable_file"
    assert error["file"] == ("golden" if command == "names" else "trace")
    assert error["reason"] == EXPECTED[kind]
