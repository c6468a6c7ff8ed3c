"""Text logs: exception text can neither forge a record nor steer a terminal.

Finding 5 of the files group: a handler's exception message went verbatim into
the multi-line ``internal_error`` log record, so a newline could start a forged
record and an ESC sequence could recolour or rewrite the operator's terminal.
"""

from __future__ import annotations

import io
import logging
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from boring_dispatch import Registry, Tool
from boring_dispatch.repository.repository import Repository
from boring_dispatch.surfaces.mcp._calls import RepositoryCalls
from kits.mcp import projection, write_tools_repository

FORGED = "internal_error surface=billing tool=refund correlation_id=01FORGED0000000000000000000"
HOSTILE = [
    f"boom\n{FORGED}",
    f"boom\r\n{FORGED}",
    f"boom\r{FORGED}",
    f"boom\u2028{FORGED}",
    f"boom\u2029{FORGED}",
    f"boom\x85{FORGED}",
    f"boom\x0b\x0c\x1c\x1d\x1e{FORGED}",
    "boom \x1b[2J\x1b[1;1H\x1b[32mall good\x1b[0m",  # clear screen, move, recolour
    "boom \x9b31m C1 CSI",
    "boom \x1b]0;title\x07 OSC",
    "boom \u202egnp.exe\u202c and \u2066isolate\u2069 and \u200e\u200f\u061c",
    "boom \u200b\u200c\u200d\u2060\ufeff invisible",
    "boom \x00\x7f nul and del",
    "boom \\n looks like an escape",
    "boom \U000e0041 tag and \ue000 private and \U0010ffff",
]
SURFACE = "billing"
CANARY = "CANARY-exception-text-4f1"
DANGEROUS = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


def unsafe(text: str) -> list[str]:
    return [f"U+{ord(c):04X}" for c in text if unicodedata.category(c) in DANGEROUS]


@pytest.fixture
def log_lines() -> Iterator[io.StringIO]:
    """The ``boring_dispatch`` logger written through a real stream handler, as in production."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))
    logger = logging.getLogger("boring_dispatch")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield stream
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def crash_with(message: str) -> Registry:
    def crash(key: str) -> dict[str, str]:
        raise RuntimeError(message + key)

    return Registry({"crash": Tool(crash, description="Crash.")}, name=SURFACE)


def check_one_record(stream: io.StringIO, correlation_id: str) -> str:
    text = stream.getvalue()
    assert text.endswith("\n")
    lines = text[:-1].split("\n")
    assert len(lines) == 1, "a record is exactly one line"
    [line] = lines
    assert unsafe(line) == []
    head = f"ERROR boring_dispatch internal_error surface={SURFACE} tool=crash"
    assert line.startswith(f"{head} correlation_id={correlation_id} traceback=")
    return line


@pytest.mark.parametrize("message", HOSTILE)
def test_a_handlers_exception_text_stays_inside_its_one_log_line(
    message: str, log_lines: io.StringIO
) -> None:
    observation = crash_with(message).dispatch("crash", {"key": "k"})
    assert observation.error is not None
    assert observation.error.correlation_id is not None
    line = check_one_record(log_lines, observation.error.correlation_id)
    assert "RuntimeError" in line
    assert "Traceback (most recent call last)" in line


@given(st.text(max_size=60))
def test_any_exception_text_makes_one_safe_line(message: str) -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))
    logger = logging.getLogger("boring_dispatch")
    logger.addHandler(handler)
    try:
        observation = crash_with(message).dispatch("crash", {"key": "k"})
    finally:
        logger.removeHandler(handler)
    assert observation.error is not None
    assert observation.error.correlation_id is not None
    check_one_record(stream, observation.error.correlation_id)


def test_the_escape_is_unambiguous() -> None:
    from boring_dispatch.observe._logtext import log_text

    # A backslash is doubled, so a message cannot write what looks like an escaped newline.
    assert log_text("a\nb") != log_text("a\\nb")
    assert log_text("a\\nb") == "a\\\\nb"
    assert log_text("\x1b[31m") == "\\x1b[31m"
    assert log_text("\u202e") == "\\u202e"
    assert log_text("caf\u00e9 \u0436 \u4e2d \U0001f600") == "caf\u00e9 \u0436 \u4e2d \U0001f600"


def test_an_mcp_internal_error_logs_one_safe_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, log_lines: io.StringIO
) -> None:
    repository = Repository.open(write_tools_repository(tmp_path))
    # A type name is any string: one with a newline and an ESC sequence.
    hostile_type = type(f"Bad\n{FORGED}\x1b[31m", (RuntimeError,), {})

    def broken(*_: object, **__: object) -> object:
        raise hostile_type(CANARY)

    monkeypatch.setattr(Repository, "resolve_live", broken)  # the live path of MCP calls
    RepositoryCalls(repository).call(
        "invoke_security_0", projection("echo", positionals=["x"]), trace_id="t" * 32
    )
    text = log_lines.getvalue()
    lines = text[:-1].split("\n")
    assert len(lines) == 1
    assert unsafe(lines[0]) == []
    assert "dispatcher mcp: internal_error correlation_id=" in lines[0]
    assert "broken" in lines[0]
    assert CANARY not in lines[0]


def test_a_failing_sink_with_a_hostile_type_name_logs_one_safe_line(
    log_lines: io.StringIO,
) -> None:
    def record(self: object, event: object) -> None:
        raise ZeroDivisionError

    hostile = type(f"Sink\n{FORGED}\x1b[31m", (), {"record": record})

    def echo(key: str) -> dict[str, str]:
        return {"key": key}

    registry = Registry({"echo": Tool(echo, description="Echo.")}, sinks=[hostile()])
    logging.getLogger("boring_dispatch").setLevel(logging.WARNING)
    assert registry.dispatch("echo", {"key": "k"}).ok
    text = log_lines.getvalue()
    # Two records (the failed record, then the lost minimal record), one line each.
    assert text.count("\n") == 2
    assert all(unsafe(line) == [] for line in text.split("\n"))
    assert "ZeroDivisionError" in text
