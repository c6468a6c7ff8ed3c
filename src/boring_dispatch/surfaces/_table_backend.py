"""A Python table (a ``Registry``) as a front end's :class:`~._backend.Backend`.

Each MCP call goes through ``Registry.dispatch`` (:class:`~.mcp._calls.TableCalls`)
in a worker thread that holds one of the server's slots; a tool built with
``confirm=True`` first asks a person. The MCP modules are imported on the first
call only, so ``dispatcher names`` and ``describe`` do not load them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from boring_dispatch._quote import shown
from boring_dispatch.surfaces._backend import Confirm, Replayed, ToolListing

if TYPE_CHECKING:
    import anyio

    from boring_dispatch.registry.registry import Registry
    from boring_dispatch.surfaces.mcp._calls import TableCalls
    from boring_dispatch.surfaces.mcp._results import ToolOutcome

__all__ = ["TableBackend"]


class TableBackend:
    """The tools of one Python table; ``context`` supplies each call's injected arguments."""

    __slots__ = ("_calls", "_context", "_registry")

    def __init__(
        self,
        registry: Registry,
        *,
        context: Callable[[], Mapping[str, object]] | None = None,
    ) -> None:
        self._registry = registry
        self._context = context
        self._calls: TableCalls | None = None

    @property
    def instructions(self) -> str | None:
        """None: a table's tools carry their own descriptions."""
        return None

    @property
    def tool_spans(self) -> bool:
        """False: the table's pipeline opens its own ``execute_tool`` span."""
        return False

    def names(self) -> tuple[str, ...]:
        """The bound names, sorted."""
        return self._registry.names()

    def describe(self, name: str) -> str:
        """The tool's MCP schema as indented JSON.

        Raises:
            UnknownTool: no enabled tool is bound to ``name``.
        """
        chosen = [s for s in self._registry.tool_schemas("mcp") if s.get("name") == name]
        if not chosen:
            from boring_dispatch.errors import UnknownTool

            raise UnknownTool(f"no tool named {shown(name)}")
        return json.dumps(chosen[0], indent=2, sort_keys=True) + "\n"

    def replay(self, lines: Sequence[str], *, dry_run: bool = False) -> Iterator[Replayed]:
        """Each line's observation now; ``dry_run`` does not apply to a Python table."""
        del dry_run  # a table call has no dry run
        from boring_dispatch.registry.replay import replay_lines

        for entry in replay_lines(self._registry, lines):
            yield Replayed(record=entry.observation, differs=entry.differs)

    def fixture_table(self) -> Registry:
        """The table itself: fixture files are read against its tools."""
        return self._registry

    def tools(self) -> tuple[ToolListing, ...]:
        """The table's tools with their own schemas and descriptions."""
        from boring_dispatch.errors import RuntimeMisconfigured
        from boring_dispatch.surfaces.mcp._tools import OUTPUT_SCHEMA

        listed = []
        for schema in self._registry.tool_schemas("mcp"):
            input_schema = schema["inputSchema"]
            if not isinstance(input_schema, dict):
                raise RuntimeMisconfigured("a tool schema is not an object")
            listed.append(
                ToolListing(
                    name=str(schema["name"]),
                    description=str(schema["description"]),
                    input_schema=dict(input_schema),
                    output_schema=dict(OUTPUT_SCHEMA),
                )
            )
        return tuple(listed)

    async def call(
        self,
        name: str,
        arguments: Mapping[str, object] | None,
        *,
        trace_id: str,
        slots: anyio.CapacityLimiter,
        confirm: Confirm,
    ) -> ToolOutcome:
        """Ask for approval if the tool needs it, then dispatch in a slot's worker thread.

        A table handler cannot be stopped: a cancelled call keeps its slot
        until the handler returns. ``trace_id`` is not used: the table's
        pipeline traces its own calls.
        """
        import functools

        from boring_dispatch.surfaces.mcp._hops import in_thread_to_the_end

        del trace_id
        calls = self._table_calls()
        confirmed = False
        if calls.needs_confirmation(name):
            confirmed = await confirm(name, calls.shown_arguments(name, arguments))
        async with slots:
            run = functools.partial(calls.call, name, arguments, confirmed=confirmed)
            return await in_thread_to_the_end(run, None)

    def _table_calls(self) -> TableCalls:
        if self._calls is None:
            from boring_dispatch.surfaces.mcp._calls import TableCalls

            self._calls = TableCalls(self._registry, context=self._context)
        return self._calls
