"""Python table: dispatch() overhead over a direct call, and over the MCP SDK's own tool call.

All three are measured in one run, interleaved (A B C A B C ...). The tool takes
two arguments and validation is included in dispatch() and in the SDK's call.
"""

from __future__ import annotations

import asyncio
import logging
import time

from _timing import Stats, report

from boring_dispatch import Registry, Tool


def add(a: int, b: int) -> dict[str, int]:
    return {"sum": a + b}


def main(rounds: int = 15, inner: int = 2000) -> dict[str, float]:
    from mcp.server.mcpserver import MCPServer  # the SDK's high-level server

    logging.getLogger("mcp").setLevel(logging.WARNING)
    registry = Registry({"add": Tool(add, description="Add two integers.")})
    server = MCPServer("bench")
    server.add_tool(add, name="add", description="Add two integers.")
    args = {"a": 1, "b": 2}
    assert registry.dispatch("add", args).ok

    loop = asyncio.new_event_loop()

    async def many_mcp_calls() -> None:
        for _ in range(inner):
            await server.call_tool("add", args)

    def direct() -> object:
        return add(**args)

    def dispatch() -> object:
        return registry.dispatch("add", args)

    # The SDK's call is a coroutine: time `inner` awaited calls inside one running loop,
    # so the event loop's start-up is not charged to it.
    samples: dict[str, list[float]] = {"direct": [], "dispatch": [], "mcp": []}
    for _ in range(rounds):
        for name, func in (("direct", direct), ("dispatch", dispatch)):
            start = time.perf_counter()
            for _ in range(inner):
                func()
            samples[name].append((time.perf_counter() - start) / inner)
        start = time.perf_counter()
        loop.run_until_complete(many_mcp_calls())
        samples["mcp"].append((time.perf_counter() - start) / inner)
    loop.close()

    stats = [
        Stats("direct call add(a=1, b=2)", tuple(samples["direct"])),
        Stats("Registry.dispatch('add', {...})", tuple(samples["dispatch"])),
        Stats("mcp MCPServer.call_tool('add', {...}) (in-process)", tuple(samples["mcp"])),
    ]
    report("Python table, per call (floor: direct call)", stats, unit="us")
    direct_m, dispatch_m, mcp_m = (s.median for s in stats)
    ours = dispatch_m - direct_m
    theirs = mcp_m - direct_m
    print(f"  dispatch() overhead over a direct call: {ours * 1e6:.2f} us (target <= 10 us)")
    print(f"  MCP SDK call_tool overhead over a direct call: {theirs * 1e6:.2f} us")
    print(f"  SDK overhead / dispatch() overhead: x{theirs / ours:.1f} (target >= 5)")
    return {"dispatch_overhead_us": ours * 1e6, "mcp_overhead_us": theirs * 1e6}


if __name__ == "__main__":
    main()
