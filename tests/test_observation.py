from __future__ import annotations

import json

import pytest

from boring_dispatch.errors import InvalidArguments, UnknownTool
from boring_dispatch.observation import Observation, ObservationError


def test_a_success_is_ok_with_its_result() -> None:
    observation = Observation.success({"job_id": 7})
    assert observation.to_dict() == {"ok": True, "result": {"job_id": 7}}
    assert observation.code == "ok"


def test_a_failure_has_code_and_message_and_nothing_else_by_default() -> None:
    observation = Observation.failure("unknown_tool", "no tool named 'os.system'")
    assert observation.to_dict() == {
        "ok": False,
        "error": {"code": "unknown_tool", "message": "no tool named 'os.system'"},
    }
    assert observation.code == "unknown_tool"


def test_details_are_path_and_message_objects() -> None:
    observation = Observation.from_error(
        InvalidArguments("bad", details=(("job_id", "Input should be a valid integer"),))
    )
    error = observation.to_dict()["error"]
    assert error == {
        "code": "invalid_arguments",
        "message": "bad",
        "details": [{"path": "job_id", "message": "Input should be a valid integer"}],
    }


def test_an_internal_error_carries_its_correlation_id() -> None:
    observation = Observation.failure("internal_error", "internal error", correlation_id="01ABC")
    assert observation.to_dict()["error"] == {
        "code": "internal_error",
        "message": "internal error",
        "correlation_id": "01ABC",
    }


def test_from_error_keeps_the_error_code() -> None:
    assert Observation.from_error(UnknownTool("no tool named 'x'")).code == "unknown_tool"


@pytest.mark.parametrize(
    ("ok", "error"),
    [(True, ObservationError("tool_error", "x")), (False, None)],
)
def test_ok_and_error_must_agree(ok: bool, error: ObservationError | None) -> None:
    with pytest.raises(ValueError, match="either ok"):
        Observation(ok=ok, error=error)


def test_to_json_is_one_line_of_json_that_round_trips() -> None:
    observation = Observation.success({"text": "line one\nline two", "word": "caf\u00e9"})
    text = observation.to_json()
    assert "\n" not in text
    assert json.loads(text) == observation.to_dict()


def test_observations_are_frozen() -> None:
    observation = Observation.success(1)
    with pytest.raises(AttributeError):
        observation.ok = False  # type: ignore[misc]
