"""``adispatch`` and ``dispatch_args_json``: the same pipeline, other entrances."""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from boring_dispatch import Registry, Tool
from boring_dispatch.testing import CapturingSink
from kits.billing import CANARY, billing_table
from kits.strategies import argument_objects, json_values


def _echo(value: object = None) -> object:
    return {"value": value, "thread": threading.current_thread().name}


ECHO = Registry({"echo": Tool(_echo, description="Echo.")})


def test_adispatch_runs_the_handler_off_the_event_loop_thread() -> None:
    async def run() -> tuple[object, str]:
        observation = await ECHO.adispatch("echo", {"value": 1})
        return observation.result, threading.current_thread().name

    result, loop_thread = asyncio.run(run())
    assert isinstance(result, dict)
    assert result["value"] == 1
    assert result["thread"] != loop_thread


@given(args=argument_objects())
def test_adispatch_returns_what_dispatch_returns(args: dict[str, object]) -> None:
    table = billing_table(Counter())
    context = {"api_token": CANARY}
    for name in ("get_invoice", "refund", "nope"):
        expected = table.dispatch(name, args, context=context).to_dict()
        got = asyncio.run(table.adispatch(name, args, context=context)).to_dict()
        expected.get("error", {}).pop("correlation_id", None)  # type: ignore[attr-defined]
        got.get("error", {}).pop("correlation_id", None)  # type: ignore[attr-defined]
        assert got == expected


def test_adispatch_passes_confirmation_and_context() -> None:
    calls: Counter[str] = Counter()
    table = billing_table(calls)
    context = {"api_token": CANARY}
    denied = asyncio.run(table.adispatch("refund", {"invoice_id": 1}, context=context))
    assert denied.code == "denied"
    done = asyncio.run(
        table.adispatch("refund", {"invoice_id": 1}, confirmed=True, context=context)
    )
    assert done.result == {"refunded": 1}
    assert calls == Counter({"refund": 1})


@given(value=json_values())
def test_args_json_equals_dispatch_json_for_every_json_object(value: object) -> None:
    args = {"value": value}
    request = json.dumps({"name": "echo", "args": args})
    expected = ECHO.dispatch_json(request).to_dict()
    assert ECHO.dispatch_args_json("echo", json.dumps(args)).to_dict() == expected


STRICT_REFUSALS = [
    '{"value": 1, "value": 2}',
    '{"value": NaN}',
    '{"value": Infinity}',
    '{"value": 1e400}',
    "[" * 40 + "]" * 40,
    '{"value": ' + "[" * 40 + "]" * 40 + "}",
    "",
    "   ",
    "not json",
    "[]",
    '"text"',
    "1",
    "null",
    b"\xff\xfe",
    '{"value": 1',
]


@given(text=st.sampled_from(STRICT_REFUSALS))
def test_args_json_refuses_what_the_strict_parser_refuses(text: str | bytes) -> None:
    sink = CapturingSink()
    table = Registry(dict(ECHO.tools), sinks=[sink])
    observation = table.dispatch_args_json("echo", text)
    assert observation.code == "invalid_request"
    assert observation.error is not None
    assert observation.error.retryable
    assert sink.outcomes() == ["invalid_request"]
    assert sink.events[0].tool == "echo"


def test_args_json_checks_the_size_before_parsing() -> None:
    text = '{"value": "' + "x" * (ECHO.limits.max_request_bytes + 1) + '"}'
    assert ECHO.dispatch_args_json("echo", text).code == "invalid_request"


def test_args_json_passes_confirmation_and_context() -> None:
    calls: Counter[str] = Counter()
    table = billing_table(calls)
    context = {"api_token": CANARY}
    assert table.dispatch_args_json("refund", '{"invoice_id": 2}', context=context).code == (
        "denied"
    )
    done = table.dispatch_args_json("refund", '{"invoice_id": 2}', confirmed=True, context=context)
    assert done.result == {"refunded": 2}
    assert table.dispatch_args_json("nope", "{}").code == "unknown_tool"
