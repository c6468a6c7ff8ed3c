from __future__ import annotations

import json
import logging
import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from boring_dispatch import Registry, Tool, ToolError
from boring_dispatch.errors import Denied, InvalidArguments, UnknownTool
from boring_dispatch.observation import Observation
from boring_dispatch.observe.audit import AuditEvent
from boring_dispatch.registry.pipeline import TableLimits, new_correlation_id
from boring_dispatch.testing import CapturingSink
from kits.strategies import json_values

ULID = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}")
FLAG = {"called": False}


def get_job(job_id: int) -> dict[str, object]:
    FLAG["called"] = True
    return {"job_id": job_id}


def refuse(reason: str) -> None:
    FLAG["called"] = True
    raise ToolError(f"cannot do that: {reason}")


def crash(kind: str) -> None:
    FLAG["called"] = True
    errors: dict[str, Exception] = {
        "key": KeyError("job 9"),
        "value": ValueError("bad"),
        "type": TypeError("bad"),
        "runtime": RuntimeError("bad"),
        "unknown_tool": UnknownTool("nested"),
        "invalid_arguments": InvalidArguments("nested"),
        "denied": Denied("nested"),
        "zero": ZeroDivisionError("x"),
    }
    raise errors[kind]


def returns(kind: str) -> object:
    values: dict[str, object] = {
        "set": {1, 2},
        "nan": math.nan,
        "object": object(),
        "bytes": b"x",
        "tuple": (1, "a"),
    }
    return values[kind]


def registry(**options: object) -> Registry:
    return Registry(
        {
            "get_job": Tool(get_job, description="Look up one job."),
            "refuse": Tool(refuse, description="Always refuses."),
            "crash": Tool(crash, description="Always crashes."),
            "returns": Tool(returns, description="Returns odd values."),
        },
        name="test",
        **options,  # type: ignore[arg-type]
    )


@pytest.fixture(autouse=True)
def _reset_flag() -> None:
    FLAG["called"] = False


@pytest.mark.parametrize(
    "args",
    [{"job_id": "7"}, {"job_id": 7.0}, {"job_id": True}, {}, {"job_id": 7, "x": 1}, {"id": 7}],
)
def test_bad_arguments_never_call_the_handler(args: dict[str, object]) -> None:
    observation = registry().dispatch("get_job", args)
    assert observation.code == "invalid_arguments"
    assert FLAG["called"] is False


def test_a_tool_error_is_tool_error_with_its_message() -> None:
    observation = registry().dispatch("refuse", {"reason": "closed"})
    assert observation.to_dict() == {
        "ok": False,
        "error": {"code": "tool_error", "message": "cannot do that: closed"},
    }


def test_a_long_tool_error_message_is_cut() -> None:
    limits = TableLimits(max_message_chars=10)
    observation = registry(limits=limits).dispatch("refuse", {"reason": "x" * 100})
    assert observation.error is not None
    assert len(observation.error.message) == 10


@pytest.mark.parametrize(
    "kind",
    ["key", "value", "type", "runtime", "unknown_tool", "invalid_arguments", "denied", "zero"],
)
def test_any_other_exception_is_internal_error_never_ok(
    kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="boring_dispatch")
    observation = registry().dispatch("crash", {"kind": kind})
    assert FLAG["called"] is True
    assert not observation.ok
    assert observation.code == "internal_error"
    error = observation.error
    assert error is not None
    assert error.message == "internal error"
    assert error.correlation_id is not None
    assert ULID.fullmatch(error.correlation_id)
    assert "Traceback" not in observation.to_json()
    [record] = [r for r in caplog.records if r.name == "boring_dispatch"]
    text = record.getMessage()
    assert error.correlation_id in text
    assert "Traceback (most recent call last)" in text
    assert record.exc_info is None


@pytest.mark.parametrize("kind", ["set", "nan", "object", "bytes"])
def test_a_result_that_is_not_json_is_internal_error(
    kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="boring_dispatch")
    observation = registry().dispatch("returns", {"kind": kind})
    assert observation.code == "internal_error"
    assert observation.error is not None
    assert observation.error.correlation_id is not None
    assert observation.error.correlation_id in caplog.text


def test_a_tuple_result_is_json() -> None:
    observation = registry().dispatch("returns", {"kind": "tuple"})
    assert observation.ok
    assert json.loads(observation.to_json())["result"] == [1, "a"]


def test_correlation_ids_are_fresh_and_time_ordered() -> None:
    ids = [new_correlation_id() for _ in range(200)]
    assert len(set(ids)) == 200
    assert all(ULID.fullmatch(i) for i in ids)
    assert [i[:10] for i in ids] == sorted(i[:10] for i in ids)


def test_dispatch_json_runs_a_well_formed_request() -> None:
    observation = registry().dispatch_json('{"name": "get_job", "args": {"job_id": 7}}')
    assert observation.result == {"job_id": 7}
    assert registry().dispatch_json(b'{"args": {"job_id": 7}, "name": "get_job"}').ok


def test_dispatch_json_treats_missing_args_as_empty() -> None:
    observation = registry().dispatch_json('{"name": "get_job"}')
    assert observation.code == "invalid_arguments"
    assert observation.error is not None
    assert observation.error.details == (("job_id", "Field required"),)


MALFORMED = [
    "not json",
    "",
    '{"name": "get_job", "args": {"job_id": NaN}}',
    '{"name": "get_job", "args": {"job_id": Infinity}}',
    '{"name": "get_job", "args": {"job_id": -Infinity}}',
    '{"name": "get_job", "name": "crash", "args": {}}',
    '{"name": "get_job", "args": {"job_id": 1, "job_id": 2}}',
    '{"name": "get_job", "args": {"x": ' + "[" * 100 + "]" * 100 + "}}",
    '{"name": "get_job", "args": {"job_id": ' + "9" * 5000 + "}}",
    '{"name": 7, "args": {}}',
    '{"name": null, "args": {}}',
    '{"name": ["get_job"], "args": {}}',
    '{"name": {"get_job": 1}, "args": {}}',
    '{"args": {"job_id": 7}}',
    '{"name": "get_job", "args": [7]}',
    '{"name": "get_job", "args": "job_id=7"}',
    '{"name": "get_job", "args": null}',
    '{"name": "get_job", "args": {}, "eval": "os.system"}',
    '["get_job", {"job_id": 7}]',
    '"get_job"',
    "7",
    b'{"name": "get_job\xff", "args": {}}',
]


@pytest.mark.parametrize("text", MALFORMED)
def test_malformed_requests_are_invalid_request_and_call_nothing(text: str | bytes) -> None:
    observation = registry().dispatch_json(text)
    assert observation.code == "invalid_request"
    assert FLAG["called"] is False


def test_a_huge_payload_is_refused_before_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []

    def loads(*_: object, **__: object) -> None:
        parsed.append("parsed")

    monkeypatch.setattr("boring_dispatch._json.json.loads", loads)
    text = json.dumps({"name": "get_job", "args": {"job_id": 7, "pad": "x" * 200}})
    observation = registry(limits=TableLimits(max_request_bytes=100)).dispatch_json(text)
    assert observation.code == "invalid_request"
    assert parsed == []


def test_the_depth_cap_is_configurable() -> None:
    text = '{"name": "get_job", "args": {"job_id": 7, "x": [[1]]}}'
    assert registry(limits=TableLimits(max_depth=3)).dispatch_json(text).code == "invalid_request"
    assert registry(limits=TableLimits(max_depth=4)).dispatch_json(text).code == (
        "invalid_arguments"
    )


@pytest.mark.parametrize("name", [7, None, b"get_job", ("get_job",)])
def test_a_python_caller_with_a_non_string_name_gets_invalid_request(name: object) -> None:
    assert registry().dispatch(name, {"job_id": 7}).code == "invalid_request"  # type: ignore[arg-type]


def test_a_string_subclass_name_is_refused_before_lookup() -> None:
    class Sneaky(str):
        __slots__ = ()

        def __eq__(self, other: object) -> bool:
            return True

        def __hash__(self) -> int:
            return hash("get_job")

    assert registry().dispatch(Sneaky("os.system"), {"job_id": 7}).code == "invalid_request"
    assert FLAG["called"] is False


@pytest.mark.parametrize("args", [[("job_id", 7)], "job_id=7", 7])
def test_python_arguments_must_be_a_mapping(args: object) -> None:
    assert registry().dispatch("get_job", args).code == "invalid_request"  # type: ignore[arg-type]


def test_a_failing_sink_does_not_change_the_observation(caplog: pytest.LogCaptureFixture) -> None:
    class Broken:
        def record(self, event: AuditEvent) -> None:
            del event
            raise OSError("disk full")

    capture = CapturingSink()
    observation = registry(sinks=[Broken(), capture]).dispatch("get_job", {"job_id": 7})
    assert observation.ok
    assert capture.outcomes() == ["ok"]
    assert "audit sink Broken failed: OSError" in caplog.text


def test_every_outcome_reaches_the_sinks_once_with_its_code() -> None:
    capture = CapturingSink()
    table = registry(sinks=[capture])
    table.dispatch("get_job", {"job_id": 7})
    table.dispatch("get_job", {"job_id": "7"})
    table.dispatch("os.system", {"command": "id"})
    table.dispatch_json("{")
    table.dispatch("refuse", {"reason": "no"})
    table.dispatch("crash", {"kind": "key"})
    assert capture.outcomes() == [
        "ok",
        "invalid_arguments",
        "unknown_tool",
        "invalid_request",
        "tool_error",
        "internal_error",
    ]
    assert [event.tool for event in capture.events] == [
        "get_job",
        "get_job",
        "os.system",
        None,
        "refuse",
        "crash",
    ]
    assert all(event.surface == "test" and event.duration_ms >= 0 for event in capture.events)


@given(json_values())
def test_any_json_arguments_give_an_observation_never_an_exception(args: object) -> None:
    observation = registry().dispatch("get_job", args)  # type: ignore[arg-type]
    assert observation.code in {"ok", "invalid_arguments", "invalid_request"}
    json.loads(observation.to_json())


@given(st.text(max_size=200) | st.binary(max_size=200))
def test_any_request_text_gives_an_observation_never_an_exception(text: str | bytes) -> None:
    observation = registry().dispatch_json(text)
    assert observation.code in {"ok", "invalid_request", "invalid_arguments", "unknown_tool"}
    json.loads(observation.to_json())


def test_a_handler_calling_sys_exit_is_an_internal_error_not_an_exit() -> None:
    import sys

    def leave(code: int) -> dict[str, int]:
        sys.exit(code)

    table = Registry({"leave": Tool(leave, description="Calls sys.exit.")})
    observation = table.dispatch("leave", {"code": 3})
    assert observation.ok is False
    assert observation.to_dict()["error"]["code"] == "internal_error"  # type: ignore[index]


def test_keyboard_interrupt_from_a_handler_is_an_internal_error() -> None:
    def interrupt() -> dict[str, int]:
        raise KeyboardInterrupt

    table = Registry({"interrupt": Tool(interrupt, description="Raises KeyboardInterrupt.")})
    observation = table.dispatch("interrupt", {})
    assert observation.to_dict()["error"]["code"] == "internal_error"  # type: ignore[index]


def test_a_tool_that_needs_confirmation_is_denied_unless_the_client_confirms() -> None:
    calls: list[int] = []

    def refund(invoice_id: int) -> dict[str, int]:
        calls.append(invoice_id)
        return {"refunded": invoice_id}

    table = Registry({"refund": Tool(refund, description="Refund.", confirm=True)})
    denied = table.dispatch("refund", {"invoice_id": 7})
    assert _code(denied) == "denied"
    assert calls == []
    # The model's own text can never confirm: dispatch_json has no such member.
    text = '{"name": "refund", "args": {"invoice_id": 7}, "confirmed": true}'
    assert _code(table.dispatch_json(text)) == "invalid_request"
    assert _code(table.dispatch_json('{"name": "refund", "args": {"invoice_id": 7}}')) == "denied"
    assert calls == []
    assert table.dispatch("refund", {"invoice_id": 7}, confirmed=True).ok is True
    assert calls == [7]


def _refund(invoice_id: int) -> dict[str, int]:
    return {"refunded": invoice_id}


def test_confirmation_is_checked_before_validation() -> None:
    table = Registry({"refund": Tool(_refund, description="R.", confirm=True)})
    observation = table.dispatch("refund", {"invoice_id": "not an int"})
    assert _code(observation) == "denied"


def _code(observation: Observation) -> object:
    error = observation.to_dict()["error"]
    assert isinstance(error, dict)
    return error["code"]
