"""Trace ids and best-effort spans: identifiers only, one JSON line each, never a failure."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from boring_dispatch.observe.trace import (
    Span,
    default_logs_dir,
    new_trace_id,
    span,
    spans_path,
    valid_trace_id,
    write_span,
)


@pytest.fixture
def logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "logs"
    monkeypatch.setenv("ASSISTANT_LOGS", str(directory))
    monkeypatch.delenv("BORING_DISPATCH_OTEL", raising=False)
    return directory


def _lines(logs: Path) -> list[dict[str, object]]:
    files = sorted((logs / "dispatch").glob("spans-*.jsonl"))
    return [json.loads(line) for path in files for line in path.read_text().splitlines()]


def test_trace_ids_are_32_lowercase_hex_characters_and_distinct() -> None:
    ids = {new_trace_id() for _ in range(50)}
    assert len(ids) == 50
    assert all(valid_trace_id(trace_id) for trace_id in ids)
    assert not valid_trace_id("A" * 32)
    assert not valid_trace_id("0" * 31)
    assert not valid_trace_id(None)


def test_a_span_is_one_json_line_in_the_days_file_under_assistant_logs(logs: Path) -> None:
    trace_id = new_trace_id()
    with span("dispatcher.process", trace_id, interface_id="m.interface.x", module_id="m"):
        pass
    day = time.strftime("%Y%m%d", time.gmtime())
    path = logs / "dispatch" / f"spans-{day}.jsonl"
    (line,) = _lines(logs)
    assert line["trace_id"] == trace_id
    assert line["name"] == "dispatcher.process"
    assert line["status"] == "ok"
    assert line["interface_id"] == "m.interface.x"
    assert line["module_id"] == "m"
    assert isinstance(line["duration_ms"], float)
    assert line["duration_ms"] >= 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_the_span_record_has_no_field_that_could_hold_arguments_or_text() -> None:
    assert list(Span.__match_args__) == [
        "trace_id",
        "name",
        "start",
        "duration_ms",
        "status",
        "interface_id",
        "module_id",
        "caller_module_id",
    ]


def test_an_exception_is_recorded_as_a_status_code_without_its_text(logs: Path) -> None:
    canary = "canary-secret-in-exception-text"
    with pytest.raises(RuntimeError), span("gateway.interface", new_trace_id()):
        raise RuntimeError(canary)
    (line,) = _lines(logs)
    assert line["status"] == "exception"
    text = "".join(path.read_text() for path in (logs / "dispatch").iterdir())
    assert canary not in text


def test_system_exit_is_recorded_as_its_own_status(logs: Path) -> None:
    with pytest.raises(SystemExit), span("gateway.interface", new_trace_id()):
        raise SystemExit(2)
    assert _lines(logs)[0]["status"] == "system_exit"


def test_the_status_set_by_the_block_is_recorded(logs: Path) -> None:
    with span("gateway.interface", new_trace_id()) as timer:
        timer.status = "exit_nonzero"
    assert _lines(logs)[0]["status"] == "exit_nonzero"


def test_values_that_are_not_identifiers_are_replaced(logs: Path) -> None:
    with span(
        "dispatcher.process",
        new_trace_id(),
        interface_id="/home/user/secret path",
        module_id="https://user:pw@example.com",
        caller_module_id="a\nb",
    ) as timer:
        timer.status = "Bad Status With Text"
    (line,) = _lines(logs)
    assert line["interface_id"] == "?"
    assert line["module_id"] == "?"
    assert line["caller_module_id"] == "?"
    assert line["status"] == "?"


def test_nothing_is_written_without_a_valid_trace_id(logs: Path) -> None:
    with span("dispatcher.process", None):
        pass
    with span("dispatcher.process", "not-a-trace-id"):
        pass
    assert not (logs / "dispatch").exists()


def test_a_symlink_at_the_span_file_is_not_followed(logs: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched\n")
    path = spans_path()
    path.parent.mkdir(parents=True)
    path.symlink_to(victim)
    with span("dispatcher.process", new_trace_id()):
        pass
    assert victim.read_text() == "untouched\n"


def test_a_fifo_at_the_span_file_neither_blocks_nor_fails(logs: Path) -> None:
    path = spans_path()
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    with span("dispatcher.process", new_trace_id()):
        pass
    assert stat.S_ISFIFO(path.lstat().st_mode)


def test_an_unwritable_logs_location_never_fails_the_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("ASSISTANT_LOGS", str(blocker))
    with span("dispatcher.process", new_trace_id()) as timer:
        timer.status = "ok"
    write_span(Span(new_trace_id(), "x", time.time(), 1.0, "ok"))
    assert blocker.read_text() == ""


def test_the_default_location_is_under_the_home_state_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ASSISTANT_LOGS", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_logs_dir() == tmp_path / ".local" / "state" / "boring-dispatch" / "logs"
    assert spans_path().parent == default_logs_dir() / "dispatch"
    monkeypatch.setenv("ASSISTANT_LOGS", "relative/dir")
    assert spans_path().parent == default_logs_dir() / "dispatch"


def _python(code: str, env: dict[str, str]) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    value = json.loads(done.stdout.splitlines()[-1])
    assert isinstance(value, dict)
    return value


def test_opentelemetry_is_never_imported_unless_enabled(tmp_path: Path) -> None:
    code = """
        import json, sys
        from boring_dispatch.observe.trace import new_trace_id, span
        with span("dispatcher.process", new_trace_id()):
            pass
        print(json.dumps({"otel": sorted(m for m in sys.modules if m.startswith("opentelemetry"))}))
    """
    env = {"PATH": "/usr/bin:/bin", "ASSISTANT_LOGS": str(tmp_path)}
    assert _python(code, env)["otel"] == []


def test_spans_are_also_emitted_through_opentelemetry_when_enabled(tmp_path: Path) -> None:
    pytest.importorskip("opentelemetry.trace")
    code = """
        import json
        from opentelemetry import trace

        calls = []

        class RecordingTracer(trace.Tracer):
            def start_span(self, name, context=None, kind=None, attributes=None,
                           links=None, start_time=None, record_exception=True,
                           set_status_on_exception=True):
                calls.append({"name": name, "start": start_time, "attributes": dict(attributes)})
                return trace.NonRecordingSpan(trace.INVALID_SPAN_CONTEXT)

            def start_as_current_span(self, *args, **kwargs):
                raise NotImplementedError

        class RecordingProvider(trace.TracerProvider):
            def get_tracer(self, *args, **kwargs):
                return RecordingTracer()

        trace.set_tracer_provider(RecordingProvider())
        from boring_dispatch.observe.trace import new_trace_id, span
        with span("gateway.interface", new_trace_id(), module_id="m") as timer:
            timer.status = "ok"
        print(json.dumps({"calls": calls}))
    """
    env = {"PATH": "/usr/bin:/bin", "ASSISTANT_LOGS": str(tmp_path), "BORING_DISPATCH_OTEL": "1"}
    calls = _python(code, env)["calls"]
    assert isinstance(calls, list)
    (call,) = calls
    assert call["name"] == "gateway.interface"
    assert call["attributes"]["boring_dispatch.module_id"] == "m"
    assert call["attributes"]["boring_dispatch.status"] == "ok"
    assert len(_lines(tmp_path)) == 1


def test_a_failing_opentelemetry_provider_never_fails_the_call(tmp_path: Path) -> None:
    pytest.importorskip("opentelemetry.trace")
    code = """
        import json
        from opentelemetry import trace

        class BrokenProvider(trace.TracerProvider):
            def get_tracer(self, *args, **kwargs):
                raise RuntimeError("exporter down")

        trace.set_tracer_provider(BrokenProvider())
        from boring_dispatch.observe.trace import new_trace_id, span
        with span("gateway.interface", new_trace_id()):
            value = 41 + 1
        print(json.dumps({"value": value}))
    """
    env = {"PATH": "/usr/bin:/bin", "ASSISTANT_LOGS": str(tmp_path), "BORING_DISPATCH_OTEL": "1"}
    assert _python(code, env)["value"] == 42
