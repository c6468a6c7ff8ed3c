"""Arguments are JSON data, validated in strict JSON mode, at every depth.

Finding 1: a parameter typed ``date``, ``UUID``, ``Decimal``, ``tuple``, ``set``,
an enum... advertised a string or an array in its schema but could not be
called from JSON (strict Python-mode validation wanted the Python object).
Now the schema's own JSON form of a value is accepted on every surface, lax
coercions stay refused, and ``dispatch`` (Python dict) and ``dispatch_json``
agree on every input.

Finding 5: only the top level refused unknown members; a nested model,
dataclass or TypedDict dropped them silently (and a nested model was lax).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import enum
import ipaddress
import json
import pathlib
import uuid
from collections.abc import Callable
from typing import Annotated, Any, Literal, Optional, cast

import pydantic
import pytest
import typing_extensions
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field

from boring_dispatch import Observation, Registry, Tool
from boring_dispatch.errors import RegistryInvalid
from boring_dispatch.testing import CapturingSink

STRICT = ConfigDict(strict=True, extra="forbid")


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Mode(enum.StrEnum):
    FAST = "fast"
    SLOW = "slow"


def _table(annotation: object, received: list[object]) -> Registry:
    return Registry({"take": Tool(_take_into(annotation, received), description="Take one.")})


_CACHE: dict[str, tuple[Registry, list[object]]] = {}


def _cached(annotation: object, key: str) -> tuple[Registry, list[object]]:
    """One table per type for all examples of a property (building one costs milliseconds)."""
    if key not in _CACHE:
        received: list[object] = []
        _CACHE[key] = (_table(annotation, received), received)
    table, received = _CACHE[key]
    received.clear()
    return table, received


def _both(table: Registry, args: dict[str, object]) -> tuple[Observation, Observation]:
    """The same call through ``dispatch`` (a Python dict) and ``dispatch_json`` (text)."""
    text = json.dumps({"name": "take", "args": args})
    return table.dispatch("take", args), table.dispatch_json(text)


def _json_types(schema: dict[str, Any], defs: dict[str, Any]) -> set[str]:
    """The JSON types a (pydantic-shaped) JSON Schema admits."""
    if "$ref" in schema:
        return _json_types(defs[schema["$ref"].removeprefix("#/$defs/")], defs)
    if "anyOf" in schema:
        return set().union(*(_json_types(s, defs) for s in schema["anyOf"]))
    if "enum" in schema:
        return {_json_type(value) for value in schema["enum"]}
    if "const" in schema:
        return {_json_type(schema["const"])}
    kind = schema["type"]
    return {kind} if isinstance(kind, str) else set(kind)


_JSON_TYPES: list[tuple[type, str]] = [
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
]


def _json_type(value: object) -> str:
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), "null")


_finite = st.decimals(
    allow_nan=False, allow_infinity=False, places=4, min_value=-(10**9), max_value=10**9
)
#: Offsets ISO 8601 can write (historic zones have offsets in seconds).
_ZONES = [dt.UTC, dt.timezone(dt.timedelta(hours=5, minutes=30))]
#: Every type whose JSON form differs from its Python form, with values of it.
FAMILY: list[tuple[object, st.SearchStrategy[Any]]] = [
    (Color, st.sampled_from(Color)),
    (Level, st.sampled_from(Level)),
    (Mode, st.sampled_from(Mode)),
    (Literal["a", "b"], st.sampled_from(["a", "b"])),
    (dt.date, st.dates()),
    (dt.datetime, st.datetimes()),
    (dt.datetime, st.datetimes(timezones=st.sampled_from(_ZONES))),
    (dt.time, st.times()),
    (
        dt.timedelta,
        st.timedeltas(min_value=dt.timedelta(days=-999), max_value=dt.timedelta(days=999)),
    ),
    (uuid.UUID, st.uuids()),
    (decimal.Decimal, _finite),
    (bytes, st.text().map(str.encode)),
    (tuple[int, str], st.tuples(st.integers(), st.text())),
    (tuple[int, ...], st.lists(st.integers()).map(tuple)),
    (set[int], st.sets(st.integers())),
    (frozenset[str], st.frozensets(st.text())),
    (pathlib.Path, st.sampled_from(["/srv/data", "a/b.txt", "."]).map(pathlib.Path)),
    (ipaddress.IPv4Address, st.ip_addresses(v=4)),
    (ipaddress.IPv6Address, st.ip_addresses(v=6)),
    (
        ipaddress.IPv4Network,
        st.sampled_from(["10.0.0.0/8", "192.0.2.0/24"]).map(ipaddress.IPv4Network),
    ),
    (list[dt.date], st.lists(st.dates(), max_size=3)),
    (dict[str, uuid.UUID], st.dictionaries(st.text(), st.uuids(), max_size=3)),
    (Optional[dt.date], st.none() | st.dates()),  # noqa: UP045 - the Optional spelling
    (dt.date | uuid.UUID, st.dates() | st.uuids()),
]


@pytest.mark.parametrize("case", range(len(FAMILY)), ids=lambda i: str(FAMILY[i][0]))
@settings(max_examples=40)
@given(data=st.data())
def test_the_json_form_the_schema_advertises_is_accepted_on_both_paths(
    case: int, data: st.DataObject
) -> None:
    annotation, values = FAMILY[case]
    value = data.draw(values)
    adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(cast("Any", annotation))
    wire = json.loads(adapter.dump_json(value))
    table, received = _cached(annotation, f"family-{case}")
    schema = table.tool_schemas("mcp")[0]["inputSchema"]
    assert isinstance(schema, dict)
    assert _json_type(wire) in _json_types(schema["properties"]["value"], schema.get("$defs", {}))
    direct, parsed = _both(table, {"value": wire})
    assert direct.to_dict() == parsed.to_dict() == {"ok": True, "result": {"taken": True}}
    assert received == [value, value]


LAX: list[tuple[object, object]] = [
    (int, "12"),
    (int, 1.5),
    (int, True),
    (int, None),
    (float, "1.5"),
    (float, True),
    (bool, "yes"),
    (bool, "true"),
    (bool, 1),
    (str, 5),
    (str, ["a"]),
    (Color, "RED"),
    (Level, "1"),
    (Mode, "FAST"),
    (Literal[1], "1"),
    (dt.date, 1700000000),
    (dt.date, "2024-01-02T03:04:05Z"),
    (dt.datetime, 1700000000),
    (dt.time, 3600),
    (dt.timedelta, 3600),
    (uuid.UUID, 5),
    (uuid.UUID, "not-a-uuid"),
    (decimal.Decimal, True),
    (decimal.Decimal, "abc"),
    (bytes, 5),
    (bytes, [1, 2]),
    (tuple[int, str], {"0": 1, "1": "a"}),
    (tuple[int, str], [1, "a", "extra"]),
    (set[int], "12"),
    (set[int], ["1"]),
    (pathlib.Path, 5),
    (ipaddress.IPv4Address, 16909060),
    (ipaddress.IPv4Address, "1.2.3"),
    (list[int], ["1"]),
    (dict[str, int], {"a": "1"}),
]


@pytest.mark.parametrize(("annotation", "value"), LAX, ids=repr)
def test_lax_coercions_are_refused_on_both_paths(annotation: object, value: object) -> None:
    received: list[object] = []
    table = _table(annotation, received)
    direct, parsed = _both(table, {"value": value})
    assert direct.to_dict() == parsed.to_dict()
    assert direct.code == "invalid_arguments"
    assert received == []


NOT_JSON: list[tuple[object, object]] = [
    (dt.date, dt.date(2024, 5, 1)),
    (dt.datetime, dt.datetime(2024, 5, 1, tzinfo=dt.UTC)),
    (uuid.UUID, uuid.UUID(int=7)),
    (decimal.Decimal, decimal.Decimal("1.5")),
    (bytes, b"raw"),
    (set[int], {1, 2}),
    (frozenset[int], frozenset({1})),
    (Color, Color.RED),
    (pathlib.Path, pathlib.Path("/srv")),
    (ipaddress.IPv4Address, ipaddress.IPv4Address("192.0.2.1")),
    (float, float("nan")),
    (float, float("inf")),
    (dict[str, int], {1: 1}),
    (list[int], [object()]),
]


@pytest.mark.parametrize(("annotation", "value"), NOT_JSON, ids=repr)
def test_python_objects_that_are_not_json_data_are_refused_like_any_other_bad_value(
    annotation: object, value: object
) -> None:
    """``dispatch`` takes JSON data, as ``dispatch_json`` does: one rule on every surface."""
    received: list[object] = []
    observation = _table(annotation, received).dispatch("take", {"value": value})
    assert observation.code == "invalid_arguments"
    assert observation.error is not None
    [(path, reason)] = observation.error.details
    assert path in {"value", "value.0"}
    assert reason.startswith("not JSON data")
    assert received == []


def test_json_enum_members_given_by_python_callers_are_their_json_values() -> None:
    received: list[object] = []
    table = _table(Mode, received)
    assert table.dispatch("take", {"value": Mode.FAST}).ok  # a str enum is a JSON string
    assert received == [Mode.FAST]


def test_a_cycle_or_a_very_deep_python_value_is_refused_not_a_crash() -> None:
    cycle: list[object] = []
    cycle.append(cycle)
    deep: list[object] = []
    for _ in range(5000):
        deep = [deep]
    table = _table(list[Any], [])
    for value in (cycle, deep):
        observation = table.dispatch("take", {"value": value})
        assert observation.code == "invalid_arguments"


# --------------------------------------------------------------------------- #
# Finding 5: strict at every depth.


class Inner(BaseModel):
    count: int


class InnerIgnore(BaseModel):
    model_config = ConfigDict(extra="ignore")
    count: int


class InnerTypedDictX(typing_extensions.TypedDict):
    count: int


@dataclasses.dataclass
class InnerDataclass:
    count: int


@pydantic.dataclasses.dataclass
class InnerPydanticDataclass:
    count: int


class Outer(BaseModel):
    inner: Inner


INNER_KINDS = [Inner, InnerIgnore, InnerTypedDictX, InnerDataclass, InnerPydanticDataclass]
#: (annotation of, wrap an inner object into such a value, path prefix of the inner object)
SHAPES: list[tuple[Callable[[type], object], Callable[[object], object], tuple[str | int, ...]]] = [
    (lambda inner: inner, lambda obj: obj, ()),
    (lambda inner: list[inner], lambda obj: [obj], (0,)),  # type: ignore[valid-type]
    (lambda inner: dict[str, inner], lambda obj: {"k": obj}, ("k",)),  # type: ignore[valid-type]
    (lambda inner: Optional[inner], lambda obj: obj, ()),  # noqa: UP045
    (lambda inner: tuple[inner, ...], lambda obj: [obj], (0,)),  # type: ignore[valid-type]
]


_AUDITED: dict[str, tuple[Registry, list[object], CapturingSink]] = {}


@pytest.mark.parametrize("inner", INNER_KINDS, ids=lambda kind: kind.__name__)
@pytest.mark.parametrize("shape", range(len(SHAPES)))
@settings(max_examples=15)
@given(
    extra=st.text(min_size=1).filter(lambda key: key != "count" and "CANARY" not in key),
    value=st.text().map(lambda text: f"CANARY-{text}"),
)
def test_unknown_members_of_nested_objects_are_refused_at_every_depth(
    inner: type, shape: int, extra: str, value: str
) -> None:
    make, wrap, prefix = SHAPES[shape]
    received: list[object] = []
    sink = CapturingSink()
    key = f"extra-{inner.__name__}-{shape}"
    if key not in _AUDITED:
        tool = Tool(_take_into(make(inner), received), description="Take one value.")
        _AUDITED[key] = (Registry({"take": tool}, sinks=[sink]), received, sink)
    table, received, sink = _AUDITED[key]
    received.clear()
    sink.events.clear()
    args = {"value": wrap({"count": 1, extra: value})}
    direct, parsed = _both(table, args)
    assert direct.to_dict() == parsed.to_dict()
    assert direct.code == "invalid_arguments"
    assert direct.error is not None
    paths = [path for path, _ in direct.error.details]
    assert ".".join(str(part) for part in ("value", *prefix, extra))[:200] in paths
    assert received == []
    # The unknown member may be a misspelled secret: the audit record never shows it.
    assert len(sink.events) == 2
    for event in sink.events:
        assert "CANARY-" not in json.dumps(event.args)


@pytest.mark.parametrize("inner", INNER_KINDS, ids=lambda kind: kind.__name__)
def test_nested_objects_are_strict_too(inner: type) -> None:
    received: list[object] = []
    table = _table(inner, received)
    for bad in ("1", 1.0, True):
        direct, parsed = _both(table, {"value": {"count": bad}})
        assert direct.code == parsed.code == "invalid_arguments"
    assert table.dispatch("take", {"value": {"count": 1}}).ok
    assert len(received) == 1


def _closed_objects(schema: object, found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(schema, dict):
        if "properties" in schema:
            found.append(schema)
        for member in schema.values():
            _closed_objects(member, found)
    elif isinstance(schema, list):
        for member in schema:
            _closed_objects(member, found)
    return found


@pytest.mark.parametrize("inner", INNER_KINDS, ids=lambda kind: kind.__name__)
@pytest.mark.parametrize("style", ["openai", "anthropic", "mcp"])
def test_the_published_schema_is_closed_at_every_depth(inner: type, style: str) -> None:
    table = _table(Outer if inner is Inner else list[inner], [])  # type: ignore[valid-type]
    listed = table.tool_schemas(style)  # type: ignore[arg-type]
    objects = _closed_objects(listed, [])
    assert len(objects) >= 2  # the arguments and the nested object
    assert all(obj.get("additionalProperties") is False for obj in objects)


class Open(BaseModel):
    model_config = ConfigDict(extra="allow")
    count: int


@pydantic.dataclasses.dataclass(config=ConfigDict(extra="allow"))
class OpenDataclass:
    count: int


@pydantic.with_config(ConfigDict(extra="allow"))
class OpenTypedDict(typing_extensions.TypedDict):
    count: int


class OpenArgs(BaseModel):
    model_config = STRICT
    value: list[Open]


@pytest.mark.parametrize(
    "annotation",
    [Open, OpenDataclass, OpenTypedDict, list[Open], dict[str, OpenDataclass], Optional[Open]],  # noqa: UP045
    ids=repr,
)
def test_a_nested_model_that_allows_extra_members_is_refused_when_the_table_is_built(
    annotation: object,
) -> None:
    with pytest.raises(RegistryInvalid, match="extra='allow'"):
        _table(annotation, [])


def test_an_explicit_args_model_with_an_open_nested_model_is_refused_too() -> None:
    def take(value: list[Open]) -> None:
        del value

    with pytest.raises(RegistryInvalid, match="extra='allow'"):
        Registry({"take": Tool(take, description="Take.", args=OpenArgs)})


class Limits(BaseModel):
    model_config = STRICT
    low: Annotated[int, Field(ge=0)]
    when: dt.date


def test_an_explicit_model_validates_json_forms_and_nested_strictness() -> None:
    received: list[object] = []

    def plan(low: int, when: dt.date) -> dict[str, object]:
        received.append((low, when))
        return {"planned": True}

    table = Registry({"take": Tool(plan, description="Plan.", args=Limits)})
    direct, parsed = _both(table, {"low": 1, "when": "2024-05-01"})
    assert direct.ok
    assert parsed.ok
    assert received == [(1, dt.date(2024, 5, 1))] * 2
    bad_calls: list[dict[str, object]] = [
        {"low": "1", "when": "2024-05-01"},
        {"low": 1, "when": 1700000000},
    ]
    for bad in bad_calls:
        direct, parsed = _both(table, bad)
        assert direct.code == parsed.code == "invalid_arguments"


def _take_into(annotation: object, received: list[object]) -> Callable[..., object]:
    def take(value: Any) -> dict[str, object]:
        received.append(value)
        return {"taken": True}

    take.__annotations__ = {"value": annotation, "return": dict[str, object]}
    return take
