"""``dispatcher mcp --config ... --audit PATH``: one record per live tool call, over the SDK client.

A real server process, driven by the official SDK client over stdio; every
call plants a secret-looking value in the gateway's argv and stdin (and the
echo gateway prints both), and the audit file must never hold it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from boring_dispatch.observe.audit import read_records
from kits.mcp import CALLER, McpServer, projection, write_tools_repository

SECRET = "sk-live-MCP-AUDIT-CANARY-c41d"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mcp-audit")


@pytest.fixture(scope="module")
def audit(home: Path) -> Path:
    return home / "audit.jsonl"


@pytest.fixture(scope="module")
def server(home: Path, audit: Path) -> Iterator[McpServer]:
    config = write_tools_repository(home / "repo")
    args = ["mcp", "--config", str(config), "--ledger", str(home / "ledger.sqlite3")]
    with (
        (home / "server.log").open("w+", encoding="utf-8") as errlog,
        McpServer(
            [*args, "--audit", str(audit)],
            env={"ASSISTANT_LOGS": str(home / "logs")},
            cwd=config.parent,
            errlog=errlog,
        ) as running,
    ):
        yield running


def _new_records(audit: Path, seen: int) -> list[dict[str, object]]:
    found = read_records(audit)
    assert found.skipped == ()
    return [record for _, record in found.records][seen:]


def _count(audit: Path) -> int:
    return len(read_records(audit).records) if audit.exists() else 0


def _call(interface: str, **fields: object) -> dict[str, object]:
    return projection(interface, positionals=[SECRET], stdin=SECRET, **fields)  # type: ignore[arg-type]


CASES = [
    ("echo", {}, "ok", 0),
    ("fail", {}, "exit_nonzero", 3),
    ("no-such-interface", {}, "dispatcher.interface_not_found", None),
    ("private", {}, "dispatcher.unauthorized_caller", None),
    ("echo", {"--name": "UPPERCASE"}, "dispatcher.resolution_failed", None),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_each_tool_call_leaves_one_record_without_argv_stdin_or_output(
    server: McpServer, audit: Path, case: tuple[str, dict[str, object], str, int | None]
) -> None:
    interface, options, outcome, exit_code = case
    seen = _count(audit)
    call = _call(interface)
    call["arguments"]["options"] = options  # type: ignore[index]
    result = server.call("invoke_security_0", call)
    assert result["isError"] is (outcome != "ok")
    if outcome == "ok":
        assert SECRET in str(result["structuredContent"])  # the output held it
    (record,) = _new_records(audit, seen)
    assert record["kind"] == "repository_call"
    assert record["outcome"] == outcome
    assert record["exit_code"] == exit_code
    assert record["caller"] == CALLER
    assert record["interface"] == f"tools.interface.{interface}"
    assert record["version"] == 1
    trace_id = record["trace_id"]
    assert isinstance(trace_id, str)
    assert len(trace_id) == 32
    text = audit.read_text(encoding="ascii")
    assert SECRET not in text
    assert "UPPERCASE" not in text


def test_a_nested_call_is_recorded_as_nested_with_the_outer_trace(
    server: McpServer, audit: Path
) -> None:
    seen = _count(audit)
    result = server.call("invoke_security_0", _call("nested"))
    assert result["isError"] is False
    inner, outer = _new_records(audit, seen)
    assert (inner["nested"], inner["caller"], inner["outcome"]) == (True, "tools", "ok")
    assert (outer["nested"], outer["caller"], outer["outcome"]) == (False, CALLER, "ok")
    assert inner["trace_id"] == outer["trace_id"]
    assert isinstance(outer["trace_id"], str)


def test_concurrent_calls_each_leave_one_whole_record(server: McpServer, audit: Path) -> None:
    seen = _count(audit)
    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(
            pool.map(lambda _: server.call("invoke_security_0", _call("echo")), range(12))
        )
    assert all(result["isError"] is False for result in results)
    records = _new_records(audit, seen)
    assert len(records) == 12
    assert {record["outcome"] for record in records} == {"ok"}
    assert len({record["trace_id"] for record in records}) == 12
    assert SECRET not in audit.read_text(encoding="ascii")


def test_dry_runs_and_malformed_requests_leave_no_record(server: McpServer, audit: Path) -> None:
    seen = _count(audit)
    dry = server.call("invoke_security_0", _call("echo", dry_run=True))
    assert dry["isError"] is False
    malformed = server.call("invoke_security_0", {"caller": CALLER, "interface": 3})
    assert malformed["isError"] is True
    assert _new_records(audit, seen) == []


def test_an_unopenable_audit_file_stops_the_server_before_it_serves(tmp_path: Path) -> None:
    config = write_tools_repository(tmp_path / "repo")
    fifo = tmp_path / "audit.fifo"
    os.mkfifo(fifo)  # never opened for writing: a reader-less FIFO would block, a FIFO is refused
    done = subprocess.run(
        [
            *(sys.executable, "-m", "boring_dispatch", "mcp", "--config", str(config)),
            *("--error-format", "json", "--audit", str(fifo)),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode != 0
    assert "dispatcher.runtime_misconfigured" in done.stderr
