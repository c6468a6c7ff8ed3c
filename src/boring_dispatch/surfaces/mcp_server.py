"""``dispatcher mcp``: serve a repository (three tier tools) or a Python table over stdio.

This is the only module that imports the ``mcp`` SDK, and only inside
:func:`serve`, so ``import boring_dispatch`` and the CLI's dry-run path never
load it. The low-level SDK server is used directly: each handler returns a
complete ``CallToolResult`` (text content, ``structuredContent`` and
``isError``) built by :mod:`._mcp_results`, and the SDK validates nothing
against our schemas (the dispatcher validates every call itself).

Calls run in worker threads (at most :data:`MAX_CONCURRENT_CALLS` at once;
a cancelled call keeps its slot until its thread ends). The streams come from
:mod:`._mcp_transport`: strict, bounded reading with an error response for
every refused message, and back-pressure instead of buffering. When a call is
cancelled, its gateways are ended; when the session ends (stdin closes,
``SIGTERM``/``SIGHUP``, or the server returns), every gateway still running is
ended (see :mod:`._mcp_children`).
"""

from __future__ import annotations

import functools
import signal
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING, Any, Final

from boring_dispatch.errors import RuntimeMisconfigured
from boring_dispatch.observe.trace import new_trace_id
from boring_dispatch.surfaces._mcp_children import end_descendant_groups
from boring_dispatch.surfaces._mcp_results import ToolOutcome

if TYPE_CHECKING:
    import mcp_types
    from mcp.server.lowlevel import Server

    from boring_dispatch.surfaces._mcp_calls import RepositoryCalls, TableCalls
    from boring_dispatch.surfaces._mcp_transport import Flow

__all__ = ["MAX_CONCURRENT_CALLS", "SERVER_NAME", "serve"]

SERVER_NAME: Final = "boring-dispatch"
#: Tool calls running at the same time; more wait for a free slot.
MAX_CONCURRENT_CALLS: Final = 8

_REPOSITORY_INSTRUCTIONS: Final = (
    "Call an exported interface through the tool whose suffix equals the interface's "
    "declared security level (invoke_security_0, _1 or _2), acting as a top-level skill. "
    "The complete result (stdout, stderr, exit_code, dispatcher metadata and errors) is in "
    "structuredContent.result; text content shows only output declared for people."
)


def serve(*, config: str | None, registry: str | None, timeout_s: float | None = None) -> int:
    """Serve one table over MCP on stdin/stdout until the client goes away.

    Exactly one of ``config`` (an absolute ``officina.toml`` path) or
    ``registry`` (``pkg.module:NAME``) names the table. Both are opened before
    the session starts, so a bad one fails with a CLI error instead of an
    MCP session that cannot work.

    Returns:
        0 when the session ended.

    Raises:
        RuntimeMisconfigured: neither or both tables were named, or the
            repository configuration is invalid.
        RegistryInvalid: the registry spec cannot be loaded.
    """
    from boring_dispatch.surfaces._mcp_calls import RepositoryCalls, TableCalls

    backend: RepositoryCalls | TableCalls
    if config is not None and registry is None:
        from boring_dispatch.blueprints.repository import Repository
        from boring_dispatch.types import ExecLimits

        limits = ExecLimits() if timeout_s is None else ExecLimits(timeout_s=timeout_s)
        backend = RepositoryCalls(Repository.open(config), limits)
    elif registry is not None and config is None:
        from boring_dispatch._spec import load_registry

        backend = TableCalls(load_registry(registry))
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


def _end_gateways_on_signals() -> None:
    """On SIGTERM/SIGHUP, end the running gateways, then die of the signal as before."""

    def handler(signum: int, _frame: FrameType | None) -> None:
        end_descendant_groups()
        signal.signal(signum, signal.SIG_DFL)
        signal.raise_signal(signum)

    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, handler)


async def _serve_stdio(backend: RepositoryCalls | TableCalls) -> None:
    from boring_dispatch.surfaces._mcp_transport import Flow, stdio_streams

    flow = Flow()
    server = _build_server(backend, flow)
    async with stdio_streams(flow, on_eof=end_descendant_groups) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def _build_server(backend: RepositoryCalls | TableCalls, flow: Flow) -> Server[Any]:
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server

    from boring_dispatch.surfaces._mcp_calls import RepositoryCalls
    from boring_dispatch.surfaces._mcp_transport import CallSlots

    slots = CallSlots(MAX_CONCURRENT_CALLS)
    tools = _listed_tools(backend)
    listing = types.ListToolsResult(tools=tools)

    async def list_tools(_ctx: object, _params: object) -> mcp_types.ListToolsResult:
        return listing

    async def call_tool(
        _ctx: object, params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        run: Callable[[], ToolOutcome]
        if isinstance(backend, RepositoryCalls):
            trace_id = new_trace_id()
            run = functools.partial(backend.call, params.name, params.arguments, trace_id=trace_id)
        else:
            trace_id = None
            run = functools.partial(backend.call, params.name, params.arguments)
        try:
            # No call starts while the client leaves too much output unread.
            await flow.room_to_answer()
            # A cancelled call returns at once; its gateways are ended below.
            outcome = await slots.run(run)
        except anyio.get_cancelled_exc_class():
            if trace_id is not None:
                end_descendant_groups(trace_id)
            raise
        return _call_tool_result(outcome)

    server = Server(
        SERVER_NAME,
        version=_version(),
        instructions=_REPOSITORY_INSTRUCTIONS if isinstance(backend, RepositoryCalls) else None,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    # The SDK's OpenTelemetry middleware would record caller-chosen tool names and
    # exception text; our own spans (observe.trace) are the only tracing.
    server.middleware = []
    return server


def _listed_tools(backend: RepositoryCalls | TableCalls) -> list[mcp_types.Tool]:
    import mcp_types as types

    from boring_dispatch.surfaces._mcp_calls import RepositoryCalls
    from boring_dispatch.surfaces._mcp_tools import INPUT_SCHEMA, OUTPUT_SCHEMA, TIER_TOOLS

    if isinstance(backend, RepositoryCalls):
        return [
            types.Tool(
                name=tool.name,
                title=tool.title,
                description=tool.description,
                input_schema=dict(INPUT_SCHEMA),
                output_schema=dict(OUTPUT_SCHEMA),
                annotations=types.ToolAnnotations(
                    read_only_hint=tool.read_only,
                    destructive_hint=tool.destructive,
                    open_world_hint=tool.open_world,
                ),
            )
            for tool in TIER_TOOLS.values()
        ]
    return [
        types.Tool(
            name=str(schema["name"]),
            description=str(schema["description"]),
            input_schema=dict(_mapping(schema["inputSchema"])),
            output_schema=dict(OUTPUT_SCHEMA),
        )
        for schema in backend.tool_schemas()
    ]


def _mapping(value: object) -> dict[str, object]:
    if not isinstance(value, dict):
        raise RuntimeMisconfigured("a tool schema is not an object")
    return value


def _call_tool_result(outcome: ToolOutcome) -> mcp_types.CallToolResult:
    import mcp_types as types

    return types.CallToolResult(
        content=[types.TextContent(text=text) for text in outcome.texts],
        structured_content=outcome.structured,
        is_error=outcome.is_error,
    )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("boring-dispatch")
    except PackageNotFoundError:
        return "0"
