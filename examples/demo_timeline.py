"""Demo, part 5: the milestone timeline of an MCP session, joined to the dispatcher's spans.

Runs a short MCP session against the example repository (a person's message,
three tool calls, a final answer), writes the session file the way Codex
writes its rollouts (``session_meta``, ``user_message``, ``function_call``,
``mcp_tool_call_end``, ``function_call_output``, ``agent_message``,
``task_complete``) from the real calls, their real results and trace ids,
then prints ``dispatcher timeline`` of it.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

CONFIG = Path(__file__).resolve().parent / "repository" / "officina.toml"
SERVER = "dispatch"
CALLS = (
    ("invoke_security_0", "notes", "notes._rtx.interface.list-notes"),
    ("invoke_security_0", "planner", "planner._rtx.interface.morning-brief"),
    ("invoke_security_0", "journal", "notes._rtx.interface.read-note"),
)


def _iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


def _line(moment: float, kind: str, payload: dict[str, Any]) -> str:
    return json.dumps({"timestamp": _iso(moment), "type": kind, "payload": payload}) + "\n"


async def _session(logs: Path) -> list[str]:
    """The rollout's lines, from a real session (the host's side of each call)."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "ASSISTANT_LOGS": str(logs)}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "boring_dispatch", "mcp", "--config", str(CONFIG)],
        env=env,
    )
    started = time.time()
    lines = [_line(started, "session_meta", {"id": str(uuid.uuid4()), "cwd": str(CONFIG.parent)})]
    async with Client(stdio_client(params), mode="legacy") as client:
        await client.list_tools()
        lines.append(_line(time.time(), "event_msg", {"type": "user_message", "message": "brief"}))
        for tool, caller, interface in CALLS:
            arguments = {
                "caller": caller,
                "interface": interface,
                "version": 1,
                "arguments": {"positionals": [], "options": {}, "stdin": None},
                "dry_run": False,
            }
            call_id = "call_" + uuid.uuid4().hex[:16]
            called = time.time()
            result = await client.call_tool(tool, arguments)
            returned = time.time()
            wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            function_call = {
                "type": "function_call",
                "name": f"mcp__{SERVER}__{tool}",
                "arguments": json.dumps(arguments),
                "call_id": call_id,
            }
            elapsed = returned - called
            end = {
                "type": "mcp_tool_call_end",
                "call_id": call_id,
                "invocation": {"server": SERVER, "tool": tool, "arguments": arguments},
                "duration": {"secs": int(elapsed), "nanos": int(elapsed % 1 * 1e9)},
                "result": {"Ok": wire},
            }
            output = {
                "type": "function_call_output",
                "call_id": call_id,
                "output": json.dumps(wire.get("structuredContent")),
            }
            lines.append(_line(called, "response_item", function_call))
            lines.append(_line(returned, "event_msg", end))
            lines.append(_line(returned, "response_item", output))
        answered = time.time()
        lines.append(_line(answered, "event_msg", {"type": "agent_message", "message": "Done."}))
        lines.append(_line(answered, "event_msg", {"type": "task_complete"}))
    return lines


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="boring-dispatch-timeline-") as tmp:
        logs = Path(tmp) / "logs"
        rollout = Path(tmp) / "rollout-demo.jsonl"
        rollout.write_text("".join(asyncio.run(_session(logs))), encoding="utf-8")
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "boring_dispatch",
                "timeline",
                str(rollout),
                "--logs",
                str(logs),
            ],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        print(done.stdout, end="")
        print(done.stderr, end="", file=sys.stderr)
        return done.returncode


if __name__ == "__main__":
    raise SystemExit(main())
