"""A whole managed-setup flow over MCP with the SDK client; continuations sent unchanged."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kits.mcp import McpServer
from kits.setup_repo import CALLER, write_setup_repository


@pytest.fixture
def server(tmp_path: Path) -> Iterator[McpServer]:
    config = write_setup_repository(tmp_path / "repo")
    ledger = tmp_path / "ledger.sqlite3"
    with (
        (tmp_path / "server.log").open("w+", encoding="utf-8") as errlog,
        McpServer(
            ["mcp", "--config", str(config), "--ledger", str(ledger)],
            env={"ASSISTANT_LOGS": str(tmp_path / "logs")},
            cwd=config.parent,
            errlog=errlog,
        ) as running,
    ):
        yield running


def _call(interface: str, flow: str | None = None) -> dict[str, object]:
    projection: dict[str, object] = {
        "caller": CALLER,
        "interface": interface,
        "version": 1,
        "arguments": {"positionals": [], "options": {}, "stdin": None},
        "dry_run": False,
    }
    if flow is not None:
        projection["setup_flow_id"] = flow
    return projection


def _dispatcher(result: dict[str, Any]) -> dict[str, Any]:
    found = result["structuredContent"]["result"]["dispatcher"]
    assert isinstance(found, dict)
    return found


def _manager(server: McpServer, request: dict[str, Any]) -> dict[str, Any]:
    """Send a manager continuation exactly as received."""
    result = server.call("invoke_security_2", request)
    assert result["isError"] is False, result
    assert result["content"] == [{"type": "text", "text": ""}]
    setup = _dispatcher(result)["setup"]
    assert isinstance(setup, dict)
    return setup


def test_the_demo_flow_from_refusal_to_resumed_call(server: McpServer) -> None:
    refused = server.call("invoke_security_0", _call("app.interface.read"))
    assert refused["isError"] is True
    assert refused["content"] == [{"type": "text", "text": ""}]  # a refusal adds no preview
    setup = _dispatcher(refused)["setup"]
    assert setup["status"] == "setup_required"
    assert setup["call_path"] == ["app.interface.read"]
    assert _dispatcher(refused)["error"]["code"] == "dispatcher.setup_required"
    begin = setup["manager"]
    assert begin["interface"] == "setup-interface-manager._rtx.interface.begin"
    assert begin["caller"] == CALLER

    step = _manager(server, begin)
    assert step["step"] == "base.interface.setup@1"
    flow = step["flow_id"]
    busy = server.call("invoke_security_0", _call("app.interface.read"))
    assert _dispatcher(busy)["setup"] == {"status": "setup_busy", "flow_id": flow}

    ran = _manager(server, step["manager"])
    assert ran["ran"]["ok"] is True
    markdown = _manager(server, ran["manager"])
    assert markdown["setup_flow_id"] == flow

    inner = server.call("invoke_security_0", _call("app._rtx.interface.inner", flow))
    assert inner["isError"] is False
    assert inner["structuredContent"]["result"]["stdout"] == "inner\n"

    done = _manager(server, markdown["settle"])
    assert done["status"] == "completed"
    resume = done["resume"]
    assert resume["tool"] == "invoke_security_0"
    resumed = server.call(resume["tool"], resume["request"])
    assert resumed["isError"] is False
    assert resumed["structuredContent"]["result"]["stdout"] == "read\n"


def test_nested_refusals_and_managed_exports_over_mcp(server: McpServer) -> None:
    nested = server.call("invoke_security_0", _call("plain.interface.nest"))
    setup = _dispatcher(nested)["setup"]
    assert setup["call_path"] == ["plain.interface.nest", "app.interface.read"]
    assert "NESTED-OK" not in str(nested)  # the gateway's output cannot hide the refusal
    resume = setup["manager"]["arguments"]["options"]["resume"]
    assert resume == '{"caller":"host","interface":"plain.interface.nest","version":1}'

    managed = server.call("invoke_security_0", _call("base.interface.teardown"))
    found = _dispatcher(managed)["setup"]
    assert found["status"] == "setup_managed"
    assert found["manager"]["interface"] == "setup-interface-manager._rtx.interface.teardown"


def test_manager_routes_are_level_2_only(server: McpServer) -> None:
    request = {
        "caller": CALLER,
        "interface": "setup-interface-manager._rtx.interface.status",
        "version": 1,
        "arguments": {"options": {"interface": "app.interface.read"}},
    }
    for tool in ("invoke_security_0", "invoke_security_1"):
        refused = server.call(tool, request)
        assert _dispatcher(refused)["error"]["code"] == "dispatcher.security_level_mismatch"
    lookalike = dict(request, interface="setup-interface-manager._rtx.interface.status.x")
    assert server.call("invoke_security_2", lookalike)["isError"] is True
    assert _manager(server, request)["status"] == "setup_required"
