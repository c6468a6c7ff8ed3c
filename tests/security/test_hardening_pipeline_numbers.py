"""Finding 1: a non-finite number never reaches a handler, and never erases an audit record.

``1e400`` parses to ``inf`` with the stdlib parser, strict pydantic accepts
``inf``/``nan``, and the audit encoder (``allow_nan=False``) then failed, so a
call ran with no audit line. Now: dispatch_json refuses every literal that is
not a finite number (``invalid_request``), validation refuses every non-finite
float or Decimal at any depth of what the handler would receive
(``invalid_arguments``), and a refused call that carried one is still recorded.
"""

from __future__ import annotations

import dataclasses
import json
import math
import textwrap
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict

from boring_dispatch import Registry, Tool
from boring_dispatch.observe.audit import JsonLinesAuditSink, TraceRecorder
from boring_dispatch.registry.replay import replay_lines
from hardening_pipeline_kit import RawMcp, write_module

CALLED: list[str] = []


class Point(BaseModel):
    x: float
    y: float = 0.0


class StrictArgs(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    amount: float
    where: Point | None = None


@dataclasses.dataclass
class Box:
    size: float


def amount(amount: float) -> str:
    CALLED.append("amount")
    return "ran"


def money(amount: Decimal) -> str:
    CALLED.append("money")
    return "ran"


def many(values: list[float]) -> str:
    CALLED.append("many")
    return "ran"


def table_of(table: dict[str, list[float]]) -> str:
    CALLED.append("table_of")
    return "ran"


def keyed(table: dict[float, int]) -> str:
    CALLED.append("keyed")
    return "ran"


def pair(pair: tuple[float, ...]) -> str:
    CALLED.append("pair")
    return "ran"


def anything(value: Any) -> str:
    CALLED.append("anything")
    return "ran"


def located(point: Point) -> str:
    CALLED.append("located")
    return "ran"


def boxed(box: Box) -> str:
    CALLED.append("boxed")
    return "ran"


def optional(amount: float | None = None) -> str:
    CALLED.append("optional")
    return "ran"


def explicit(amount: float, where: Point | None = None) -> str:
    CALLED.append("explicit")
    return "ran"


def counted(count: int) -> str:
    CALLED.append("counted")
    return "ran"


def registry(**options: Any) -> Registry:
    return Registry(
        {
            "amount": Tool(amount, description="Amount."),
            "money": Tool(money, description="Money."),
            "many": Tool(many, description="Many."),
            "table_of": Tool(table_of, description="Table."),
            "keyed": Tool(keyed, description="Keyed."),
            "pair": Tool(pair, description="Pair."),
            "anything": Tool(anything, description="Anything."),
            "located": Tool(located, description="Located."),
            "boxed": Tool(boxed, description="Boxed."),
            "optional": Tool(optional, description="Optional."),
            "explicit": Tool(explicit, description="Explicit.", args=StrictArgs),
            "counted": Tool(counted, description="Counted."),
        },
        name="numbers",
        **options,
    )


TABLE = registry()


# --------------------------------------------------------------------------- #
# dispatch_json: every literal that does not denote a finite number


NON_FINITE_LITERALS = [
    "1e400",
    "-1e999",
    "1E309",
    "2e308",
    "1.7976931348623159e308",
    "-1.8e308",
    "1" + "0" * 400 + ".0",
    "0.1e99999",
    "NaN",
    "Infinity",
    "-Infinity",
]


def _request(name: str, args_text: str) -> str:
    return '{"name": ' + json.dumps(name) + ', "args": ' + args_text + "}"


PLACES = [
    ("amount", '{"amount": LIT}'),
    ("optional", '{"amount": LIT}'),
    ("many", '{"values": [1.5, LIT]}'),
    ("table_of", '{"table": {"a": [LIT]}}'),
    ("located", '{"point": {"x": LIT}}'),
    ("anything", '{"value": {"deep": [[{"n": LIT}]]}}'),
    ("counted", '{"count": LIT}'),
]


@pytest.mark.parametrize("literal", NON_FINITE_LITERALS)
@pytest.mark.parametrize(("tool", "template"), PLACES, ids=[p[0] for p in PLACES])
def test_dispatch_json_refuses_non_finite_literals_before_anything_runs(
    literal: str, tool: str, template: str, tmp_path: Path
) -> None:
    CALLED.clear()
    audit = tmp_path / "audit.jsonl"
    with JsonLinesAuditSink(audit) as sink:
        observation = registry(sinks=[sink]).dispatch_json(
            _request(tool, template.replace("LIT", literal))
        )
    assert observation.code == "invalid_request"
    assert CALLED == []
    [line] = audit.read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["outcome"] == "invalid_request"


@given(
    mantissa=st.integers(min_value=1, max_value=9),
    exponent=st.integers(min_value=309, max_value=10**6),
    negative=st.booleans(),
)
def test_any_overflowing_exponent_is_an_invalid_request(
    mantissa: int, exponent: int, negative: bool
) -> None:
    CALLED.clear()
    literal = f"{'-' if negative else ''}{mantissa}e{exponent}"
    observation = TABLE.dispatch_json(_request("amount", '{"amount": ' + literal + "}"))
    assert observation.code == "invalid_request"
    assert CALLED == []


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_finite_float_still_runs(value: float) -> None:
    CALLED.clear()
    observation = TABLE.dispatch_json(_request("amount", '{"amount": ' + repr(value) + "}"))
    assert observation.ok
    assert CALLED == ["amount"]


@pytest.mark.parametrize("literal", NON_FINITE_LITERALS)
def test_a_replayed_trace_line_with_a_non_finite_literal_is_malformed(literal: str) -> None:
    CALLED.clear()
    line = '{"name": "amount", "args": {"amount": ' + literal + "}}"
    [replayed] = replay_lines(TABLE, [line])
    assert replayed.malformed
    assert replayed.differs
    assert CALLED == []


# --------------------------------------------------------------------------- #
# Python callers: non-finite values anywhere in what the handler would receive

INF, NAN = float("inf"), float("nan")


class FloatSub(float):
    pass


NON_FINITE_VALUES = [
    pytest.param(INF, id="inf"),
    pytest.param(-INF, id="-inf"),
    pytest.param(NAN, id="nan"),
    pytest.param(-NAN, id="-nan"),
    pytest.param(FloatSub("inf"), id="float-subclass-inf"),
    pytest.param(1e308 * 10, id="overflowed-product"),
]
NON_FINITE_DECIMALS = [
    pytest.param(Decimal("NaN"), id="Decimal-NaN"),
    pytest.param(Decimal("-NaN"), id="Decimal--NaN"),
    pytest.param(Decimal("Infinity"), id="Decimal-Infinity"),
    pytest.param(Decimal("-Infinity"), id="Decimal--Infinity"),
]


def _places(bad: Any) -> list[tuple[str, dict[str, object], str]]:
    """(tool, args, path of the bad value) for one bad float."""
    return [
        ("amount", {"amount": bad}, "amount"),
        ("optional", {"amount": bad}, "amount"),
        ("many", {"values": [1.0, bad]}, "values.1"),
        ("table_of", {"table": {"k": [0.5, 2.0, bad]}}, "table.k.2"),
        ("keyed", {"table": {1.0: 1, bad: 2}}, "table"),
        ("pair", {"pair": (1.0, bad)}, "pair.1"),
        ("anything", {"value": {"a": [{"b": bad}]}}, "value.a.0.b"),
        ("anything", {"value": bad}, "value"),
        ("located", {"point": {"x": 1.0, "y": bad}}, "point.y"),
        # A model instance is not JSON data: refused at the instance, before its fields.
        ("located", {"point": Point(x=bad)}, "point"),
        ("boxed", {"box": Box(size=bad)}, "box"),
        ("explicit", {"amount": bad}, "amount"),
        ("explicit", {"amount": 1.0, "where": {"x": bad}}, "where.x"),
        ("explicit", {"amount": 1.0, "where": Point(x=1.0, y=bad)}, "where"),
    ]


@pytest.mark.parametrize("bad", NON_FINITE_VALUES)
def test_python_callers_non_finite_floats_are_invalid_arguments_everywhere(
    bad: float, tmp_path: Path
) -> None:
    audit = tmp_path / "audit.jsonl"
    places = _places(bad)
    with JsonLinesAuditSink(audit) as sink:
        table = registry(sinks=[sink])
        for tool, args, path in places:
            CALLED.clear()
            observation = table.dispatch(tool, args)
            assert observation.code == "invalid_arguments", (tool, path)
            assert CALLED == [], (tool, path)
            assert observation.error is not None
            assert path in [detail[0] for detail in observation.error.details], (tool, path)
            assert "inf" not in observation.to_json().lower()
    written = [json.loads(line) for line in audit.read_text(encoding="utf-8").splitlines()]
    assert [line["outcome"] for line in written] == ["invalid_arguments"] * len(places)


@pytest.mark.parametrize("bad", NON_FINITE_DECIMALS)
def test_python_callers_non_finite_decimals_are_invalid_arguments(
    bad: Decimal, tmp_path: Path
) -> None:
    audit = tmp_path / "audit.jsonl"
    with JsonLinesAuditSink(audit) as sink:
        table = registry(sinks=[sink])
        calls: list[tuple[str, dict[str, object]]] = [
            ("money", {"amount": bad}),
            ("anything", {"value": [bad]}),
            ("anything", {"value": {"k": (Decimal(1), bad)}}),
        ]
        for tool, args in calls:
            CALLED.clear()
            observation = table.dispatch(tool, args)
            assert observation.code == "invalid_arguments", (tool, args)
            assert CALLED == []
    assert len(audit.read_text(encoding="utf-8").splitlines()) == 3


@pytest.mark.parametrize("bad", [*NON_FINITE_VALUES, *NON_FINITE_DECIMALS])
def test_a_refused_call_carrying_a_non_finite_value_is_still_audited_and_traced(
    bad: object, tmp_path: Path
) -> None:
    """``count`` is an int: the value is refused by the schema, and the record must survive it."""
    audit, trace = tmp_path / "audit.jsonl", tmp_path / "trace.jsonl"
    with JsonLinesAuditSink(audit) as sink, TraceRecorder(trace) as recorder:
        table = registry(sinks=[sink, recorder])
        refused = table.dispatch("counted", {"count": bad, "extra": [bad]})
        unknown = table.dispatch("no_such_tool", {"x": bad})
    assert refused.code == "invalid_arguments"
    assert unknown.code == "unknown_tool"
    written = [json.loads(line) for line in audit.read_text(encoding="utf-8").splitlines()]
    assert [line["outcome"] for line in written] == ["invalid_arguments", "unknown_tool"]
    traced = trace.read_text(encoding="utf-8").splitlines()
    assert len(traced) == 2
    for text in (audit.read_text(encoding="utf-8"), trace.read_text(encoding="utf-8")):
        assert "NaN" not in text
        assert "Infinity" not in text


@given(
    st.recursive(
        st.floats(allow_nan=False, allow_infinity=False) | st.integers() | st.text(max_size=3),
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
        ),
        max_leaves=12,
    ),
    st.sampled_from([INF, -INF, NAN]),
    st.data(),
)
def test_a_non_finite_float_hidden_anywhere_in_any_value_is_refused(
    value: object, bad: float, data: st.DataObject
) -> None:
    """Put ``bad`` at a random place inside a random JSON-like value of an ``Any`` argument."""

    def plant(node: object) -> object:
        if isinstance(node, list) and node and data.draw(st.booleans()):
            index = data.draw(st.integers(0, len(node) - 1))
            return [*node[:index], plant(node[index]), *node[index + 1 :]]
        if isinstance(node, dict) and node and data.draw(st.booleans()):
            key = data.draw(st.sampled_from(sorted(node)))
            return {**node, key: plant(node[key])}
        return [node, bad] if data.draw(st.booleans()) else bad

    CALLED.clear()
    observation = TABLE.dispatch("anything", {"value": plant(value)})
    assert observation.code == "invalid_arguments"
    assert CALLED == []


@pytest.mark.parametrize("value", [0.0, -0.0, 1e308, -1e-308, 5e-324, "1.5"])
def test_finite_edge_values_still_run(value: object) -> None:
    CALLED.clear()
    # A Decimal parameter takes its JSON form, a string (the table takes JSON data only).
    tool = "money" if isinstance(value, str) else "amount"
    key = "amount"
    observation = TABLE.dispatch(tool, {key: value})
    assert observation.ok, observation
    assert math.isfinite(float(value))  # type: ignore[arg-type]


# --------------------------------------------------------------------------- #
# MCP --registry: the SDK's own parser turns 1e400 and NaN into floats


MCP_TABLE = textwrap.dedent(
    """
    from pathlib import Path
    from typing import Any

    from boring_dispatch import Registry, Tool
    from boring_dispatch.observe.audit import JsonLinesAuditSink

    HERE = Path(__file__).parent

    def amount(amount: float) -> str:
        (HERE / "ran").write_text("yes")
        return "ran"

    def anything(value: Any) -> str:
        (HERE / "ran").write_text("yes")
        return "ran"

    TABLE = Registry(
        {
            "amount": Tool(amount, description="Amount."),
            "anything": Tool(anything, description="Anything."),
        },
        sinks=[JsonLinesAuditSink(HERE / "audit.jsonl")],
    )
    """
)


def test_mcp_registry_calls_with_non_finite_numbers_never_run_and_are_audited(
    tmp_path: Path,
) -> None:
    write_module(tmp_path, "numbers_table", MCP_TABLE)
    calls = [
        ("amount", '{"amount": ' + literal + "}")
        for literal in ("1e400", "-1e999", "NaN", "Infinity", "-Infinity")
    ] + [("anything", '{"value": {"a": [1, 1e400]}}'), ("anything", '{"value": [NaN]}')]
    with RawMcp(["mcp", "--registry", "numbers_table:TABLE"], cwd=tmp_path) as server:
        results = [server.call_raw(name, text) for name, text in calls]
        assert not (tmp_path / "ran").exists()
        finite = server.call_raw("amount", '{"amount": 1.5}')
    reached = 0
    for response in results:
        if "error" in response:
            # The strict wire refuses a message that is not JSON (NaN, Infinity, 1e400):
            # it never becomes a call, so the table neither runs nor records it.
            error = response["error"]
            assert isinstance(error, dict)
            assert error["code"] in {-32700, -32600}
            continue
        reached += 1
        result = response["result"]
        assert isinstance(result, dict)
        assert result["isError"] is True
        assert result["structuredContent"]["result"]["error"]["code"] == "invalid_arguments"
    assert isinstance(finite["result"], dict)
    assert finite["result"]["isError"] is False
    assert (tmp_path / "ran").exists()
    written = [
        json.loads(line)
        for line in (tmp_path / "audit.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert [line["outcome"] for line in written] == ["invalid_arguments"] * reached + ["ok"]
