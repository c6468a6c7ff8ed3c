"""Finding 7: replay compares JSON type by type, so a changed result type is a difference.

Python's ``==`` made ``true``, ``1`` and ``1.0`` equal, and a handler whose
result changed from ``True`` to ``1`` replayed clean. Decision (JSON as
Python's encoder writes it): booleans are never numbers; an integer literal
and a fraction literal differ (``1`` vs ``1.0``), as do ``0.0`` and ``-0.0``;
key order does not count. Checked on :func:`same_json`, on ``replay`` and on
``dispatcher replay --registry`` (a real subprocess).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from boring_dispatch import Registry, Tool
from boring_dispatch._json import same_json
from boring_dispatch.observe.audit import TraceRecorder
from boring_dispatch.registry.replay import replay, replay_lines
from hardening_pipeline_kit import write_module

DIFFERENT: list[tuple[Any, Any]] = [
    (True, 1),
    (1, True),
    (False, 0),
    (0, False),
    (1, 1.0),
    (1.0, 1),
    (0.0, False),
    (0.0, -0.0),
    (None, False),
    (None, 0),
    ("1", 1),
    ("true", True),
    ([1], [True]),
    ([1, 2], [2, 1]),
    ([1], [1, 1]),
    ({"a": 1}, {"a": True}),
    ({"a": 1}, {"a": 1, "b": 1}),
    ({"a": [{"b": [0]}]}, {"a": [{"b": [False]}]}),
    ({"a": [{"b": [0]}]}, {"a": [{"b": [0.0]}]}),
    ([], {}),
    ({"ok": True, "result": 1}, {"ok": 1, "result": 1}),
]
SAME: list[tuple[Any, Any]] = [
    (1, 1),
    (1.5, 1.5),
    (True, True),
    (None, None),
    ({"a": 1, "b": [1, 2.5, None]}, {"b": [1, 2.5, None], "a": 1}),
    ([[[]]], [[[]]]),
]


@pytest.mark.parametrize(("left", "right"), DIFFERENT, ids=repr)
def test_values_of_different_json_types_or_literals_are_different(left: Any, right: Any) -> None:
    assert not same_json(left, right)
    assert not same_json(right, left)


@pytest.mark.parametrize(("left", "right"), SAME, ids=repr)
def test_the_same_json_is_the_same(left: Any, right: Any) -> None:
    assert same_json(left, right)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=15,
)


@given(JSON)
def test_a_value_is_the_same_as_its_own_json_round_trip(value: Any) -> None:
    assert same_json(value, json.loads(json.dumps(value)))


@given(JSON, JSON)
def test_same_json_agrees_with_the_encoded_text(left: Any, right: Any) -> None:
    """Two values are the same exactly when their canonical texts are the same."""

    def text(value: Any) -> str:
        return json.dumps(value, sort_keys=True)

    assert same_json(left, right) == (text(left) == text(right))


def test_deep_values_compare_without_recursion() -> None:
    left: Any = []
    right: Any = []
    for _ in range(10_000):
        left, right = [left], [right]
    assert same_json(left, right)


# --------------------------------------------------------------------------- #
# Replay of a handler whose result changed type

RESULTS: list[Any] = []


def answer() -> Any:
    return RESULTS[-1]


CHANGES = [
    (True, 1),
    (1, True),
    (1, 1.0),
    (0, False),
    ({"paid": True}, {"paid": 1}),
    ([1.0, 2.0], [1, 2]),
    ({"n": 0.0}, {"n": -0.0}),
]


@pytest.mark.parametrize(("before", "after"), CHANGES, ids=repr)
def test_a_result_that_changed_type_replays_as_a_difference(
    before: Any, after: Any, tmp_path: Path
) -> None:
    trace = tmp_path / "trace.jsonl"
    RESULTS.append(before)
    with TraceRecorder(trace) as recorder:
        Registry({"answer": Tool(answer, description="Answer.")}, sinks=[recorder]).dispatch(
            "answer", {}
        )
    table = Registry({"answer": Tool(answer, description="Answer.")})
    assert replay(table, trace).ok  # unchanged: no difference
    RESULTS.append(after)
    report = replay(table, trace)
    assert not report.ok
    assert [line.line_number for line in report.differences] == [1]


def test_a_recorded_true_is_not_a_replayed_1() -> None:
    table = Registry({"answer": Tool(answer, description="Answer.")})
    RESULTS.append(1)
    recorded = {"ok": True, "result": True}
    [line] = replay_lines(
        table, [json.dumps({"name": "answer", "args": {}, "observation": recorded})]
    )
    assert line.differs


def test_dispatcher_replay_exits_1_when_a_result_changed_type(tmp_path: Path) -> None:
    write_module(
        tmp_path,
        "typed_table",
        textwrap.dedent(
            """
            from boring_dispatch import Registry, Tool

            def flag() -> int:
                return 1

            TABLE = Registry({"flag": Tool(flag, description="Flag.")})
            """
        ),
    )
    lines = [
        {"name": "flag", "args": {}, "observation": {"ok": True, "result": 1}},
        {"name": "flag", "args": {}, "observation": {"ok": True, "result": True}},
        {"name": "flag", "args": {}, "observation": {"ok": True, "result": 1.0}},
    ]
    codes = []
    for line in lines:
        trace = tmp_path / "trace.jsonl"
        trace.write_text(json.dumps(line) + "\n", encoding="utf-8")
        argv = [sys.executable, "-m", "boring_dispatch", "replay", "--registry"]
        done = subprocess.run(
            [*argv, "typed_table:TABLE", "--live", str(trace)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        codes.append(done.returncode)
    assert codes == [0, 1, 1]
