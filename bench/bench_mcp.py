"""MCP over stdio with the official SDK client: our server's round trip against the SDK's own.

Three servers run at once, each driven by its own SDK ``Client`` session in one
event loop:

- the floor: a trivial ``echo`` tool served by the SDK's high-level
  ``MCPServer`` (a tiny script written by this benchmark), so the ratio shows
  our overhead over the protocol's;
- ``dispatcher mcp --config <corpus>``: a warm dry-run ``invoke_security_<N>``
  of route R1 (PERFORMANCE.md target: <= 2 ms median per call);
- ``dispatcher mcp --config <hello repository>``: a live hello-world call, per call,
  its gateway forked from the clean fork server; beside it the same server with
  the fork server switched off (``--spawn-gateways``: every gateway spawned, the path before it).

Samples are interleaved (floor, ours, floor, ours ...) and every result is checked.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TextIO

import anyio
from _hello import CALLER, TARGET, write_hello_repository
from _timing import Stats, console_script, interpreter, report, verdict
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from boring_dispatch.records import RouteRequest
from boring_dispatch.repository.repository import Repository

R1 = RouteRequest("get-weather", "get-weather._rtx.interface.scripts-weather")

FLOOR_SERVER = """\
import logging

from mcp.server.mcpserver import MCPServer

logging.getLogger("mcp").setLevel(logging.WARNING)
server = MCPServer("floor")


@server.tool()
def echo(text: str) -> str:
    \"\"\"Return the text.\"\"\"
    return text


server.run()
"""

Call = Callable[[], Awaitable[object]]


async def _sample(candidates: list[tuple[str, Call]], rounds: int, inner: int) -> list[Stats]:
    samples: dict[str, list[float]] = {name: [] for name, _ in candidates}
    for _ in range(rounds):
        for name, call in candidates:
            start = time.perf_counter()
            for _ in range(inner):
                await call()
            samples[name].append((time.perf_counter() - start) / inner)
    return [Stats(name, tuple(samples[name])) for name, _ in candidates]


def _checked(client: Client, tool: str, arguments: dict[str, object], stdout: str | None) -> Call:
    async def call() -> object:
        result = await client.call_tool(tool, arguments)
        structured = result.structured_content or {}
        if result.is_error or (stdout is not None and structured["result"]["stdout"] != stdout):
            raise RuntimeError(f"{tool} failed: {structured}")
        return result

    return call


async def _run(
    corpus: Path, hello: Path, floor_script: Path, logs: Path, errlog: TextIO
) -> list[list[Stats]]:
    env = {"ASSISTANT_LOGS": str(logs)}  # spans of traced calls stay in the scratch directory
    dispatcher = str(console_script("dispatcher"))
    floor = StdioServerParameters(command=str(interpreter()), args=["-I", str(floor_script)])
    ours = StdioServerParameters(command=dispatcher, args=["mcp", "--config", str(corpus)], env=env)
    live = StdioServerParameters(command=dispatcher, args=["mcp", "--config", str(hello)], env=env)
    spawning = StdioServerParameters(
        command=dispatcher, args=["mcp", "--spawn-gateways", "--config", str(hello)], env=env
    )
    level = Repository.open(corpus).resolve(R1).security_level
    dry_run: dict[str, object] = {
        "caller": R1.caller,
        "interface": R1.target,
        "arguments": {},
        "dry_run": True,
    }
    hello_call: dict[str, object] = {"caller": CALLER, "interface": TARGET, "arguments": {}}
    async with (
        Client(stdio_client(floor, errlog=errlog), mode="legacy") as floor_client,
        Client(stdio_client(ours, errlog=errlog), mode="legacy") as our_client,
        Client(stdio_client(live, errlog=errlog), mode="legacy") as live_client,
        Client(stdio_client(spawning, errlog=errlog), mode="legacy") as spawn_client,
    ):
        echo = _checked(floor_client, "echo", {"text": "hi"}, None)
        dry = _checked(our_client, f"invoke_security_{level}", dry_run, None)
        say = _checked(live_client, "invoke_security_0", hello_call, "hello\n")
        spawned = _checked(spawn_client, "invoke_security_0", hello_call, "hello\n")
        for call in (echo, dry, say, spawned):  # warm up: first-call imports are not charged
            await call()
        warm = await _sample(
            [
                ("SDK MCPServer: echo tool (floor)", echo),
                (f"dispatcher mcp: invoke_security_{level} dry run R1", dry),
            ],
            rounds=20,
            inner=25,
        )
        lived = await _sample(
            [
                ("SDK MCPServer: echo tool (floor)", echo),
                ("dispatcher mcp: invoke_security_0 hello (live)", say),
                ("  the same, fork server off: every gateway spawned", spawned),
            ],
            rounds=15,
            inner=2,
        )
    return [warm, lived]


def main(corpus: Path) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as scratch:
        base = Path(scratch)
        floor_script = base / "floor_server.py"
        floor_script.write_text(FLOOR_SERVER, encoding="utf-8")
        hello = write_hello_repository(base / "repo")
        with Path(os.devnull).open("w", encoding="utf-8") as errlog:
            warm, lived = anyio.run(_run, corpus, hello, floor_script, base / "logs", errlog)
    report("MCP over stdio, warm, per call (floor: the SDK's own server, trivial tool)", warm, "ms")
    floor_ms, dry_ms = (s.median * 1e3 for s in warm)
    print(verdict("dry-run round trip median", dry_ms, 2.0, " ms"))
    print(f"  our overhead over the SDK's own round trip: {dry_ms - floor_ms:.2f} ms per call")
    report("MCP live hello-world call, per call (floor: the same trivial SDK tool)", lived, "ms")
    live_ms = lived[1].median * 1e3
    print(verdict("live hello-world call median", live_ms, 10.0, " ms"))
    print(f"  fork server vs spawn: {live_ms / (lived[2].median * 1e3):.2f}x")
    return {
        "mcp_floor_ms": floor_ms,
        "mcp_dry_ms": dry_ms,
        "mcp_live_floor_ms": lived[0].median * 1e3,
        "mcp_live_ms": live_ms,
        "mcp_live_spawn_ms": lived[2].median * 1e3,
    }


def _default_corpus() -> Path:
    return Path(__file__).resolve().parents[1] / "tests" / "corpus" / "famulus" / "officina.toml"


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else _default_corpus())
