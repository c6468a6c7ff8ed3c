from __future__ import annotations

import json
from pathlib import Path

from boring_dispatch import Registry, Tool, ToolError
from boring_dispatch.observe.audit import TraceRecorder
from boring_dispatch.registry.replay import comparable, replay, replay_lines

JOBS = {7: {"job_id": 7, "status": "scheduled"}}


def get_job(job_id: int) -> dict[str, object]:
    if job_id < 0:
        raise ToolError("job ids are positive")
    return dict(JOBS[job_id])


def finish(answer: str) -> dict[str, object]:
    return {"answer": answer}


def get_job_changed(job_id: int) -> dict[str, object]:
    return {"job_id": job_id, "status": "cancelled"}


def tools(handler: object = get_job) -> dict[str, Tool]:
    return {
        "get_job": Tool(handler, description="Look up one job."),  # type: ignore[arg-type]
        "finish": Tool(finish, description="End the session."),
    }


CALLS: list[tuple[str, dict[str, object]]] = [
    ("get_job", {"job_id": 7}),
    ("get_job", {"job_id": "7"}),
    ("get_job", {"job_id": -1}),
    ("get_job", {"job_id": 99}),
    ("os.system", {"command": "id"}),
    ("finish", {"answer": "done"}),
]


def record(path: Path) -> None:
    with TraceRecorder(path) as recorder:
        registry = Registry(tools(), sinks=[recorder])
        for name, args in CALLS:
            registry.dispatch(name, args)


def test_replaying_a_recorded_trace_reproduces_every_observation(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    record(trace)
    report = replay(Registry(tools()), trace)
    assert len(report.lines) == len(CALLS)
    assert report.ok
    assert [line.name for line in report.lines] == [name for name, _ in CALLS]
    assert report.lines[0].observation == {"ok": True, "result": JOBS[7]}
    assert report.lines[3].observation["error"]["code"] == "internal_error"  # type: ignore[index]


def test_a_changed_handler_shows_as_a_difference(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    record(trace)
    report = replay(Registry(tools(get_job_changed)), trace)
    assert not report.ok
    assert {line.line_number for line in report.differences} == {1, 3, 4}
    assert report.lines[0].observation["result"] == {"job_id": 7, "status": "cancelled"}
    assert report.lines[0].recorded == {
        "ok": True,
        "result": {"job_id": 7, "status": "scheduled"},
    }


def test_a_missing_tool_shows_as_a_difference(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    record(trace)
    report = replay(Registry(tools()).restrict({"get_job"}), trace)
    assert [line.line_number for line in report.differences] == [6]


def test_a_bad_line_is_invalid_request_and_replay_goes_on() -> None:
    lines = [
        '{"name": "finish", "args": {"answer": "a"}}',
        "not json",
        '{"name": "finish", "args": {"answer": "a"}, "extra": 1}',
        '{"name": "finish", "args": {"answer": "a"}, "observation": []}',
        "",
        '{"name": "finish", "args": {"answer": "b"}}',
    ]
    results = list(replay_lines(Registry(tools()), lines))
    assert [r.line_number for r in results] == [1, 2, 3, 4, 6]
    assert [r.malformed for r in results] == [False, True, True, True, False]
    assert [r.differs for r in results] == [False, True, True, True, False]
    assert results[1].observation["error"]["code"] == "invalid_request"  # type: ignore[index]
    assert results[4].observation == {"ok": True, "result": {"answer": "b"}}


def test_lines_without_a_recorded_observation_never_differ() -> None:
    [line] = replay_lines(Registry(tools()), ['{"name": "nope", "args": {}}'])
    assert line.recorded is None
    assert not line.differs


def test_correlation_ids_do_not_count_as_differences() -> None:
    recorded = {"ok": False, "error": {"code": "internal_error", "message": "internal error"}}
    recorded["error"]["correlation_id"] = "01ARZ3NDEKTSV4RRFFQ69G5FAV"  # type: ignore[index]
    text = json.dumps({"name": "get_job", "args": {"job_id": 99}, "observation": recorded})
    [line] = replay_lines(Registry(tools()), [text])
    assert line.observation["error"]["correlation_id"] != "01ARZ3NDEKTSV4RRFFQ69G5FAV"  # type: ignore[index]
    assert not line.differs


def test_a_different_error_message_is_a_difference() -> None:
    recorded = {"ok": False, "error": {"code": "tool_error", "message": "something else"}}
    text = json.dumps({"name": "get_job", "args": {"job_id": -1}, "observation": recorded})
    [line] = replay_lines(Registry(tools()), [text])
    assert line.differs


def test_comparison_is_on_json_values() -> None:
    assert comparable({"ok": True, "result": (1, 2)}) == {"ok": True, "result": [1, 2]}


def _nested(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


def _deep_result(n: int) -> object:
    return _nested(n)


def _takes_anything(x: object) -> dict[str, int]:
    return {"ok": 1}


def test_every_ok_call_a_recorder_wrote_whole_replays_the_same(tmp_path: Path) -> None:
    """Replay is the same dispatch as the live call: what the live call accepted and the
    recorder wrote whole (a result up to the result depth cap, arguments as deep as a
    Python caller may send) is not a malformed line."""
    path = tmp_path / "trace.jsonl"
    recorder = TraceRecorder(path)
    handlers = {
        "deep": Tool(_deep_result, description="A nested result."),
        "take": Tool(_takes_anything, description="Takes any value."),
    }
    live = Registry(handlers, sinks=[recorder])
    calls: list[tuple[str, dict[str, object]]] = [("deep", {"n": n}) for n in (1, 20, 31, 40, 63)]
    calls += [("take", {"x": _nested(n)}) for n in (1, 20, 31, 60, 126, 127)]
    for name, args in calls:
        assert live.dispatch(name, args).ok, (name, args)
    recorder.close()
    report = replay(Registry(handlers), path)
    assert len(report.lines) == len(calls)
    assert [line.line_number for line in report.differences] == []
