"""Fixtures and fixture worlds: the tool side of a test, recorded or stood in.

::

    get_job_tool = Tool(get_job, description="Look up one job by id.", fixture=Fixture(
        Recorded({"job_id": 7}, result={"job_id": 7, "status": "scheduled"}),
        Recorded({"job_id": 8}, error="no such job"),
    ))
    world = SUPPORT.fixture_world()          # same names, schemas, descriptions, policy bits
    world.dispatch("get_job", {"job_id": 7})  # answered by the fixture; get_job never runs

A fixture is either recorded outcomes, keyed by the **canonical validated
arguments** (validated by the tool's own schema, defaults filled in, as JSON,
sensitive values replaced by ``"[redacted]"``, keys sorted), or a stand-in:
a side-effect-free callable whose schema is exactly the tool's.

In a fixture world every handler is an answer built here: the real handlers
are not in the world's entries nor in its ``tools``, so none of them can run.
A call whose arguments have no recorded outcome (and no stand-in) is the
observation ``no_fixture``, never a silent success. Policy bits, validation,
the result checks and the audit sinks are the table's own: the world is the
same pipeline with other handlers.

Sensitive values never key the lookup: two calls that differ only in a secret
find the same outcome, and a recorded key holds ``"[redacted]"`` where the
secret was (:func:`fixture_args`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Final, Protocol, TypeVar, final

from boring_dispatch.errors import InvalidArguments, NoFixture, RegistryInvalid, ToolError
from boring_dispatch.observe.redact import PLACEHOLDER, redact
from boring_dispatch.registry import pipeline
from boring_dispatch.registry._canonical import canonical_text, fixture_args

if TYPE_CHECKING:
    from boring_dispatch.observe.redact import SensitiveNode
    from boring_dispatch.registry.schema import ArgumentSchema

__all__ = [
    "Fixture",
    "Recorded",
    "Unused",
    "canonical_text",
    "fixture_args",
    "unused_fixtures",
    "world_parts",
]

_NO_ANSWER: Final = "no fixture for these arguments of tool {name}"


@final
@dataclass(frozen=True, slots=True, eq=False)
class Recorded:
    """One recorded outcome: the arguments of a call and its ``result`` or ``ToolError`` message.

    Args:
        args: the call's arguments, as a client sends them (JSON data).
        result: what the handler returned (JSON data), when ``error`` is ``None``.
        error: the message of the ``ToolError`` the handler raised.
        canonical: ``args`` are already the canonical arguments (as a fixture
            file holds them, sensitive values redacted): used as the key as
            they are, after a check that they hold no unredacted secret.
    """

    args: Mapping[str, object]
    result: object = None
    error: str | None = None
    canonical: bool = False


@final
@dataclass(frozen=True, slots=True, eq=False)
class Fixture:
    """The fixture of one tool: recorded outcomes, or a stand-in, or both.

    ``Fixture(Recorded(...), ...)`` records outcomes;
    ``Fixture(stand_in=fake_get_job)`` stands in with a side-effect-free
    callable of the same signature (recorded outcomes are tried first).
    """

    recorded: tuple[Recorded, ...]
    stand_in: Callable[..., object] | None

    def __init__(self, *recorded: Recorded, stand_in: Callable[..., object] | None = None) -> None:
        for item in recorded:
            if not isinstance(item, Recorded):
                raise RegistryInvalid("a Fixture holds Recorded(...) outcomes")
        if stand_in is not None and not callable(stand_in):
            raise RegistryInvalid("a fixture's stand_in must be callable")
        object.__setattr__(self, "recorded", tuple(recorded))
        object.__setattr__(self, "stand_in", stand_in)


@final
@dataclass(frozen=True, slots=True)
class _Outcome:
    """A recorded answer: the result's JSON text, or a ``ToolError`` message."""

    result_text: str | None
    error: str | None


@final
class _Answer:
    """The handler of a fixture world: looks the canonical arguments up, or stands in."""

    __slots__ = ("args_of", "name", "outcomes", "stand_in", "used")

    def __init__(
        self,
        name: str,
        schema: ArgumentSchema,
        outcomes: Mapping[str, _Outcome],
        stand_in: Callable[..., object] | None,
    ) -> None:
        self.name: Final = name
        self.args_of: Final = schema
        self.outcomes: Final = outcomes
        self.stand_in: Final = stand_in
        #: Keys answered so far (for :func:`unused_fixtures`).
        self.used: set[str] = set()

    def __call__(self, **kwargs: object) -> object:
        try:
            key = canonical_text(fixture_args(self.args_of, kwargs))
        except ValueError:
            key = None
        outcome = None if key is None else self.outcomes.get(key)
        if outcome is not None and key is not None:
            self.used.add(key)
            if outcome.error is not None:
                raise ToolError(outcome.error)
            return json.loads(outcome.result_text or "null")
        if self.stand_in is not None:
            return self.stand_in(**kwargs)
        raise NoFixture(_NO_ANSWER.format(name=repr(self.name[:64])))


class _HasHandler(Protocol):
    @property
    def handler(self) -> Callable[..., object]: ...
    @property
    def args(self) -> object: ...


_ToolT = TypeVar("_ToolT", bound=_HasHandler)


def world_parts(
    table: pipeline.Table,
    tools: Mapping[str, _ToolT],
    fixtures: Mapping[str, Fixture],
    *,
    allow_missing: bool,
) -> tuple[pipeline.Table, Mapping[str, _ToolT]]:
    """The entries and tools of a fixture world over ``table`` (same schemas and policy bits).

    ``fixtures`` are the tools' fixtures by name (the caller merges the
    :class:`Tool`'s own with those of a file). Every answer is checked here:
    recorded arguments must fit the schema, two outcomes must not share a key,
    a stand-in's schema must be the tool's.

    Raises:
        RegistryInvalid: a fixture names a tool the table lacks, a tool has no
            fixture (unless ``allow_missing``), or a fixture does not fit its tool.
    """
    for name in fixtures:
        if name not in table.entries:
            raise RegistryInvalid(f"a fixture names tool {name!r}, which the table does not have")
    missing = sorted(name for name in table.entries if name not in fixtures)
    if missing and not allow_missing:
        raise RegistryInvalid(f"no fixture for tools {missing}: a fixture world answers every tool")
    entries: dict[str, pipeline.Entry] = {}
    world_tools: dict[str, _ToolT] = {}
    for name, entry in table.entries.items():
        fixture = fixtures.get(name, Fixture())
        answer = _answer(name, entry.schema, tools[name], fixture)
        entries[name] = replace(entry, handler=answer, fixture=True)
        world_tools[name] = replace(tools[name], handler=answer)  # type: ignore[type-var]
    world = replace(table, entries=MappingProxyType(entries), audit=pipeline.AuditHealth())
    return world, MappingProxyType(world_tools)


def _answer(name: str, schema: ArgumentSchema, tool: _HasHandler, fixture: Fixture) -> _Answer:
    outcomes: dict[str, _Outcome] = {}
    for number, item in enumerate(fixture.recorded, start=1):
        if item.canonical is True:
            key = _canonical_key(name, number, schema, item.args)
        else:
            key = _recorded_key(name, number, schema, item.args)
        if key in outcomes:
            raise RegistryInvalid(
                f"tool {name!r}: fixture outcome {number} has the same arguments as an earlier one"
            )
        outcomes[key] = _outcome(name, number, item)
    if fixture.stand_in is not None:
        _check_stand_in(name, schema, tool, fixture.stand_in)
    return _Answer(name, schema, MappingProxyType(outcomes), fixture.stand_in)


def _recorded_key(
    name: str, number: int, schema: ArgumentSchema, args: Mapping[str, object]
) -> str:
    where = f"tool {name!r}: fixture outcome {number}"
    if not isinstance(args, Mapping):
        raise RegistryInvalid(f"{where}: the arguments are not an object")
    try:
        return canonical_text(fixture_args(schema, schema.validate(dict(args))))
    except InvalidArguments as error:
        paths = sorted({path for path, _ in error.details})
        raise RegistryInvalid(f"{where}: the arguments do not fit the schema at {paths}") from None
    except ValueError:
        raise RegistryInvalid(f"{where}: the arguments are not JSON data") from None


def _canonical_key(
    name: str, number: int, schema: ArgumentSchema, args: Mapping[str, object]
) -> str:
    where = f"tool {name!r}: fixture outcome {number}"
    try:
        key = canonical_text(dict(args))
    except (TypeError, ValueError):
        raise RegistryInvalid(f"{where}: the arguments are not a JSON object") from None
    unknown = sorted(set(args) - schema.accepted)
    if unknown:
        raise RegistryInvalid(f"{where}: arguments the schema does not accept: {unknown}")
    if canonical_text(redact(dict(args), schema.sensitive)) != key:
        raise RegistryInvalid(f"{where}: the arguments hold an unredacted sensitive value")
    try:
        validated = schema.validate(dict(args))
    except InvalidArguments as error:
        # The placeholder may not fit a sensitive place (an int, a model), or an item the
        # schema could not tell from one holding a secret (``list[int | Card]``, redacted
        # fail-closed): only there is a refusal expected; the arguments are used as written.
        wrong = sorted(
            {
                p
                for p, _ in error.details
                if not _secret_at(p, schema.sensitive) and not _placeholder_at(args, p)
            }
        )
        if wrong:
            raise RegistryInvalid(
                f"{where}: the arguments do not fit the schema at {wrong}"
            ) from None
        validated = dict(args)  # as written; the defaults are filled in below
    try:
        return canonical_text(fixture_args(schema, validated))
    except ValueError:
        raise RegistryInvalid(f"{where}: the arguments are not JSON data") from None


def _placeholder_at(args: Mapping[str, object], path: str) -> bool:
    """Whether the detail path ``a.0.b`` leads to a placeholder in ``args``.

    A step that is not a member or an index here is a union's choice label and is skipped.
    """
    value: object = args
    for part in path.split("."):
        if value == PLACEHOLDER:
            return True
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdecimal() and int(part) < len(value):
            value = value[int(part)]
    return value == PLACEHOLDER


def _secret_at(path: str, node: SensitiveNode | None) -> bool:
    """Whether the detail path ``a.0.b`` (cut at a secret) reaches a sensitive place."""
    for part in path.split("."):
        if node is None:
            return False
        if node.whole or part == PLACEHOLDER:
            return True
        node = node.keys.get(part) or node.items
    return node is not None and node.whole


def _outcome(name: str, number: int, item: Recorded) -> _Outcome:
    if item.error is not None:
        if type(item.error) is not str or item.result is not None:
            raise RegistryInvalid(
                f"tool {name!r}: fixture outcome {number} is a result or a message, not both"
            )
        return _Outcome(None, item.error)
    try:
        return _Outcome(canonical_text(item.result), None)
    except ValueError:
        raise RegistryInvalid(
            f"tool {name!r}: fixture outcome {number}: the result is not JSON data"
        ) from None


def _check_stand_in(
    name: str, schema: ArgumentSchema, tool: _HasHandler, stand_in: Callable[..., object]
) -> None:
    from boring_dispatch.registry.schema import build_schema

    model = tool.args if isinstance(tool.args, type) else None
    own = build_schema(name, stand_in, model)
    if canonical_text(dict(own.json_schema)) != canonical_text(dict(schema.json_schema)):
        raise RegistryInvalid(f"tool {name!r}: the stand-in's signature is not the tool's")


@final
@dataclass(frozen=True, slots=True)
class Unused:
    """A recorded outcome no call of a fixture world has used."""

    tool: str
    #: The canonical arguments of the outcome (JSON text).
    args: str = field(default="{}")


def unused_fixtures(tools: Mapping[str, _HasHandler]) -> tuple[Unused, ...]:
    """The recorded outcomes a fixture world's calls have not used so far, sorted.

    ``tools`` is the world's ``tools``; a tool whose handler is not a fixture
    answer has nothing to report.
    """
    found: list[Unused] = []
    for name, tool in tools.items():
        handler = tool.handler
        if isinstance(handler, _Answer):
            found.extend(Unused(name, key) for key in handler.outcomes if key not in handler.used)
    return tuple(sorted(found, key=lambda item: (item.tool, item.args)))
