from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from boring_dispatch.registry.deployed import deploy
from kits import fixture_tables
from kits.mcp import McpServer

TESTS = Path(__file__).resolve().parents[2]


def test_an_mcp_server_of_a_deployed_surface_lists_and_calls_its_rows_only(tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path}/tables.db"
    deploy(fixture_tables.TABLE, ["get_job"], surface="web", database=url, deployed_by="ci")
    errlog = (tmp_path / "err.log").open("w")
    args = ["mcp", "--registry", "kits.fixture_tables:TABLE", "--database", url, "--surface", "web"]
    with errlog, McpServer(args, env={}, cwd=TESTS, errlog=errlog) as server:
        assert [tool["name"] for tool in server.list_tools()] == ["get_job"]
        assert server.call("get_job", {"job_id": 7})["isError"] is False
        refused = server.call("finish", {"answer": "x"})
    assert refused["isError"] is True
    assert "unknown_tool" in str(refused["structuredContent"] or refused["content"])


def test_a_deployed_surface_that_does_not_load_stops_the_server_before_it_starts(
    tmp_path: Path,
) -> None:
    for extra in (
        ["--database", f"sqlite://{tmp_path}/missing.db", "--surface", "web"],
        ["--surface", "web"],
    ):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "boring_dispatch",
                "mcp",
                "--registry",
                "kits.fixture_tables:TABLE",
                *extra,
            ],
            cwd=TESTS,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 2
        assert done.stderr.startswith("error: ")
