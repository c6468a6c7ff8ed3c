"""``dispatcher mcp``: serve a repository (three tier tools) or a Python table over stdio.

This is the only module that imports the ``mcp`` SDK, and only inside
:func:`serve`, so ``import boring_dispatch`` and the CLI's dry-run path never
load it. The low-level SDK server is used directly: each handler returns a
complete ``CallToolResult`` (text content, ``structuredContent`` and
``isError``) built by :mod:`._mcp_results`, and the SDK validates nothing
against our schemas (the dispatcher validates every call itself).

Calls run in worker threads. Only work that runs a gateway or a table
handler takes one of :data:`MAX_CONCURRENT_CALLS` slots, and holds it until
that work has really ended (a cancelled call included); parsing, resolving,
dry runs and refusals never wait for a slot. When a call is cancelled, its
gateways are ended, and a gateway it has not spawned yet never is; when the
session ends (stdin closes, ``SIGTERM``/``SIGHUP``, or the server returns),
every gateway still running is ended (see :mod:`._mcp_children`). A call whose
arguments ask for a dry run launches nothing, so it takes one plain thread hop
(a cancel then lands when that short preparation has ended).
The streams come from :mod:`._transport`: strict, bounded reading with an
error response for every refused message, and back-pressure instead of
buffering (no call starts while the client leaves too much output unread).
"""

from __future__ import annotations

import functools
import signal
from collections.abc import Sequence
from types import FrameType
from typing import TYPE_CHECKING, Any, Final

from boring_dispatch.errors import RuntimeMisconfigured
from boring_dispatch.surfaces.mcp._children import end_descendant_groups
from boring_dispatch.surfaces.mcp._hops import asks_dry_run
from boring_dispatch.surfaces.mcp._results import ToolOutcome

if TYPE_CHECKING:
    import mcp_types
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server

    from boring_dispatch.surfaces._backend import Backend, ToolListing
    from boring_dispatch.surfaces._repository_backend import RepositoryBackend
    from boring_dispatch.surfaces._table_backend import TableBackend
    from boring_dispatch.surfaces.mcp._flow import Flow

__all__ = ["MAX_CONCURRENT_CALLS", "SERVER_NAME", "serve"]

SERVER_NAME: Final = "boring-dispatch"
#: The dry-run test under its former name here (it moved to :mod:`._hops`).
_asks_dry_run: Final = asks_dry_run
#: Gateways (or table handlers) running at the same time; more wait for a free slot.
MAX_CONCURRENT_CALLS: Final = 8


def serve(  # noqa: PLR0913 - the keyword-only options of one command
    *,
    config: str | None,
    registry: str | None,
    timeout_s: float | None = None,
    run_as: str | None = None,
    spawn: bool = False,
    callers: Sequence[str] | None = None,
    deployed: tuple[str, str] | None = None,
    context: str | None = None,
    ledger: str | None = None,
    audit: str | None = None,
) -> int:
    """Serve one table over MCP on stdin/stdout until the client goes away.

    Exactly one of ``config`` (an absolute ``officina.toml`` path) or
    ``registry`` (``pkg.module:NAME``) names the table. Both are opened before
    the session starts, so a bad one fails with a CLI error instead of an
    MCP session that cannot work. ``timeout_s`` (each gateway run's wall-clock
    limit), ``run_as`` (``USER[:GROUP]`` every gateway runs as) and ``spawn``
    (a fresh interpreter per gateway instead of a fork of the clean fork
    server; ``run_as`` always spawns) apply to a repository only. ``callers``
    (repository only) binds the server to the
    top-level skills it may act for; without it, any discoverable top-level
    skill a model names is accepted. ``deployed`` (``(surface, database URL)``,
    registry only) serves the surface's deployed rows of the table instead.
    ``context`` (registry only, ``pkg.module:NAME``) names the function that
    supplies the injected arguments of every call.
    ``ledger`` (repository only) names the setup ledger (``postgresql://...``
    or a SQLite file path). ``audit`` (repository only) is a JSON-lines file
    that gets one record per live call (docs/repository.md, "Audit").

    Returns:
        0 when the session ended.

    Raises:
        RuntimeMisconfigured: neither or both tables were named, the
            repository configuration is invalid, the timeout is not a number of
            seconds in (0, 604800], ``run_as`` names no user or group or is
            given with a registry, ``audit`` is given with a registry or cannot be
            opened, a ``callers`` entry is not a discoverable
            top-level skill, ``callers`` came with a registry, or ``context``
            came with a repository.
        RegistryInvalid: the registry or context spec cannot be loaded.
    """
    backend: Backend
    if deployed is not None and registry is None:
        raise RuntimeMisconfigured("--database and --surface apply to a table (--registry) only")
    if context is not None and registry is None:
        raise RuntimeMisconfigured("--context supplies a Python table (--registry) only")
    if audit is not None and registry is not None:
        raise RuntimeMisconfigured("--audit records a repository (--config) only")
    if config is not None and registry is None:
        # A long-lived server: gateways are forked from a clean fork server (process/_fork.py)
        # unless --spawn-gateways.
        backend = _repository_calls(
            config,
            timeout_s=timeout_s,
            run_as=run_as,
            callers=callers,
            ledger=ledger,
            spawn=spawn,
            audit=audit,
        )
    elif callers is not None:
        raise RuntimeMisconfigured("--caller binds a repository server (--config) only")
    elif spawn:
        raise RuntimeMisconfigured("--spawn-gateways applies to a repository (--config) only")
    elif registry is not None and config is None:
        backend = _table_calls(registry, run_as=run_as, deployed=deployed, context=context)
    else:
        raise RuntimeMisconfigured("dispatcher mcp needs exactly one of --config or --registry")
    _end_gateways_on_signals()
    try:
        import anyio

        anyio.run(_serve_stdio, backend)
    except* (BrokenPipeError, ConnectionResetError):
        pass  # the client went away while we were answering it
    finally:
        end_descendant_groups()
    return 0


def _repository_calls(  # noqa: PLR0913 - keyword-only, each from one option
    config: str,
    *,
    timeout_s: float | None,
    run_as: str | None,
    callers: Sequence[str] | None,
    ledger: str | None,
    spawn: bool,
    audit: str | None = None,
) -> RepositoryBackend:
    """The repository backend: limits checked, repository opened, ``--caller`` values bound."""
    from boring_dispatch.process._admission import limits_problem
    from boring_dispatch.process.run_as import with_run_as
    from boring_dispatch.records import ExecLimits
    from boring_dispatch.repository.repository import Repository
    from boring_dispatch.surfaces._repository_backend import RepositoryBackend
    from boring_dispatch.surfaces.mcp._calls import bound_callers

    limits = ExecLimits(fork_server=not spawn)
    if timeout_s is not None:
        limits = ExecLimits(timeout_s=timeout_s, fork_server=not spawn)
    limits = with_run_as(limits, run_as)
    problem = limits_problem(limits)
    if problem is not None:
        raise RuntimeMisconfigured(f"execution limits are out of range: {problem}")
    from boring_dispatch.repository._audit import open_audit_file

    sinks = () if audit is None else (open_audit_file(audit),)
    repository = Repository.open(config, ledger=ledger, audit=sinks)
    bound = None if callers is None else bound_callers(repository, callers)
    return RepositoryBackend(repository, limits, callers=bound)


def _table_calls(
    registry: str, *, run_as: str | None, deployed: tuple[str, str] | None, context: str | None
) -> TableBackend:
    """The Python table backend: the table (or its deployed rows) and its context supplier."""
    from boring_dispatch.registry.spec import load_context, load_registry
    from boring_dispatch.surfaces._table_backend import TableBackend

    if run_as is not None:
        # A Python table runs its tools in this process: there is no child to switch.
        raise RuntimeMisconfigured("--run-as applies to a repository (--config) only")
    table = load_registry(registry)
    if deployed is not None:
        from boring_dispatch.registry.deployed import load_deployed

        table = load_deployed(table, surface=deployed[0], database=deployed[1])
    supplier = None if context is None else load_context(context)
    return TableBackend(table, context=supplier)


def _end_gateways_on_signals() -> None:
    """On SIGTERM/SIGHUP, end the running gateways, then die of the signal as before."""

    def handler(signum: int, _frame: FrameType | None) -> None:
        end_descendant_groups()
        signal.signal(signum, signal.SIG_DFL)
        signal.raise_signal(signum)

    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, handler)


async def _serve_stdio(backend: Backend) -> None:
    from boring_dispatch.surfaces.mcp._flow import Flow
    from boring_dispatch.surfaces.mcp._transport import stdio_streams

    flow = Flow()
    server = _build_server(backend, flow)
    async with stdio_streams(flow, on_eof=end_descendant_groups) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def _build_server(backend: Backend, flow: Flow) -> Server[Any]:
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server

    from boring_dispatch.surfaces.mcp._elicit import ask_person
    from boring_dispatch.surfaces.mcp._telemetry import traced_call

    # Launches (and table calls) hold a slot until their work has really ended.
    slots = anyio.CapacityLimiter(MAX_CONCURRENT_CALLS)
    tools = _listed_tools(backend)
    names = frozenset(tool.name for tool in tools)
    listing = types.ListToolsResult(tools=tools)

    async def list_tools(_ctx: object, _params: object) -> mcp_types.ListToolsResult:
        return listing

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        outcome: ToolOutcome
        # No call starts while the client leaves too much output unread.
        await flow.room_to_answer()
        known = params.name if params.name in names else None
        spans = backend.tool_spans
        with traced_call(known, ctx.request_id, params.meta, repository=spans) as traced:
            outcome = await backend.call(
                params.name,
                params.arguments,
                trace_id=traced.trace_id,
                slots=slots,
                confirm=functools.partial(ask_person, ctx),
            )
            traced.finish(outcome)
        return _call_tool_result(outcome)

    server = Server(
        SERVER_NAME,
        version=_version(),
        instructions=backend.instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    # The SDK's OpenTelemetry middleware would record caller-chosen tool names and
    # exception text; our own spans (observe.trace) are the only tracing.
    server.middleware = []
    return server


def _listed_tools(backend: Backend) -> list[mcp_types.Tool]:
    return [_sdk_tool(tool) for tool in backend.tools()]


def _sdk_tool(tool: ToolListing) -> mcp_types.Tool:
    import mcp_types as types

    hints = tool.hints
    return types.Tool(
        name=tool.name,
        title=tool.title,  # results are sent without their None fields
        description=tool.description,
        input_schema=dict(tool.input_schema),
        output_schema=dict(tool.output_schema),
        annotations=None
        if hints is None
        else types.ToolAnnotations(
            read_only_hint=hints.read_only,
            destructive_hint=hints.destructive,
            open_world_hint=hints.open_world,
        ),
    )


def _call_tool_result(outcome: ToolOutcome) -> mcp_types.CallToolResult:
    import mcp_types as types

    return types.CallToolResult(
        content=[types.TextContent(text=text) for text in outcome.texts],
        structured_content=outcome.structured,
        is_error=outcome.is_error,
        _meta=outcome.wire_meta(),
    )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("boring-dispatch")
    except PackageNotFoundError:
        return "0"
