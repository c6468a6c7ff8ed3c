from __future__ import annotations

import asyncio
import json
import logging
import stat
from datetime import datetime
from pathlib import Path
from typing import Annotated

import pytest

from boring_dispatch import Registry, Sensitive, Tool
from boring_dispatch.observe.audit import JsonLinesAuditSink, TraceRecorder
from boring_dispatch.observe.redact import PLACEHOLDER


def charge(account: str, api_token: Annotated[str, Sensitive]) -> dict[str, object]:
    if account == "crash":
        raise RuntimeError("boom")
    return {"account": account, "charged": True}


def get_job(job_id: int) -> dict[str, int]:
    return {"job_id": job_id}


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_audit_is_off_unless_configured(tmp_path: Path) -> None:
    registry = Registry({"charge": Tool(charge, description="Charge.")})
    registry.dispatch("charge", {"account": "a", "api_token": "t"})
    assert list(tmp_path.iterdir()) == []


def test_the_audit_sink_writes_one_redacted_line_per_call(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    with JsonLinesAuditSink(path) as sink:
        registry = Registry(
            {"charge": Tool(charge, description="Charge.")}, name="billing", sinks=[sink]
        )
        registry.dispatch("charge", {"account": "a-1", "api_token": "tok-1"})
        registry.dispatch("charge", {"account": 5, "api_token": "tok-2"})
        registry.dispatch("run_shell", {"command": "id"})
        failed = registry.dispatch("charge", {"account": "crash", "api_token": "tok-3"})
        registry.dispatch_json("{bad")
    written = lines(path)
    assert [line["outcome"] for line in written] == [
        "ok",
        "invalid_arguments",
        "unknown_tool",
        "internal_error",
        "invalid_request",
    ]
    first = written[0]
    assert set(first) == {"time", "surface", "tool", "outcome", "duration_ms", "args"}
    assert first["surface"] == "billing"
    assert first["tool"] == "charge"
    assert first["args"] == {"account": "a-1", "api_token": PLACEHOLDER}
    assert isinstance(first["duration_ms"], float)
    assert datetime.fromisoformat(str(first["time"])).tzinfo is not None
    assert written[1]["args"] == {"account": 5, "api_token": PLACEHOLDER}
    assert written[2]["args"] == {"command": PLACEHOLDER}
    assert failed.error is not None
    assert written[3]["correlation_id"] == failed.error.correlation_id
    assert written[4]["tool"] is None
    assert written[4]["args"] is None
    assert "tok-" not in path.read_text(encoding="utf-8")


def test_audit_files_are_private_and_appended(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_text('{"earlier": true}\n', encoding="utf-8")
    path.chmod(0o600)
    with JsonLinesAuditSink(path) as sink:
        Registry({"charge": Tool(charge, description="C.")}, sinks=[sink]).dispatch("x", {})
    assert len(lines(path)) == 2
    fresh = tmp_path / "fresh.jsonl"
    JsonLinesAuditSink(fresh).close()
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o600


def test_a_closed_sink_is_logged_and_the_call_still_answers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sink = JsonLinesAuditSink(tmp_path / "audit.jsonl")
    sink.close()
    sink.close()
    registry = Registry({"charge": Tool(charge, description="C.")}, sinks=[sink])
    caplog.set_level(logging.WARNING, logger="boring_dispatch")
    assert registry.dispatch("charge", {"account": "a", "api_token": "t"}).ok
    assert "audit sink JsonLinesAuditSink failed: ValueError" in caplog.text


def test_the_recorder_writes_replayable_redacted_calls(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    with TraceRecorder(path) as recorder:
        registry = Registry({"charge": Tool(charge, description="Charge.")}, sinks=[recorder])
        registry.dispatch("charge", {"account": "a-1", "api_token": "tok-1"})
        registry.dispatch_json('{"name": 1}')
        registry.dispatch("nope", {"x": "tok-2"})
    assert lines(path) == [
        {
            "name": "charge",
            "args": {"account": "a-1", "api_token": PLACEHOLDER},
            "observation": {"ok": True, "result": {"account": "a-1", "charged": True}},
        },
        {
            "name": "nope",
            "args": {"x": PLACEHOLDER},
            "observation": {
                "ok": False,
                "error": {"code": "unknown_tool", "message": "no tool named 'nope'"},
            },
        },
    ]


def test_a_result_echoing_a_secret_is_withheld_whole_for_sinks_only(tmp_path: Path) -> None:
    def echo(api_token: Annotated[str, Sensitive]) -> dict[str, str]:
        return {"seen": f"token={api_token}"}

    path = tmp_path / "trace.jsonl"
    with TraceRecorder(path) as recorder:
        registry = Registry({"echo": Tool(echo, description="Echo.")}, sinks=[recorder])
        observation = registry.dispatch("echo", {"api_token": "tok-9"})
    assert observation.result == {"seen": "token=tok-9"}
    assert lines(path)[0]["observation"] == {"ok": True, "result": PLACEHOLDER}


class _Leaving(BaseException):
    """A custom BaseException, as a sink's own code might raise."""


_BASE_EXCEPTIONS: list[type[BaseException]] = [
    SystemExit,
    KeyboardInterrupt,
    GeneratorExit,
    asyncio.CancelledError,
    _Leaving,
]


@pytest.mark.parametrize("kind", _BASE_EXCEPTIONS, ids=lambda k: k.__name__)
@pytest.mark.parametrize("always", [False, True], ids=["once", "always"])
def test_a_sink_raising_any_base_exception_never_escapes_dispatch(
    kind: type[BaseException], always: bool
) -> None:
    """A sink is "a sink that fails" whatever it raises: the observation stands, and a sink
    that cannot record even the minimal record stops the table (fail closed)."""
    calls: list[int] = []

    class Failing:
        def record(self, _event: object) -> None:
            calls.append(1)
            if always or len(calls) == 1:
                raise kind("sink fault")

    table = Registry({"get_job": Tool(get_job, description="Look up.")}, sinks=[Failing()])
    first = table.dispatch("get_job", {"job_id": 1})
    assert first.ok
    second = table.dispatch("get_job", {"job_id": 2})
    assert second.code == ("internal_error" if always else "ok")
