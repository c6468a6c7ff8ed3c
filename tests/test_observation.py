from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from boring_dispatch.errors import InvalidArguments, UnknownTool
from boring_dispatch.observation import RETRYABLE_CODES, Observation, ObservationError


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


# --------------------------------------------------------------------------- #
# What a model reads, and whether a retry can help.

ALL_CODES = (
    "invalid_request",
    "unknown_tool",
    "invalid_arguments",
    "denied",
    "tool_error",
    "internal_error",
    "observation_too_large",
)


def test_only_argument_and_request_errors_are_retryable() -> None:
    retryable = {code for code in ALL_CODES if Observation.failure(code, "m").error.retryable}  # type: ignore[union-attr]
    assert retryable == {"invalid_arguments", "invalid_request"} == RETRYABLE_CODES


FINITE_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(result=FINITE_JSON)
def test_a_success_reads_as_the_results_json(result: object) -> None:
    text = Observation.success(result).model_text()
    assert json.loads(text) == result


@given(
    code=st.sampled_from(ALL_CODES),
    message=st.text(max_size=40),
    details=st.lists(st.tuples(st.text(max_size=10), st.text(max_size=20)), max_size=3),
)
def test_an_error_reads_as_code_message_details_and_the_retry_hint(
    code: str, message: str, details: list[tuple[str, str]]
) -> None:
    observation = Observation.failure(code, message, details=tuple(details))
    lines = observation.model_text().split("\n")
    assert lines[0] == f"error {code}: {message}" or "\n" in message
    for path, reason in details:
        assert f"- {path}: {reason}" in observation.model_text()
    hint = observation.model_text().rsplit("\n", 1)[-1]
    if code in RETRYABLE_CODES:
        assert hint == "Correct the arguments and call the tool again."
    else:
        assert hint.startswith("Do not call the tool again")


def test_an_internal_error_reads_with_its_correlation_id() -> None:
    observation = Observation.failure("internal_error", "internal error", correlation_id="01ABC")
    assert "correlation id: 01ABC" in observation.model_text()
