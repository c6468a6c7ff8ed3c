"""Two ``dispatcher mcp`` processes on one ledger: 50 concurrent begins make exactly one flow."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from boring_dispatch.setup.ledger import ops
from boring_dispatch.setup.ledger.opening import open_ledger
from kits.mcp import McpServer
from kits.setup_repo import CALLER, write_setup_repository

BEGINS = 50
RESUME = '{"caller":"host","interface":"app.interface.read","version":1}'
BEGIN = {
    "caller": CALLER,
    "interface": "setup-interface-manager._rtx.interface.begin",
    "version": 1,
    "arguments": {"options": {"setup": "app.interface.setup@1", "resume": RESUME}},
}


@contextlib.contextmanager
def _servers(tmp_path: Path, ledger: str, count: int = 2) -> Iterator[list[McpServer]]:
    config = write_setup_repository(tmp_path / "repo")
    with contextlib.ExitStack() as stack:
        log = stack.enter_context((tmp_path / "servers.log").open("w+", encoding="utf-8"))
        yield [
            stack.enter_context(
                McpServer(
                    ["mcp", "--config", str(config), "--ledger", ledger],
                    env={},
                    cwd=config.parent,
                    errlog=log,
                )
            )
            for _ in range(count)
        ]


def _begin_everywhere(servers: list[McpServer]) -> list[dict[str, Any]]:
    with ThreadPoolExecutor(max_workers=BEGINS) as pool:
        futures = [
            pool.submit(servers[index % len(servers)].call, "invoke_security_2", BEGIN)
            for index in range(BEGINS)
        ]
        return [future.result(timeout=120) for future in futures]


def _check(results: list[dict[str, Any]], ledger: str, config: Path) -> None:
    dispatchers = [r["structuredContent"]["result"]["dispatcher"] for r in results]
    began = [d["setup"] for d in dispatchers if "error" not in d]
    busy = [d["setup"] for d in dispatchers if "error" in d]
    assert len(began) == 1, dispatchers
    assert len(busy) == BEGINS - 1
    assert {b["status"] for b in busy} == {"setup_busy"}
    assert {b["flow_id"] for b in busy} == {began[0]["flow_id"]}
    store = open_ledger(config, ledger)
    with store.transaction() as tx:
        active = ops.active_flow(tx)
        rows = tx.all("SELECT count(*) FROM flows")
    store.close()
    assert active is not None
    assert active.flow_id == began[0]["flow_id"]
    assert rows == [(1,)]


def test_fifty_begins_over_two_servers_on_one_sqlite_file(tmp_path: Path) -> None:
    ledger = str(tmp_path / "shared.sqlite3")
    with _servers(tmp_path, ledger) as servers:
        results = _begin_everywhere(servers)
    _check(results, ledger, tmp_path / "repo" / "officina.toml")


@pytest.mark.usefixtures("postgres_server")
def test_fifty_begins_over_two_servers_on_one_postgresql(tmp_path: Path, postgres_url: str) -> None:
    with _servers(tmp_path, postgres_url) as servers:
        results = _begin_everywhere(servers)
    _check(results, postgres_url, tmp_path / "repo" / "officina.toml")


RACERS = 12


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_racing_settles_and_runs_record_one_outcome(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    # Over two servers, racing run-python calls on one Python step, then racing
    # settles of the Markdown step (ready against failed): exactly one of each
    # is recorded; the others are refused; never two outcomes for one step.
    ledger = (
        str(tmp_path / "shared.sqlite3")
        if backend == "sqlite"
        else str(request.getfixturevalue("postgres_url"))
    )
    with _servers(tmp_path, ledger) as servers:
        (began,) = [
            r["structuredContent"]["result"]["dispatcher"]["setup"]
            for r in _begin_everywhere(servers)
            if "error" not in r["structuredContent"]["result"]["dispatcher"]
        ]
        flow = began["flow_id"]

        def route(index: int, name: str, options: dict[str, str]) -> dict[str, Any]:
            call = {
                "caller": CALLER,
                "interface": f"setup-interface-manager._rtx.interface.{name}",
                "version": 1,
                "arguments": {"options": options},
            }
            answer = servers[index % 2].call("invoke_security_2", call)
            dispatcher: dict[str, Any] = answer["structuredContent"]["result"]["dispatcher"]
            return dispatcher

        with ThreadPoolExecutor(max_workers=RACERS) as pool:
            runs = list(pool.map(lambda i: route(i, "run-python", {"flow": flow}), range(RACERS)))
        assert len([r for r in runs if "error" not in r]) == 1, runs
        settle = {"flow": flow, "setup": "app.interface.setup@1"}
        with ThreadPoolExecutor(max_workers=RACERS) as pool:
            settles = list(
                pool.map(
                    lambda i: route(
                        i, "settle", {**settle, "outcome": "ready" if i % 2 else "failed"}
                    ),
                    range(RACERS),
                )
            )
        won = [s for s in settles if "error" not in s]
        assert len(won) == 1, settles
    store = open_ledger(tmp_path / "repo" / "officina.toml", ledger)
    with store.transaction() as tx:
        kinds = [str(k) for (k,) in tx.all("SELECT kind FROM events ORDER BY seq")]
    store.close()
    assert kinds.count("step_claimed") == 1
    assert kinds.count("step_ready") + kinds.count("step_failed") == 2
