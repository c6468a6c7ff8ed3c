"""A setup step the manager runs over MCP is a gateway of the session: the server's limits hold.

``dispatcher mcp --timeout``, ``--run-as`` and ``--spawn-gateways`` apply to
every gateway the session launches, nested ones included (docs/mcp.md). The
manager's ``run-python`` route launches the current Python step of a flow;
that launch must get the server's limits and the call's trace id (so that a
cancel reaches it), not the library defaults (a 60 s timeout, the dispatcher's
own user). A live ``run-python`` call also waits for one of the server's call
slots, as a launch does. Each test drives a real ``dispatcher mcp`` with the
SDK client.
"""

from __future__ import annotations

import concurrent.futures
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from boring_dispatch.surfaces.mcp.server import MAX_CONCURRENT_CALLS
from kits.gateways import process_gone, wait_until, written
from kits.mcp import McpServer
from kits.mcpcalls import BoundedServer
from kits.setup_repo import CALLER, write_setup_repository

#: The server's --timeout in these tests; the library default is 60 s.
TIMEOUT_S = 2
NOBODY = 65534


@contextmanager
def _serve(tmp_path: Path, *extra: str) -> Iterator[tuple[McpServer, Path]]:
    config = write_setup_repository(tmp_path / "repo")
    ledger = tmp_path / "ledger.sqlite3"
    with (
        (tmp_path / "server.log").open("w+", encoding="utf-8") as errlog,
        McpServer(
            ["mcp", "--config", str(config), "--ledger", str(ledger), *extra],
            env={"ASSISTANT_LOGS": str(tmp_path / "logs")},
            cwd=config.parent,
            errlog=errlog,
        ) as running,
    ):
        yield running, config.parent


def _setup_of_base(server: McpServer) -> dict[str, Any]:
    """Begin the flow of ``base.interface.work`` and run its Python step; the route's result."""
    refused = server.call(
        "invoke_security_0",
        {"caller": CALLER, "interface": "base.interface.work", "version": 1},
    )
    begin = refused["structuredContent"]["result"]["dispatcher"]["setup"]["manager"]
    began = server.call("invoke_security_2", begin)
    assert began["isError"] is False, began
    step = began["structuredContent"]["result"]["dispatcher"]["setup"]
    assert step["step"] == "base.interface.setup@1", step
    ran = server.call("invoke_security_2", step["manager"])
    assert ran["isError"] is False, ran
    setup = ran["structuredContent"]["result"]["dispatcher"]["setup"]
    assert isinstance(setup, dict)
    return setup


@pytest.mark.parametrize("mode", [(), ("--spawn-gateways",)], ids=["forked", "spawned"])
def test_a_setup_step_over_mcp_ends_at_the_servers_timeout(
    tmp_path: Path, mode: tuple[str, ...]
) -> None:
    with _serve(tmp_path, f"--timeout={TIMEOUT_S}", *mode) as (server, root):
        (root / "skills" / "base" / "control.txt").write_text("sleep\n")
        began = time.monotonic()
        setup = _setup_of_base(server)
        elapsed = time.monotonic() - began
        assert setup["ran"]["ok"] is False
        assert setup["status"] == "failed", setup
        # The server's timeout (plus the group's grace), not the library's 60 s.
        assert elapsed < TIMEOUT_S + 15, elapsed


@pytest.mark.skipif(os.geteuid() != 0, reason="--run-as needs a root dispatcher")
def test_a_setup_step_over_mcp_never_runs_as_the_dispatchers_user_under_run_as(
    tmp_path: Path,
) -> None:
    tmp_path.chmod(0o755)
    with _serve(tmp_path, f"--run-as={NOBODY}:{NOBODY}") as (server, root):
        (root / "skills" / "base" / "control.txt").write_text("uid\n")
        ran = _setup_of_base(server)["ran"]
        # Either it ran as the run-as user, or (an interpreter that user cannot run) it
        # could not start: never as root.
        assert "uid=0" not in str(ran.get("stdout", "")), ran
        if ran["ok"]:
            assert ran["stdout"] == f"setup uid={NOBODY}\n"


@pytest.mark.parametrize("mode", [(), ("--spawn-gateways",)], ids=["forked", "spawned"])
def test_a_cancelled_setup_step_over_mcp_ends_its_gateway(
    tmp_path: Path, mode: tuple[str, ...]
) -> None:
    """The client gives up on ``run-python``: the step's gateway ends, as a launch's does."""
    with _serve(tmp_path, "--timeout=120", *mode) as (server, root):
        module = root / "skills" / "base"
        (module / "control.txt").write_text("sleep\n")
        refused = server.call(
            "invoke_security_0",
            {"caller": CALLER, "interface": "base.interface.work", "version": 1},
        )
        begin = refused["structuredContent"]["result"]["dispatcher"]["setup"]["manager"]
        step = server.call("invoke_security_2", begin)["structuredContent"]["result"]
        run_python = step["dispatcher"]["setup"]["manager"]
        error = server.call_with_timeout("invoke_security_2", run_python, 3.0)
        assert error is not None  # the client gave up (and sent its cancel)
        assert written(module / "pid.txt")
        pid = int((module / "pid.txt").read_text())
        # While the server still runs (its end would end the gateway anyway).
        assert wait_until(lambda: process_gone(pid)), "the cancelled step's gateway still runs"


def test_a_setup_step_over_mcp_waits_for_a_call_slot(tmp_path: Path) -> None:
    """Every slot held by a running gateway: the step's gateway starts only once one is free."""
    config = write_setup_repository(tmp_path / "repo")
    plain = config.parent / "skills" / "plain"
    hold = {"caller": CALLER, "interface": "plain.interface.hold", "version": 1}
    args = ["mcp", "--config", str(config), "--ledger", str(tmp_path / "ledger.sqlite3")]
    env = {"ASSISTANT_LOGS": str(tmp_path / "logs")}
    with (
        (tmp_path / "server.log").open("w+", encoding="utf-8") as errlog,
        BoundedServer(args, env=env, cwd=config.parent, errlog=errlog) as server,
    ):
        refused = server.call(
            "invoke_security_0",
            {"caller": CALLER, "interface": "base.interface.work", "version": 1},
        )
        begin = refused["structuredContent"]["result"]["dispatcher"]["setup"]["manager"]
        step = server.call("invoke_security_2", begin)["structuredContent"]["result"]
        run_python = step["dispatcher"]["setup"]["manager"]
        held = [server.start_call("invoke_security_0", hold) for _ in range(MAX_CONCURRENT_CALLS)]
        try:
            assert wait_until(lambda: len(list(plain.glob("hold-*.pid"))) == MAX_CONCURRENT_CALLS)
            waiting = server.start_call("invoke_security_2", run_python)
            done, _ = concurrent.futures.wait([waiting], timeout=3.0)
            assert not done, "the setup step ran while every call slot was held"
        finally:
            (plain / "release").touch()
            for future in held:
                future.result(timeout=30)
        ran = waiting.result(timeout=30).structured_content["result"]["dispatcher"]["setup"]
        assert ran["ran"]["ok"] is True, ran
