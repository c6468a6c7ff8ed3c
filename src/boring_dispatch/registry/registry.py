"""The Python table: a dict you typed, frozen into a reviewable allowlist.

::

    SUPPORT = Registry({
        "get_job": Tool(get_job, description="Look up one job by id."),
        "finish": Tool(finish, description="End the session with an answer."),
    }, name="support")

    SUPPORT.names()                            # ('finish', 'get_job')
    SUPPORT.dispatch("get_job", {"job_id": 7})  # -> Observation

A :class:`Registry` checks everything it can when it is built (names,
descriptions, schemas) and cannot change afterwards: there is no
``register()``, no item assignment, no discovery, and :meth:`Registry.restrict`
only shrinks. Surfaces share handlers, never tables.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import KW_ONLY, dataclass, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal, NoReturn, final

from boring_dispatch.errors import RegistryInvalid, UnknownTool
from boring_dispatch.observe.audit import AuditSink
from boring_dispatch.records import AUDIENCES
from boring_dispatch.registry import pipeline
from boring_dispatch.registry._checks import check_description, check_name, check_schema_text
from boring_dispatch.registry._synchronous import check_synchronous
from boring_dispatch.registry.fixtures import Fixture, world_parts
from boring_dispatch.registry.schema import build_schema
from boring_dispatch.registry.tool_specs import (
    SCHEMA_FORMATS,
    SchemaFormat,
    ToolSpec,
    check_provider_name,
    spec_of,
)

if TYPE_CHECKING:
    from pydantic import BaseModel

    from boring_dispatch.observation import Observation

__all__ = ["Audience", "Registry", "SchemaStyle", "Tool", "ToolSpec"]

#: Who a tool's result text is meant for, when a surface (MCP) shows text content.
Audience = Literal["machine", "human", "both"]
#: The prompt tool-list formats of :meth:`Registry.tool_schemas` (see ``tool_specs``).
SchemaStyle = SchemaFormat


@final
@dataclass(frozen=True, slots=True)
class Tool:
    """One row of a table: the handler (implementation) plus what makes it a tool.

    Args:
        handler: the function to call with keyword arguments.
        description: what the model reads; required, plain text.
        args: an explicit pydantic model (strict, ``extra="forbid"``) instead
            of the schema derived from the handler's signature.
        enabled: policy bit; a disabled tool is left out of the built table
            and is indistinguishable from an unknown one.
        audience: who the result text is for (``machine``, ``human`` or
            ``both``) when a surface shows text content, as the MCP server
            does. Defaults to ``both``: a table tool's result is usually meant
            for the model and fine to preview.
        confirm: policy bit; every call is ``denied`` (handler not called)
            unless the client passes ``dispatch(..., confirmed=True)``, for
            example after a person approved it. Nothing the model writes can
            confirm: ``dispatch_json``, replay and MCP never do.
        fixture: what answers this tool in a :meth:`Registry.fixture_world`
            (recorded outcomes or a stand-in); never used by the table itself.
    """

    handler: Callable[..., object]
    _: KW_ONLY
    description: str
    args: type[BaseModel] | None = None
    enabled: bool = True
    audience: Audience = "both"
    confirm: bool = False
    fixture: Fixture | None = None


@final
class Registry:
    """A frozen allowlist of tools and the one entry point that calls them.

    Args:
        tools: name -> :class:`Tool`. Copied at construction; later changes
            to the mapping change nothing.
        name: the surface name (``support``, ``billing``) written in audit lines.
        limits: request, depth, observation and message caps.
        sinks: audit sinks, each told about every call. None by default.

    Raises:
        RegistryInvalid: a name does not match ``[A-Za-z0-9_.-]{1,64}``, a
            value is not a :class:`Tool`, a description is not a ``str`` or is
            missing, too long or holds control/invisible characters (as does
            any text of an argument schema), ``enabled``
            or ``confirm`` is not exactly ``True`` or ``False``, an audience is
            not one of the three strings, ``args`` is not a model class, the
            handler is asynchronous in any disguise (or declares an awaitable,
            iterator or generator result), a schema does not build, ``limits``
            is not a :class:`~boring_dispatch.registry.pipeline.TableLimits`, or a sink
            has no ``record`` method.
    """

    __slots__ = ("_names", "_table", "_tools")
    _table: pipeline.Table
    _tools: Mapping[str, Tool]
    _names: tuple[str, ...]

    def __init__(
        self,
        tools: Mapping[str, Tool],
        *,
        name: str = "default",
        limits: pipeline.TableLimits | None = None,
        sinks: Iterable[AuditSink] = (),
    ) -> None:
        if hasattr(self, "_table"):  # built once: __init__ called again must not regrow it
            raise RegistryInvalid("a Registry is built once; build a new one instead")
        if not isinstance(tools, Mapping):
            raise RegistryInvalid("a Registry is built from a mapping of name -> Tool")
        if limits is not None and type(limits) is not pipeline.TableLimits:
            raise RegistryInvalid("limits must be a TableLimits")
        snapshot = dict(tools)
        check_name("surface", name)
        entries: dict[str, pipeline.Entry] = {}
        kept: dict[str, Tool] = {}
        for tool_name, tool in snapshot.items():
            check_name("tool", tool_name)
            check_tool(tool_name, tool)
            schema = build_schema(tool_name, tool.handler, tool.args)
            check_schema_text(tool_name, schema.json_schema)
            check_provider_name(name, tool_name)
            if tool.enabled:
                entries[tool_name] = pipeline.Entry(tool.handler, schema, tool.confirm is True)
                kept[tool_name] = tool
        chosen = tuple(sinks)
        for sink in chosen:
            if not isinstance(sink, AuditSink):
                raise RegistryInvalid(f"sink {type(sink).__name__} has no record(event) method")
        table = pipeline.Table(
            name, MappingProxyType(entries), limits or pipeline.TableLimits(), chosen
        )
        self._init(table, MappingProxyType(kept))

    def _init(self, table: pipeline.Table, tools: Mapping[str, Tool]) -> None:
        object.__setattr__(self, "_table", table)
        object.__setattr__(self, "_tools", tools)
        object.__setattr__(self, "_names", tuple(sorted(tools)))

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError("a Registry is read-only")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError("a Registry is read-only")

    def __repr__(self) -> str:
        return f"Registry(name={self._table.surface!r}, names={self._names!r})"

    @property
    def name(self) -> str:
        """The surface name written in audit lines."""
        return self._table.surface

    @property
    def limits(self) -> pipeline.TableLimits:
        """The caps this table applies."""
        return self._table.limits

    @property
    def tools(self) -> Mapping[str, Tool]:
        """The enabled tools by name (a read-only view)."""
        return self._tools

    def names(self) -> tuple[str, ...]:
        """The bound names, sorted: the allowlist as data (compare it to a golden file)."""
        return self._names

    def dispatch(
        self,
        name: str,
        args: Mapping[str, object] | None = None,
        *,
        confirmed: bool = False,
        context: Mapping[str, object] | None = None,
    ) -> Observation:
        """Call one tool through the pipeline; ``None`` args mean ``{}``.

        ``args`` are JSON data (string keys; lists or tuples; str, int, finite
        float, bool, None), validated exactly as :meth:`dispatch_json` validates
        the same call: pass ``"2024-05-01"`` for a ``date``, not a ``date``.
        Never raises for a bad name or bad arguments: every outcome, including
        an exception in the handler, is an :class:`Observation`. ``confirmed``
        is the client's approval of this one call, for tools built with
        ``confirm=True`` (otherwise they are ``denied``). ``context`` supplies
        the tool's ``Injected`` parameters (which the model may not send).
        """
        return pipeline.dispatch(
            self._table,
            name,
            {} if args is None else args,
            confirmed=confirmed,
            context=context,
        )

    async def adispatch(
        self,
        name: str,
        args: Mapping[str, object] | None = None,
        *,
        confirmed: bool = False,
        context: Mapping[str, object] | None = None,
    ) -> Observation:
        """:meth:`dispatch` for asyncio callers: the same pipeline, in a worker thread.

        The event loop never runs a handler (handlers are synchronous: async
        ones are refused at build). Cancelling the awaiting task does not stop
        a handler that has started: it runs to its end in its thread, and its
        audit record is written; the observation is dropped.
        """
        import asyncio

        return await asyncio.to_thread(
            self.dispatch, name, args, confirmed=confirmed, context=context
        )

    def dispatch_json(self, text: str | bytes) -> Observation:
        """Parse ``{"name": ..., "args": {...}}`` strictly, then dispatch it.

        Refusals (``invalid_request``) are listed in
        :func:`boring_dispatch.registry.pipeline.dispatch_json`.
        """
        return pipeline.dispatch_json(self._table, text)

    def dispatch_args_json(
        self,
        name: str,
        text: str | bytes,
        *,
        confirmed: bool = False,
        context: Mapping[str, object] | None = None,
    ) -> Observation:
        """Dispatch ``name`` with the model's argument text, parsed strictly.

        ``text`` is the JSON object a framework hands over (``'{"job_id": 7}'``);
        it is parsed with the parser of :meth:`dispatch_json` and its limits
        (size before parsing, depth, duplicate keys, non-finite numbers): any
        refusal, or a value that is not an object (the empty text included),
        is ``invalid_request``.
        """
        return pipeline.dispatch_args_json(
            self._table, name, text, confirmed=confirmed, context=context
        )

    def redacted_arguments(self, name: str, args: object) -> dict[str, object]:
        """``args`` as records show them: sensitive and unknown members as ``"[redacted]"``.

        For showing a call to a person (an approval prompt) without its secrets;
        an unknown tool's arguments are redacted whole (the keys stay).
        """
        from boring_dispatch.observe.redact import redact_invalid

        entry = self._table.entries.get(name) if type(name) is str else None
        if not isinstance(args, Mapping):
            return {}
        if entry is None:
            return redact_invalid(args, None, None)
        return redact_invalid(args, entry.schema.sensitive, entry.schema.accepted)

    def restrict(self, names: Iterable[str]) -> Registry:
        """A table with only ``names``: the session policy, which can only shrink.

        Raises:
            UnknownTool: a name the table does not have (never a silent grow).
            TypeError: ``names`` is a single string rather than a collection.
        """
        if isinstance(names, str | bytes):
            raise TypeError("restrict() takes a collection of names, not one string")
        wanted = set()
        for wanted_name in names:
            if type(wanted_name) is not str or wanted_name not in self._tools:
                raise UnknownTool(f"restrict(): no tool named {wanted_name!r} in this table")
            wanted.add(wanted_name)
        table = self._table
        entries = {n: e for n, e in table.entries.items() if n in wanted}
        # Same sinks, limits and audit health: a failing sink stops the smaller table too.
        smaller = replace(table, entries=MappingProxyType(entries))
        registry: Registry = object.__new__(Registry)
        registry._init(smaller, MappingProxyType({n: self._tools[n] for n in entries}))
        return registry

    def fixture_world(
        self, fixtures: Mapping[str, Fixture] | None = None, *, allow_missing: bool = False
    ) -> Registry:
        """The same table (names, schemas, descriptions, policy bits, limits, sinks) answered
        by fixtures only: no real handler is in it, so none can run.

        ``fixtures`` (by tool name, e.g. from a fixture file) replace the tools' own.
        A call no fixture answers is the observation ``no_fixture``.

        Raises:
            RegistryInvalid: a tool has no fixture (unless ``allow_missing``), a
                fixture names a tool the table lacks, or a fixture does not fit its tool.
        """
        chosen = {n: t.fixture for n, t in self._tools.items() if t.fixture is not None}
        chosen.update(fixtures or {})
        table, tools = world_parts(self._table, self._tools, chosen, allow_missing=allow_missing)
        world: Registry = object.__new__(Registry)
        world._init(table, tools)
        return world

    def tool_specs(self) -> tuple[ToolSpec, ...]:
        """One frozen record per tool, sorted by name (fresh copies on every call)."""
        return tuple(
            spec_of(
                tool_name,
                self._tools[tool_name].description,
                self._tools[tool_name].audience,
                self._table.entries[tool_name],
            )
            for tool_name in self._names
        )

    def tool_schemas(self, style: SchemaFormat) -> list[dict[str, object]]:
        """The prompt tool list, from the same table the dispatcher uses (fresh copies).

        ``chat_completions`` (or ``openai``): ``{"type": "function", "function":
        {"name", "description", "parameters"}}``; ``responses``: ``{"type":
        "function", "name", "description", "parameters"}`` (Responses API,
        Agents SDK); ``anthropic``: ``{"name", "description", "input_schema"}``;
        ``mcp``: ``{"name", "description", "inputSchema"}``. Injected parameters
        are in none of them.

        Raises:
            ValueError: an unknown style.
        """
        if style not in SCHEMA_FORMATS:
            raise ValueError(f"unknown schema style {style!r}")
        return [spec.tool_schema(style) for spec in self.tool_specs()]


def check_tool(tool_name: str, tool: object) -> None:
    if not isinstance(tool, Tool):
        raise RegistryInvalid(f"tool {tool_name!r} must be a Tool(handler, description=...)")
    if not callable(tool.handler):
        raise RegistryInvalid(f"tool {tool_name!r}: the handler is not callable")
    if tool.fixture is not None and not isinstance(tool.fixture, Fixture):
        raise RegistryInvalid(f"tool {tool_name!r}: fixture must be a Fixture or None")
    # Exact types: a policy bit that is 1, "yes" or "false" must not decide anything.
    for bit, given in (("enabled", tool.enabled), ("confirm", tool.confirm)):
        if type(given) is not bool:
            raise RegistryInvalid(f"tool {tool_name!r}: {bit} must be True or False")
    audience: object = tool.audience
    if type(audience) is not str or audience not in AUDIENCES:
        raise RegistryInvalid(f"tool {tool_name!r}: audience must be one of {AUDIENCES}")
    model: object = tool.args
    if model is not None and not isinstance(model, type):
        raise RegistryInvalid(f"tool {tool_name!r}: args must be a pydantic model class or None")
    check_description(tool_name, tool.description)
    check_synchronous(tool_name, tool.handler)
