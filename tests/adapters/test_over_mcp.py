"""A framework that speaks MCP (the OpenAI Agents SDK's MCP client) against ``dispatcher mcp``.

No adapter: the SDK lists the table's tools from the server and every call
goes through the server's ``Registry.dispatch``; the injected token comes
from the operator's ``--context`` function and never reaches the SDK.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from agents import Agent, Runner
from agents.mcp import MCPServerStdio
from agents.tracing import set_trace_processors

from kits.agents_sdk import KeepingProcessor, ScriptedModel

ROOT = Path(__file__).resolve().parents[2]
CANARY = "mcp-agents-canary-31c7"


def test_the_agents_sdk_calls_the_table_over_mcp_and_never_sees_the_token() -> None:
    traces = KeepingProcessor()
    set_trace_processors([traces])
    model = ScriptedModel(
        [
            [
                ("c1", "get_invoice", '{"invoice_id": 7}'),
                ("c2", "get_invoice", '{"invoice_id": "7"}'),
                ("c3", "refund", '{"invoice_id": 7}'),
            ],
            "done",
        ]
    )
    arguments = [
        "-m",
        "boring_dispatch",
        "mcp",
        "--registry",
        "examples.frameworks.billing:BILLING",
        "--context",
        "examples.frameworks.billing:secrets",
    ]
    env = {"PATH": os.environ.get("PATH", ""), "BILLING_TOKEN": CANARY}

    async def run() -> Any:
        params = {"command": sys.executable, "args": arguments, "cwd": str(ROOT), "env": env}
        async with MCPServerStdio(params=params) as server:  # type: ignore[arg-type]
            agent = Agent(name="billing", model=model, mcp_servers=[server])
            return await Runner.run(agent, "refund 7")

    try:
        result = asyncio.run(run())
    finally:
        set_trace_processors([])
    outputs = {
        item["call_id"]: json.dumps(item["output"])
        for item in result.to_input_list()
        if item.get("type") == "function_call_output"
    }
    assert "amount_cents" in outputs["c1"]
    assert "invalid_arguments" not in outputs["c1"]
    assert "invalid_arguments" in outputs["c2"]
    assert "denied" in outputs["c3"]  # this client declares no elicitation
    assert "api_token" not in json.dumps(model.tools)
    recorded = json.dumps(result.to_input_list()) + "".join(model.inputs) + "".join(traces.records)
    assert CANARY not in recorded
