from __future__ import annotations

from pathlib import Path

import pytest

from boring_dispatch import Registry, Tool
from boring_dispatch.testing import CapturingSink, FakeModel, assert_golden, run_agent

TOUCHED: list[str] = []


def get_job(job_id: int) -> dict[str, object]:
    TOUCHED.append(f"get_job {job_id}")
    return {"job_id": job_id, "status": "scheduled"}


def finish(answer: str) -> dict[str, object]:
    TOUCHED.append("finish")
    return {"answer": answer}


def box(**options: object) -> Registry:
    return Registry(
        {
            "get_job": Tool(get_job, description="Look up one job."),
            "finish": Tool(finish, description="End the session."),
        },
        **options,  # type: ignore[arg-type]
    )


def test_assert_golden_passes_on_equal_names(tmp_path: Path) -> None:
    golden = tmp_path / "box.golden"
    golden.write_text("# box\nfinish\nget_job\n", encoding="utf-8")
    assert_golden(box(), golden)


def test_assert_golden_fails_listing_surprise_and_missing_names(tmp_path: Path) -> None:
    golden = tmp_path / "box.golden"
    golden.write_text("finish\nlookup_invoice\n", encoding="utf-8")
    with pytest.raises(AssertionError) as caught:
        assert_golden(box(), golden)
    assert "surprise (not in the golden file): get_job" in str(caught.value)
    assert "missing (in the golden file only): lookup_invoice" in str(caught.value)


def test_the_agent_loop_is_a_client_of_dispatch_and_stops_after_finish() -> None:
    TOUCHED.clear()
    model = FakeModel(
        [
            {"name": "get_job", "args": {"job_id": 7}},
            {"name": "os.system", "args": {"command": "rm -rf /"}},
            {"name": "get_job", "args": {"job_id": "7"}},
            '{"name": "get_job", "args": {"job_id": 8}}',
            {"name": "finish", "args": {"answer": "done"}},
            {"name": "get_job", "args": {"job_id": 9}},
        ]
    )
    steps = run_agent(model, box())
    assert [step.observation.code for step in steps] == [
        "ok",
        "unknown_tool",
        "invalid_arguments",
        "ok",
        "ok",
    ]
    assert TOUCHED == ["get_job 7", "get_job 8", "finish"]
    assert [o.code for o in model.seen] == [s.observation.code for s in steps[:-1]]


def test_the_agent_loop_ends_when_the_script_does_or_at_max_steps() -> None:
    assert run_agent(FakeModel([]), box()) == ()
    forever = FakeModel([{"name": "get_job", "args": {"job_id": 1}}] * 50)
    assert len(run_agent(forever, box(), max_steps=5)) == 5


def test_a_failed_finish_does_not_stop_the_loop() -> None:
    model = FakeModel(
        [{"name": "finish", "args": {}}, {"name": "finish", "args": {"answer": "ok"}}]
    )
    assert [s.observation.code for s in run_agent(model, box())] == ["invalid_arguments", "ok"]


def test_a_scripted_call_with_a_bad_shape_is_refused_not_raised() -> None:
    model = FakeModel([{"args": {"job_id": 1}}, {"name": "get_job", "args": [1]}])
    assert [s.observation.code for s in run_agent(model, box())] == [
        "invalid_request",
        "invalid_request",
    ]


def test_the_capturing_sink_keeps_every_event() -> None:
    sink = CapturingSink()
    registry = box(sinks=[sink])
    registry.dispatch("get_job", {"job_id": 1})
    registry.dispatch("nope", {})
    assert sink.outcomes() == ["ok", "unknown_tool"]
    assert sink.events[0].args == {"job_id": 1}
