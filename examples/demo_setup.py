"""Demo, part 4: a managed setup flow over MCP, from the refused call to the resumed call.

On a private copy of the example repository (the vault's setup writes a key
file) and a private SQLite ledger: ``mailer._rtx.interface.send`` answers
``setup_required``; its ``manager`` request, sent unchanged, begins the flow;
``run-python`` runs the vault's Python step; ``run-markdown`` returns the
mailer's Markdown step; the call it asks for carries ``setup_flow_id``;
``settle`` ends the flow and returns the resumed call, which now succeeds.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

EXAMPLE = Path(__file__).resolve().parent / "repository"


def _projection(interface: str, *words: str, flow: str | None = None) -> dict[str, object]:
    projection: dict[str, object] = {
        "caller": "mailer",
        "interface": interface,
        "version": 1,
        "arguments": {"positionals": list(words), "options": {}, "stdin": None},
        "dry_run": False,
    }
    if flow is not None:
        projection["setup_flow_id"] = flow
    return projection


def _result(result: Any) -> dict[str, Any]:  # noqa: ANN401 - the SDK's result model
    wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    structured: dict[str, Any] = wire["structuredContent"]["result"]
    structured["isError"] = wire.get("isError", False)
    return structured


async def _session(config: Path, ledger: Path) -> str:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "boring_dispatch", "mcp", "--config", str(config), "--ledger", str(ledger)],
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
    )
    async with Client(stdio_client(params), mode="legacy") as client:

        async def call(tool: str, arguments: dict[str, object], title: str) -> dict[str, Any]:
            found = _result(await client.call_tool(tool, arguments))
            setup = found["dispatcher"].get("setup", {})
            shown = {k: setup[k] for k in ("status", "step", "call_path", "flow_id") if k in setup}
            print(f"--- {title}\n  isError: {found['isError']}  setup: {json.dumps(shown)}")
            if found.get("stdout") and "setup" not in found["dispatcher"]:
                print(f"  stdout: {found['stdout'].strip()}")
            return found

        send = _projection("mailer._rtx.interface.send", "hello")
        refused = await call("invoke_security_0", send, "the call: setup is required")
        begin = refused["dispatcher"]["setup"]["manager"]
        step = await call("invoke_security_2", begin, "begin (the manager request, unchanged)")
        python = step["dispatcher"]["setup"]
        ran = await call("invoke_security_2", python["manager"], "run-python: the vault's step")
        markdown = await call(
            "invoke_security_2", ran["dispatcher"]["setup"]["manager"], "run-markdown"
        )
        text = markdown["dispatcher"]["setup"]
        print("  markdown step:", text["markdown"].splitlines()[0])
        flow = text["setup_flow_id"]
        await call(
            "invoke_security_0",
            _projection("mailer._rtx.interface.check-account", flow=flow),
            "the call the Markdown asks for, with setup_flow_id",
        )
        done = await call("invoke_security_2", text["settle"], "settle: the flow completes")
        resume = done["dispatcher"]["setup"]["resume"]
        resumed = await call(resume["tool"], send, "the resumed call succeeds")
        return str(resumed.get("stdout", ""))


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="boring-dispatch-setup-demo-") as tmp:
        root = Path(tmp).resolve()
        shutil.copytree(EXAMPLE, root / "repository", ignore=shutil.ignore_patterns("__pycache__"))
        out = asyncio.run(_session(root / "repository" / "officina.toml", root / "ledger.sqlite3"))
    return 0 if out.strip() == "sent: hello" else 1


if __name__ == "__main__":
    raise SystemExit(main())
