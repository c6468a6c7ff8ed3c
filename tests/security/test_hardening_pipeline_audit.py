"""Finding 1 (second half): an audit write that fails never leaves a call unrecorded silently.

The decision (docs/security.md): the record is a JSON-safe snapshot,
so its content cannot fail the sink. When a sink still fails, the pipeline
offers it a minimal record (no arguments, no result, no message); when that
fails too, it logs an ERROR naming the lost record, marks the sink failing,
and calls no handler of the table until the sink records again: those calls
are ``internal_error`` and their records are offered to every sink, which is
how a recovered sink is noticed. The call during which the sink broke has
already run: it is logged as lost, never silently.

Real failing targets: ``/dev/full`` (every write is ENOSPC) and a FIFO whose
reader went away (every write is EPIPE); plus sinks that raise.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from boring_dispatch import Registry, Tool
from boring_dispatch.observe.audit import AuditEvent, JsonLinesAuditSink, TraceRecorder
from boring_dispatch.registry.replay import replay_lines
from boring_dispatch.testing import CapturingSink
from hardening_pipeline_kit import captured_logs

RAN: list[int] = []


def add(a: int, b: int) -> int:
    RAN.append(a)
    return a + b


def anything(value: Any) -> str:
    RAN.append(0)
    return "ok"


def table(*sinks: object) -> Registry:
    return Registry(
        {
            "add": Tool(add, description="Add."),
            "anything": Tool(anything, description="Anything."),
        },
        name="audited",
        sinks=sinks,  # type: ignore[arg-type]
    )


@pytest.fixture
def full_sink(tiny_fs: Path) -> Iterator[JsonLinesAuditSink]:
    """A sink on a regular file of a real filesystem with no space left."""
    sink = JsonLinesAuditSink(tiny_fs / "audit.jsonl")
    filler = os.open(tiny_fs / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        with contextlib.suppress(OSError):  # ENOSPC ends the loop
            while os.write(filler, b"x" * 4096):
                pass
    finally:
        os.close(filler)
    yield sink
    sink.close()


def _errors(records: list[logging.LogRecord]) -> list[str]:
    return [r.getMessage() for r in records if r.levelno >= logging.ERROR]


@pytest.mark.parametrize("kind", ["full", "closed"])
def test_a_sink_whose_target_cannot_be_written_stops_further_calls_and_says_so(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    if kind == "closed":
        sink = JsonLinesAuditSink(tmp_path / "audit.jsonl")
        sink.close()
    else:
        sink = request.getfixturevalue(f"{kind}_sink")
    capture = CapturingSink()
    registry = table(sink, capture)
    RAN.clear()
    with captured_logs() as records:
        first = registry.dispatch("add", {"a": 1, "b": 2})
        second = registry.dispatch("add", {"a": 3, "b": 4})
        from_json = registry.dispatch_json('{"name": "add", "args": {"a": 5, "b": 6}}')
        restricted = registry.restrict({"add"}).dispatch("add", {"a": 7, "b": 8})
    # The first call ran before anything could know: it is answered, and its loss is an ERROR.
    assert first.ok
    assert first.result == 3
    lost = [m for m in _errors(records) if m.startswith("audit record lost")]
    assert lost, _errors(records)
    assert "outcome=ok" in lost[0]
    assert "audited" in lost[0]
    # Later calls are refused before their handler while the sink keeps failing.
    for refused in (second, from_json, restricted):
        assert refused.code == "internal_error"
    assert RAN == [1]
    refusals = [m for m in _errors(records) if "call refused before the handler" in m]
    assert len(refusals) == 3
    # The other sink saw every call, refusals included.
    assert capture.outcomes() == ["ok", "internal_error", "internal_error", "internal_error"]


class Flaky:
    """Fails ``failures`` records in a row (as a full disk would), then works."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.events: list[AuditEvent] = []

    def record(self, event: AuditEvent) -> None:
        if self.failures > 0:
            self.failures -= 1
            raise OSError(errno.ENOSPC, "No space left on device")
        self.events.append(event)


def test_a_recovered_sink_is_noticed_by_the_refused_calls_record() -> None:
    sink = Flaky(failures=2)  # the full record and the minimal record of the first call
    registry = table(sink)
    RAN.clear()
    outcomes = [registry.dispatch("add", {"a": n, "b": 0}).code for n in range(4)]
    assert outcomes == ["ok", "internal_error", "ok", "ok"]
    assert RAN == [0, 2, 3]
    assert [event.outcome for event in sink.events] == ["internal_error", "ok", "ok"]


class ChokesOnContent:
    """Refuses any event whose arguments are not None (a sink with a narrow format)."""

    def __init__(self) -> None:
        self.events: list[AuditEvent] = []

    def record(self, event: AuditEvent) -> None:
        if event.args is not None and "[not recorded]" not in event.args:
            raise TypeError("cannot store these arguments")
        self.events.append(event)


def test_a_sink_that_refuses_the_full_record_gets_a_minimal_one_and_calls_go_on() -> None:
    sink = ChokesOnContent()
    registry = table(sink)
    RAN.clear()
    with captured_logs() as records:
        outcomes = [registry.dispatch("add", {"a": n, "b": 1}).code for n in range(3)]
    assert outcomes == ["ok", "ok", "ok"]
    assert RAN == [0, 1, 2]
    assert [event.outcome for event in sink.events] == ["ok", "ok", "ok"]
    assert all(event.args == {"[not recorded]": "[not recorded]"} for event in sink.events)
    assert all(event.observation.result == "[not recorded]" for event in sink.events)
    assert _errors(records) == []
    assert sum("wrote a minimal record" in r.getMessage() for r in records) == 3


def test_a_minimal_trace_line_replays_as_a_difference(tmp_path: Path) -> None:
    class Refuses:
        def __init__(self, inner: TraceRecorder) -> None:
            self.inner = inner

        def record(self, event: AuditEvent) -> None:
            if event.args is not None and "[not recorded]" not in event.args:
                raise ValueError("narrow format")
            self.inner.record(event)

    path = tmp_path / "trace.jsonl"
    with TraceRecorder(path) as recorder:
        table(Refuses(recorder)).dispatch("add", {"a": 1, "b": 2})
    [line] = replay_lines(table(), path.read_text(encoding="utf-8").splitlines())
    assert line.differs


# Python values a caller can send that the plain audit encoder could not write.
def _cyclic() -> list[object]:
    cycle: list[object] = []
    cycle.append(cycle)
    return cycle


UNWRITABLE = [
    pytest.param(float("inf"), id="inf"),
    pytest.param(float("nan"), id="nan"),
    pytest.param({(1, 2): "tuple key"}, id="tuple-key"),
    pytest.param(_cyclic(), id="cycle"),
    pytest.param({"deep": [[[[[[[[[[float("-inf")]]]]]]]]]]}, id="deep-inf"),
    pytest.param({1.5: float("nan")}, id="float-key"),
]


@pytest.mark.parametrize("value", UNWRITABLE)
@pytest.mark.parametrize("tool", ["add", "anything", "missing"])
def test_every_call_with_unwritable_argument_values_gets_its_full_audit_line(
    value: object, tool: str, tmp_path: Path
) -> None:
    path = tmp_path / "audit.jsonl"
    RAN.clear()
    with JsonLinesAuditSink(path) as sink, captured_logs() as records:
        registry = table(sink)
        observation = registry.dispatch(tool, {"a": value, "b": 1, "value": value})
        after = registry.dispatch("add", {"a": 1, "b": 1})
    assert observation.code in {"invalid_arguments", "unknown_tool"}
    assert after.ok
    written = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [line["outcome"] for line in written] == [observation.code, "ok"]
    assert set(written[0]["args"]) == {"a", "b", "value"}
    assert [r.getMessage() for r in records if r.levelno >= logging.WARNING] == []


@pytest.mark.parametrize(
    "value",
    [
        pytest.param({(1, 2): "tuple key"}, id="tuple-key"),
        pytest.param(_cyclic(), id="cycle"),
        pytest.param({"set": {1, 2}, "bytes": b"x", "object": object()}, id="not-json"),
    ],
)
def test_a_call_with_values_that_are_not_json_data_is_refused_and_recorded_in_full(
    value: object, tmp_path: Path
) -> None:
    # The table takes JSON data only: such values never reach a handler, and the refusal
    # is written whole (the record holds a placeholder where a value cannot be written).
    path = tmp_path / "audit.jsonl"
    RAN.clear()
    with JsonLinesAuditSink(path) as sink, captured_logs() as records:
        observation = table(sink).dispatch("anything", {"value": value})
    assert observation.code == "invalid_arguments"
    assert RAN == []
    [line] = [json.loads(text) for text in path.read_text(encoding="utf-8").splitlines()]
    assert line["outcome"] == "invalid_arguments"
    assert "value" in line["args"]
    assert [r.getMessage() for r in records if r.levelno >= logging.WARNING] == []
