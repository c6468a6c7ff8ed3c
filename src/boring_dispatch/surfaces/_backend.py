"""What a front end needs of a table: one protocol both kinds of table implement.

The CLI (``names``, ``describe``, ``replay``) and the MCP server (the tool
listing, its instructions, one ``tools/call``) choose a backend once, from
``--registry`` or ``--config``, and then speak only to :class:`Backend`:
:class:`~._table_backend.TableBackend` wraps a Python table (a ``Registry``),
:class:`~._repository_backend.RepositoryBackend` a blueprint repository. What
crosses this boundary is plain data (names, text, frozen records, JSON-shaped
dicts); the tables' own records stay behind it.

Two features are the Python table's own and stay so: fixture files
(``--fixtures``, ``--require-fixtures``) reach the table through
:meth:`Backend.fixture_table` (``None`` for a repository), and a tool built
with ``confirm=True`` asks a person through the ``confirm`` function the
server passes to every :meth:`Backend.call` (a repository never asks).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from boring_dispatch._value import value

if TYPE_CHECKING:
    import anyio

    from boring_dispatch.registry.registry import Registry
    from boring_dispatch.surfaces.mcp._results import ToolOutcome

__all__ = ["Backend", "Confirm", "Replayed", "ToolHints", "ToolListing"]

#: ``(tool name, its arguments as shown to a person) -> approved?``: the MCP server's
#: elicitation, bound to the request being answered.
Confirm = Callable[[str, str], Awaitable[bool]]


@value
class ToolHints:
    """The MCP tool annotations a backend declares (``readOnlyHint`` and its siblings)."""

    read_only: bool
    destructive: bool
    open_world: bool


@value
class ToolListing:
    """One tool as ``tools/list`` shows it (the server turns it into the SDK's ``Tool``)."""

    name: str
    description: str
    input_schema: Mapping[str, object]
    output_schema: Mapping[str, object]
    title: str | None = None
    hints: ToolHints | None = None


@value
class Replayed:
    """One replayed line: what the pipeline gives now, and whether it differs from the record.

    ``record`` is the line ``dispatcher replay`` prints (a table's observation,
    a repository's outcome), as a JSON object.
    """

    record: Mapping[str, object]
    differs: bool


@runtime_checkable
class Backend(Protocol):
    """One table as the front ends see it."""

    @property
    def instructions(self) -> str | None:
        """The MCP server's instructions to the model, if the backend has any."""
        ...

    @property
    def tool_spans(self) -> bool:
        """Whether the server opens an ``execute_tool`` span per call (else the table does)."""
        ...

    def names(self) -> tuple[str, ...]:
        """The allowlist, sorted: bound names or exported interface IDs."""
        ...

    def describe(self, name: str) -> str:
        """The text ``dispatcher describe`` prints for ``name``.

        Raises:
            DispatchError: ``name`` is not on the allowlist (the table's own code).
        """
        ...

    def replay(self, lines: Sequence[str], *, dry_run: bool) -> Iterator[Replayed]:
        """Push every recorded line through the table's pipeline, one result per line.

        ``dry_run`` (a repository) resolves without launching; a Python table
        has no dry run and ignores it.
        """
        ...

    def fixture_table(self) -> Registry | None:
        """The Python table whose fixture files ``--fixtures`` reads; ``None`` for a repository."""
        ...

    def tools(self) -> tuple[ToolListing, ...]:
        """The tools the MCP server lists, in order."""
        ...

    async def call(
        self,
        name: str,
        arguments: Mapping[str, object] | None,
        *,
        trace_id: str,
        slots: anyio.CapacityLimiter,
        confirm: Confirm,
    ) -> ToolOutcome:
        """Answer one ``tools/call``; never raises (refusals are outcomes too).

        ``slots`` bounds the calls whose work runs at the same time; ``confirm``
        asks a person to approve one call.
        """
        ...
