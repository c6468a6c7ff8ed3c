"""Demo, part 3: the example repository over MCP, driven by the official SDK's client.

Starts ``dispatcher mcp --config examples/repository/officina.toml`` as a real
stdio server and shows: the three listed tools, a level-0 call with machine
output (empty preview, full structured result), a human-output call that makes
nested calls, a tier mismatch, a denied caller, a dry run, and where the timing
spans were written.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

CONFIG = Path(__file__).resolve().parent / "repository" / "officina.toml"


def _projection(
    caller: str, interface: str, *positionals: str, dry_run: bool = False
) -> dict[str, object]:
    return {
        "caller": caller,
        "interface": interface,
        "version": 1,
        "arguments": {"positionals": list(positionals), "options": {}, "stdin": None},
        "dry_run": dry_run,
    }


def _show(title: str, result: Any) -> None:  # noqa: ANN401 - the SDK's result model
    wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    structured = wire.get("structuredContent", {}).get("result", {})
    meta = structured.get("dispatcher", {})
    print(f"\n--- {title}")
    print(f"  isError: {wire.get('isError', False)}")
    print(f"  text content (what a host previews): {json.dumps(wire['content'])[:200]}")
    if "error" in meta:
        print(f"  structured error: {meta['error']['code']}: {meta['error']['message']}")
    if "dry_run" in meta:
        payload = meta["dry_run"]
        print(
            f"  structured dry run: command={payload['command']} level={payload['security_level']}"
        )
    if structured.get("stdout"):
        first = structured["stdout"].splitlines()[:3]
        print(f"  structured stdout (first lines): {first}")
    if "trace_id" in meta:
        print(f"  trace_id: {meta['trace_id']}  audiences: {meta.get('output_audiences')}")


async def _session(logs: Path) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "ASSISTANT_LOGS": str(logs)}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "boring_dispatch", "mcp", "--config", str(CONFIG)],
        env=env,
    )
    async with Client(stdio_client(params), mode="legacy") as client:
        tools = await client.list_tools()
        print("--- tools/list")
        for tool in tools.tools:
            print(f"  {tool.name}: {(tool.description or '').splitlines()[0]}")
        calls = [
            (
                "a level-0 call with machine output: empty preview, full structured result",
                "invoke_security_0",
                _projection("notes", "notes._rtx.interface.list-notes"),
            ),
            (
                "a human-output call, which makes two nested calls inside",
                "invoke_security_0",
                _projection("planner", "planner._rtx.interface.morning-brief"),
            ),
            (
                "a tier mismatch: a level-0 interface through invoke_security_2",
                "invoke_security_2",
                _projection("notes", "notes._rtx.interface.list-notes"),
            ),
            (
                "a denied caller: journal may not read notes",
                "invoke_security_0",
                _projection("journal", "notes._rtx.interface.read-note", "today"),
            ),
            (
                "a dry run: authorized and compiled, nothing launched",
                "invoke_security_1",
                _projection(
                    "journal", "journal._rtx.interface.add-entry", "garden", "roses", dry_run=True
                ),
            ),
        ]
        for title, tool_name, arguments in calls:
            _show(title, await client.call_tool(tool_name, arguments))


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="boring-dispatch-demo-") as tmp:
        logs = Path(tmp)
        asyncio.run(_session(logs))
        files = sorted((logs / "dispatch").glob("*.jsonl"))
        print("\n--- timing spans")
        for path in files:
            lines = path.read_text(encoding="utf-8").splitlines()
            names = sorted({json.loads(line)["name"] for line in lines})
            print(
                f"  {len(lines)} spans in $ASSISTANT_LOGS/dispatch/{path.name}: {', '.join(names)}"
            )
        if files:
            print(f"  one span: {files[0].read_text(encoding='utf-8').splitlines()[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
