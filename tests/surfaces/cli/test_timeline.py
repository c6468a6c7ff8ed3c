"""``dispatcher timeline`` on sessions written in the hosts' exact shapes from real MCP calls.

One repository server is shared by the module; its calls are real, their
trace ids and spans are real, and the session files around them are written
the way Codex and Claude Code write theirs (``kits.sessions``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Final

import pytest

from boring_dispatch.observe.trace import valid_trace_id
from kits.mcp import McpServer, projection, read_spans, write_tools_repository
from kits.plain_env import plain_environment
from kits.sessions import HostCall, Turn, host_call, write_claude, write_codex

REQUIRED: Final = (
    "call_id",
    "tool",
    "trace_id",
    "called_at",
    "decision_ms",
    "execution_ms",
    "dispatcher_ms",
    "gateway_ms",
    "response_ms",
)


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("logs")


@pytest.fixture(scope="module")
def calls(tmp_path_factory: pytest.TempPathFactory, logs: Path) -> list[HostCall]:
    """Real calls: two that ran, one that failed, one refused (private), one dry run."""
    config = write_tools_repository(tmp_path_factory.mktemp("repo"))
    errlog = (tmp_path_factory.mktemp("stderr") / "server.log").open("w+", encoding="utf-8")
    with (
        errlog,
        McpServer(
            ["mcp", "--config", str(config)],
            env={"ASSISTANT_LOGS": str(logs)},
            cwd=config.parent,
            errlog=errlog,
        ) as server,
    ):
        return [
            host_call(server, "invoke_security_0", projection("streams-machine")),
            host_call(server, "invoke_security_0", projection("nested")),
            host_call(server, "invoke_security_0", projection("fail")),
            host_call(server, "invoke_security_0", projection("private")),
            host_call(server, "invoke_security_0", projection("echo", dry_run=True)),
        ]


def _turns(calls: list[HostCall]) -> list[Turn]:
    """Turn 1: three calls, then the answer; turn 2: two calls, then the answer."""
    first, second = calls[:3], calls[3:]
    return [
        Turn(first[0].called_at - 0.8, first, first[-1].returned_at + 1.5),
        Turn(second[0].called_at - 0.3, second, second[-1].returned_at + 0.2),
    ]


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "boring_dispatch", "timeline", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={**plain_environment(), **(env or {})},
    )


@pytest.fixture(params=["codex", "codex-namespaced", "claude"])
def session(request: pytest.FixtureRequest, tmp_path: Path, calls: list[HostCall]) -> Path:
    if request.param == "claude":
        return write_claude(tmp_path / "projects" / "-work-project" / "s.jsonl", _turns(calls))
    return write_codex(
        tmp_path / "sessions" / "2026" / "12" / "01" / "rollout-2026-12-01T10-00-00-x.jsonl",
        _turns(calls),
        namespaced=request.param == "codex-namespaced",
    )


def _json(session: Path, logs: Path) -> dict[str, Any]:
    done = _run(str(session), "--logs", str(logs), "--format", "json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert isinstance(result, dict)
    return result


def test_every_result_carries_its_trace_id_in_meta(calls: list[HostCall]) -> None:
    for call in calls:
        structured = call.wire["structuredContent"]["result"]["dispatcher"]
        if structured.get("dry_run") is not None:
            assert "_meta" not in call.wire  # a dry run has no trace id
            continue
        assert valid_trace_id(call.trace_id)
        assert call.trace_id == structured["trace_id"]
    assert len({call.trace_id for call in calls[:4]}) == 4


def test_json_has_every_call_with_the_three_times(
    session: Path, logs: Path, calls: list[HostCall]
) -> None:
    result = _json(session, logs)
    rows = result["calls"]
    assert [row["call_id"] for row in rows] == [call.call_id for call in calls]
    for row, call in zip(rows, calls, strict=True):
        assert set(REQUIRED) <= set(row)
        assert row["tool"] == "invoke_security_0"
        assert row["trace_id"] == call.trace_id
        assert row["called_at"].endswith("Z")
        assert row["execution_ms"] == pytest.approx(
            (call.returned_at - call.called_at) * 1000, abs=2
        )
        assert row["decision_ms"] >= 0
    # The first call's decision starts at the person's message; the others at the previous output.
    assert rows[0]["decision_ms"] == pytest.approx(800, abs=2)
    assert rows[1]["decision_ms"] == pytest.approx(
        (calls[1].called_at - calls[0].returned_at) * 1000, abs=2
    )
    # Response creation: the last call of each turn only.
    assert [row["response_ms"] is not None for row in rows] == [False, False, True, False, True]
    assert rows[2]["response_ms"] == pytest.approx(1500, abs=2)
    assert rows[4]["response_ms"] == pytest.approx(200, abs=2)


def test_dispatcher_figures_come_from_the_spans_of_the_trace(
    session: Path, logs: Path, calls: list[HostCall]
) -> None:
    rows = _json(session, logs)["calls"]
    spans = read_spans(logs)
    for row in rows[:3]:  # ran: every span exists
        mine = [s for s in spans if s["trace_id"] == row["trace_id"]]
        whole = next(s for s in mine if s["name"] == "mcp.tool_call")
        assert row["dispatcher_ms"] == pytest.approx(whole["duration_ms"], abs=0.001)
        gateways = [s for s in mine if s["name"] == "gateway.interface"]
        outer = min(gateways, key=lambda s: s["start"])
        assert row["gateway_ms"] == pytest.approx(outer["duration_ms"], abs=0.001)
        assert row["resolve_ms"] is not None
        assert row["process_ms"] is not None
        assert row["dispatcher_ms"] >= row["process_ms"] >= row["gateway_ms"]
        # Timestamps have millisecond precision: outside may be a hair below zero.
        assert row["outside_ms"] == pytest.approx(row["execution_ms"] - row["dispatcher_ms"])
        assert row["outside_ms"] > -2
    refused = rows[3]  # refused before launch: the whole call and resolve, no gateway
    assert refused["dispatcher_ms"] is not None
    assert refused["gateway_ms"] is None
    dry = rows[4]  # a dry run has no trace id: it still appears, with null figures
    assert dry["trace_id"] is None
    assert dry["dispatcher_ms"] is None
    assert dry["gateway_ms"] is None
    assert dry["execution_ms"] is not None


def test_text_marks_slow_stretches(session: Path, logs: Path) -> None:
    done = _run(str(session), "--logs", str(logs), "--slow", "1000")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("session ")
    assert "5 call(s) of dispatch" in lines[0]
    assert "4 joined to spans" in lines[0]
    assert lines[1].split()[:4] == ["#", "called", "at", "(UTC)"]
    rows = lines[2:7]
    assert "1,500.0!" in rows[2]  # turn 1's response creation: 1500 ms >= 1000
    assert "!" not in rows[4]
    relaxed = _run(str(session), "--logs", str(logs), "--slow", "100000")
    assert not any("!" in row for row in relaxed.stdout.splitlines()[2:7])


def test_a_directory_means_its_newest_session(
    tmp_path: Path, logs: Path, calls: list[HostCall]
) -> None:
    older = write_claude(tmp_path / "a" / "old.jsonl", _turns(calls)[:1])
    newer = write_codex(tmp_path / "a" / "deeper" / "rollout-new.jsonl", _turns(calls))
    import os

    os.utime(older, (1, 1))
    result = _json(tmp_path / "a", logs)
    assert result["session"] == str(newer)
    assert result["host"] == "codex"


def test_without_spans_calls_appear_with_null_dispatcher_figures(
    session: Path, tmp_path: Path
) -> None:
    empty = tmp_path / "empty-logs"
    (empty / "dispatch").mkdir(parents=True)
    for logs in (empty, tmp_path / "missing"):
        done = _run(str(session), "--logs", str(logs), "--format", "json")
        assert done.returncode == 1
        assert "could be joined" in done.stderr
        rows = json.loads(done.stdout)["calls"]
        assert len(rows) == 5
        assert all(row["dispatcher_ms"] is None and row["gateway_ms"] is None for row in rows)
        assert all(row["execution_ms"] is not None for row in rows)


def test_logs_default_to_assistant_logs(session: Path, logs: Path) -> None:
    done = _run(str(session), "--format", "json", env={"ASSISTANT_LOGS": str(logs)})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["joined"] == 4


def test_out_writes_the_file(session: Path, logs: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    done = _run(str(session), "--logs", str(logs), "--format", "json", "--out", str(out))
    assert done.returncode == 0
    assert done.stdout == ""
    assert len(json.loads(out.read_text(encoding="utf-8"))["calls"]) == 5


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"type": "session_meta", "payload": {}}\n{broken\n{"x": 1}\n', "line 2: the line is"),
        ("", "holds no complete record"),
        ("\x00\x01", "holds no complete record (line 1 is torn)"),
        ("\x00\x01\n", "line 1: the line is not a JSON object"),
        (
            (
                '{"type": "session_meta", "payload": {}, "timestamp": "2026-01-01T00:00:00Z"}\n'
                '{"type": "event_msg", "timestamp": "noon", "payload": {}}\n'
            ),
            "line 2: the timestamp",
        ),
    ],
)
def test_an_unreadable_session_is_a_message_and_exit_2(
    tmp_path: Path, logs: Path, content: str, expected: str
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(content)
    done = _run(str(path), "--logs", str(logs))
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("error: ")
    assert expected in done.stderr
    assert "Traceback" not in done.stderr


def test_a_session_without_our_calls_exits_1(tmp_path: Path, logs: Path) -> None:
    path = write_codex(tmp_path / "s.jsonl", [Turn(1_780_000_000.0, [], 1_780_000_001.0)])
    done = _run(str(path), "--logs", str(logs), "--format", "json")
    assert done.returncode == 1
    assert json.loads(done.stdout)["calls"] == []
    assert "no call of a boring-dispatch MCP server" in done.stderr
