"""A blueprint repository as a front end's :class:`~._backend.Backend`.

Its MCP tools are the three tier tools; each call is resolved, authorized and
bound by :class:`~.mcp._calls.RepositoryCalls` and launched in as few worker
hops as its slot allows (:func:`~.mcp._hops.repository_call`). The MCP
modules are imported on the first call only, so ``dispatcher names`` and
``describe`` do not load them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Final

from boring_dispatch.surfaces._backend import Confirm, Replayed, ToolHints, ToolListing

if TYPE_CHECKING:
    import anyio

    from boring_dispatch.records import ExecLimits
    from boring_dispatch.registry.registry import Registry
    from boring_dispatch.repository.repository import Repository
    from boring_dispatch.surfaces.mcp._calls import RepositoryCalls
    from boring_dispatch.surfaces.mcp._results import ToolOutcome

__all__ = ["REPOSITORY_INSTRUCTIONS", "RepositoryBackend"]

#: The MCP server's instructions when it serves a repository.
REPOSITORY_INSTRUCTIONS: Final = (
    "Call an exported interface through the tool whose suffix equals the interface's "
    "declared security level (invoke_security_0, _1 or _2), acting as a top-level skill. "
    "The complete result (stdout, stderr, exit_code, dispatcher metadata and errors) is in "
    "structuredContent.result; text content shows only output declared for people."
)


class RepositoryBackend:
    """The exports of one repository.

    ``limits`` apply to every gateway an MCP call launches; ``callers``, when
    given, are the only top-level skills the server acts for (``--caller``,
    already checked by :func:`~.mcp._calls.bound_callers`).
    """

    __slots__ = ("_callers", "_calls", "_limits", "_repository")

    def __init__(
        self,
        repository: Repository,
        limits: ExecLimits | None = None,
        *,
        callers: frozenset[str] | None = None,
    ) -> None:
        self._repository = repository
        self._limits = limits
        self._callers = callers
        self._calls: RepositoryCalls | None = None

    @property
    def instructions(self) -> str:
        """How a model picks the tier tool of an interface."""
        return REPOSITORY_INSTRUCTIONS

    @property
    def tool_spans(self) -> bool:
        """True: the server opens the ``execute_tool`` span of each tier-tool call."""
        return True

    def names(self) -> tuple[str, ...]:
        """Every export ID the repository declares, sorted."""
        return self._repository.exported_interfaces()

    def describe(self, name: str) -> str:
        """The block an assistant needs to call the export ``name``.

        Raises:
            RouteError: the loading errors a request for ``name`` would see.
        """
        from boring_dispatch.repository.offline.describe import describe, render_description

        return render_description(describe(self._repository, name))

    def replay(self, lines: Sequence[str], *, dry_run: bool) -> Iterator[Replayed]:
        """Each line's outcome now: resolved only (``dry_run``) or launched."""
        from boring_dispatch.repository.offline.replay_lines import replay_repository

        for line in replay_repository(self._repository, lines, dry_run=dry_run):
            yield Replayed(record=line.outcome, differs=line.differs)

    def fixture_table(self) -> Registry | None:
        """None: fixture files belong to Python tables."""
        return None

    def tools(self) -> tuple[ToolListing, ...]:
        """The three tier tools, with their hints."""
        from boring_dispatch.surfaces.mcp._tools import INPUT_SCHEMA, OUTPUT_SCHEMA, TIER_TOOLS

        return tuple(
            ToolListing(
                name=tool.name,
                title=tool.title,
                description=tool.description,
                input_schema=dict(INPUT_SCHEMA),
                output_schema=dict(OUTPUT_SCHEMA),
                hints=ToolHints(
                    read_only=tool.read_only,
                    destructive=tool.destructive,
                    open_world=tool.open_world,
                ),
            )
            for tool in TIER_TOOLS.values()
        )

    async def call(
        self,
        name: str,
        arguments: Mapping[str, object] | None,
        *,
        trace_id: str,
        slots: anyio.CapacityLimiter,
        confirm: Confirm,
    ) -> ToolOutcome:
        """One tier-tool call; a person is never asked (the blueprint's levels decide)."""
        from boring_dispatch.process._cancel import forget
        from boring_dispatch.surfaces.mcp._hops import repository_call

        del confirm
        try:
            return await repository_call(self._repository_calls(), slots, name, arguments, trace_id)
        finally:
            forget(trace_id)

    def _repository_calls(self) -> RepositoryCalls:
        if self._calls is None:
            from boring_dispatch.surfaces.mcp._calls import RepositoryCalls

            self._calls = RepositoryCalls(self._repository, self._limits, callers=self._callers)
        return self._calls
