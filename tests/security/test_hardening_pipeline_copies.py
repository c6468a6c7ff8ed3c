"""Findings 2 and 6: the handler, the records, the caller and the observation share no object.

2. A handler that writes into its (nested) arguments changed the caller's
   objects and the audit/trace records, which were written after the call
   from objects the handler could reach. Now the handler gets its own deep
   copy, and the records are a snapshot of the validated, redacted arguments
   taken before the call.
6. The observation held the handler's live result: a result checked at a few
   bytes could grow afterwards. Now it holds the checked JSON, decoded afresh.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Annotated, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict

from boring_dispatch import Registry, Sensitive, Tool
from boring_dispatch.observe.audit import JsonLinesAuditSink, TraceRecorder
from boring_dispatch.registry.replay import replay_lines

TOKEN = "TOKEN-written-by-the-handler"


class Options(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    tags: list[str]
    meta: dict[str, Any]


@dataclasses.dataclass
class Settings:
    values: list[int]


def _scribble(value: object) -> None:
    """Write TOKEN into every mutable place of ``value`` it can reach."""
    if isinstance(value, dict):
        for member in list(value.values()):
            _scribble(member)
        value["injected"] = TOKEN
    elif isinstance(value, list):
        for item in value:
            _scribble(item)
        value.append(TOKEN)
    elif isinstance(value, BaseModel | Settings):
        for member in vars(value).values():
            _scribble(member)


def meddle_any(payload: Any) -> str:
    _scribble(payload)
    return "done"


def meddle_dict(payload: dict[str, Any]) -> str:
    _scribble(payload)
    return "done"


def meddle_list(payload: list[dict[str, Any]]) -> str:
    _scribble(payload)
    return "done"


def meddle_model(payload: Options) -> str:
    _scribble(payload)
    return "done"


def meddle_dataclass(payload: Settings) -> str:
    _scribble(payload)
    return "done"


def meddle_secret(payload: dict[str, Any], api_token: Annotated[str, Sensitive]) -> str:
    _scribble(payload)
    return "done"


def tools() -> dict[str, Tool]:
    return {
        "any": Tool(meddle_any, description="Any."),
        "dict": Tool(meddle_dict, description="Dict."),
        "list": Tool(meddle_list, description="List."),
        "model": Tool(meddle_model, description="Model."),
        "dataclass": Tool(meddle_dataclass, description="Dataclass."),
        "secret": Tool(meddle_secret, description="Secret."),
    }


def calls() -> list[tuple[str, dict[str, Any]]]:
    return [
        ("any", {"payload": {"a": {"b": [1, {"c": "d"}]}}}),
        ("any", {"payload": [[{"x": []}]]}),
        ("dict", {"payload": {"nested": {"deeper": {"list": [{"k": "v"}]}}}}),
        ("list", {"payload": [{"a": {"b": []}}, {"c": [[]]}]}),
        ("model", {"payload": {"tags": ["t"], "meta": {"m": {"n": []}}}}),
        ("dataclass", {"payload": {"values": [1, 2]}}),
        ("secret", {"payload": {"inner": {"x": []}}, "api_token": "s3cr3t"}),
    ]


def _snapshot(value: object) -> str:
    """A deep, comparable picture of a Python value (models and dataclasses included)."""
    if isinstance(value, BaseModel):
        return "M" + _snapshot(value.model_dump())
    if isinstance(value, Settings):
        return "D" + _snapshot(dataclasses.asdict(value))
    return json.dumps(value, sort_keys=True, default=_snapshot)


@pytest.mark.parametrize("index", range(len(calls())))
def test_a_handler_writing_into_its_arguments_reaches_neither_caller_nor_records(
    index: int, tmp_path: Path
) -> None:
    name, args = calls()[index]
    before = _snapshot(args)
    audit, trace = tmp_path / "audit.jsonl", tmp_path / "trace.jsonl"
    with JsonLinesAuditSink(audit) as sink, TraceRecorder(trace) as recorder:
        observation = Registry(tools(), sinks=[sink, recorder]).dispatch(name, args)
    assert observation.ok, observation
    assert _snapshot(args) == before  # the caller's objects are untouched
    for path in (audit, trace):
        assert TOKEN not in path.read_text(encoding="utf-8")
    if "Options(" in repr(args) or "Settings(" in repr(args):
        return  # an object argument is recorded by its type name: there is no call to replay
    # The trace replays the call as it was made, not as the handler left it.
    [line] = replay_lines(Registry(tools()), trace.read_text(encoding="utf-8").splitlines())
    assert not line.differs


def test_two_arguments_sharing_one_object_reach_the_handler_as_two_json_copies() -> None:
    # The table takes JSON data: each argument is decoded on its own, so the handler's
    # copies share nothing with each other or with the caller.
    seen: list[bool] = []

    def pair(first: Any, second: Any) -> bool:
        seen.append(first is second)
        first.append(1)
        return True

    shared: list[int] = []
    observation = Registry({"pair": Tool(pair, description="Pair.")}).dispatch(
        "pair", {"first": shared, "second": shared}
    )
    assert observation.ok
    assert seen == [False]
    assert shared == []


def test_an_argument_that_cannot_be_copied_is_refused_before_the_call() -> None:
    import threading

    ran: list[bool] = []

    def locked(lock: Any) -> bool:
        ran.append(True)
        return True

    observation = Registry({"locked": Tool(locked, description="Lock.")}).dispatch(
        "locked", {"lock": threading.Lock()}
    )
    assert observation.code == "invalid_arguments"
    assert observation.error is not None
    assert [path for path, _ in observation.error.details] == ["lock"]
    assert ran == []


# --------------------------------------------------------------------------- #
# Finding 6: the observation holds what was checked

KEPT: list[Any] = []


def keeps_dict() -> dict[str, Any]:
    result: dict[str, Any] = {"n": 1, "inner": {"list": [1]}}
    KEPT.append(result)
    return result


def keeps_list() -> list[Any]:
    result: list[Any] = [{"a": []}]
    KEPT.append(result)
    return result


def keeps_argument(payload: dict[str, Any]) -> dict[str, Any]:
    KEPT.append(payload)
    return payload


class Growing(dict[str, Any]):
    pass


def keeps_subclass() -> dict[str, Any]:
    result = Growing(x=[1])
    KEPT.append(result)
    return result


def _grow(kept: Any) -> None:
    big = "x" * 500_000
    if isinstance(kept, dict):
        for member in kept.values():
            if isinstance(member, list | dict):
                _grow(member)
        kept["grown"] = big
    else:
        kept.append(big)
        for item in kept:
            if isinstance(item, list | dict):
                _grow(item)


@pytest.mark.parametrize(
    ("handler", "args"),
    [
        (keeps_dict, {}),
        (keeps_list, {}),
        (keeps_argument, {"payload": {"k": [1, {"v": 2}]}}),
        (keeps_subclass, {}),
    ],
)
def test_a_result_changed_after_the_call_leaves_the_observation_as_checked(
    handler: Any, args: dict[str, object]
) -> None:
    KEPT.clear()
    registry = Registry({"tool": Tool(handler, description="Keeps its result.")})
    observation = registry.dispatch("tool", args)
    assert observation.ok
    text = observation.to_json()
    _grow(KEPT[0])
    assert observation.to_json() == text
    assert len(text) < 200


GIVEN: list[Any] = []


def give() -> Any:
    return GIVEN[-1]


GIVE = Registry({"give": Tool(give, description="Give.")})


def _containers(node: Any) -> list[int]:
    if isinstance(node, dict):
        return [id(node), *(i for member in node.values() for i in _containers(member))]
    if isinstance(node, list):
        return [id(node), *(i for item in node for i in _containers(item))]
    return []


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
        ),
        max_leaves=10,
    )
)
def test_the_observation_never_shares_a_container_with_the_handler(value: Any) -> None:
    GIVEN.append(value)
    observation = GIVE.dispatch("give", {})
    assert observation.ok
    assert observation.result == value
    assert not set(_containers(observation.result)) & set(_containers(value))
