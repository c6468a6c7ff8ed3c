"""``dispatcher setup ...`` and the live CLI's setup refusals, as real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kits.setup_repo import CALLER, write_setup_repository

RESUME = '{"caller":"host","interface":"app.interface.read","version":1}'


def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "boring_dispatch", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )


@pytest.fixture
def setting(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    config = write_setup_repository(tmp_path / "repo")
    env = {**os.environ, "BORING_DISPATCH_LEDGER": str(tmp_path / "ledger.sqlite3")}
    return config, env


def test_a_live_cli_call_is_refused_with_the_setup_status(
    setting: tuple[Path, dict[str, str]],
) -> None:
    config, env = setting
    done = _run(
        "--config",
        str(config),
        "--caller-skill",
        CALLER,
        "--error-format",
        "json",
        "plain.interface.nest",
        env=env,
    )
    # The CLI streams the gateway's output as it comes; the refusal is the exit status
    # and the error line, whatever the gateway printed or exited with.
    assert done.returncode == 2
    error = json.loads(done.stderr.strip().splitlines()[-1])
    assert error["code"] == "dispatcher.setup_required"
    assert error["setup"]["call_path"] == ["plain.interface.nest", "app.interface.read"]
    assert "manager" not in error["setup"]  # only MCP renders continuations
    dry = _run(
        "--config",
        str(config),
        "--caller-skill",
        CALLER,
        "--dry-run",
        "app.interface.read",
        env=env,
    )
    assert dry.returncode == 0


def test_the_setup_command_walks_a_flow(setting: tuple[Path, dict[str, str]]) -> None:
    config, env = setting
    common = ["--config", str(config), "--caller", CALLER]
    status = _run("setup", "status", *common, "--interface", "app.interface.read", env=env)
    assert json.loads(status.stdout)["status"] == "setup_required"
    began = json.loads(
        _run(
            "setup",
            "begin",
            *common,
            "--setup",
            "app.interface.setup@1",
            "--resume",
            RESUME,
            env=env,
        ).stdout
    )
    flow = began["flow_id"]
    assert (
        json.loads(_run("setup", "run-python", *common, "--flow", flow, env=env).stdout)["step"]
        == "app.interface.setup@1"
    )
    settled = _run(
        "setup",
        "settle",
        *common,
        "--flow",
        flow,
        "--setup",
        "app.interface.setup@1",
        "--outcome",
        "ready",
        env=env,
    )
    assert json.loads(settled.stdout)["status"] == "completed"
    ran = _run("--config", str(config), "--caller-skill", CALLER, "app.interface.read", env=env)
    assert (ran.returncode, ran.stdout) == (0, "read\n")
    bad = _run(
        "setup",
        "settle",
        *common,
        "--flow",
        flow,
        "--setup",
        "app.interface.setup@1",
        "--outcome",
        "ready",
        "--error-format",
        "json",
        env=env,
    )
    assert bad.returncode == 2
    assert json.loads(bad.stderr)["code"] == "dispatcher.setup_flow_refused"


def test_each_setup_route_run_leaves_one_audit_record_without_its_options(
    setting: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    from boring_dispatch.observe.audit import read_records

    config, env = setting
    audit = tmp_path / "audit.jsonl"
    common = ["--config", str(config), "--caller", CALLER, "--audit", str(audit)]
    secret = "app.interface.read-CANARY-77e1"
    ran = [
        _run("setup", "status", *common, "--interface", "app.interface.read", env=env),
        _run("setup", "status", *common, "--interface", secret, env=env),
        _run("setup", "begin", *common, "--setup", secret, env=env),
    ]
    assert ran[0].returncode == 0, ran[0].stderr
    assert [done.returncode for done in ran[1:]] == [2, 2]
    found = read_records(audit)
    assert found.skipped == ()
    records = [record for _, record in found.records]
    assert [record["interface"] for record in records] == [
        "setup-interface-manager._rtx.interface.status",
        "setup-interface-manager._rtx.interface.status",
        "setup-interface-manager._rtx.interface.begin",
    ]
    assert records[0]["outcome"] == "ok"
    assert all(str(r["outcome"]).startswith("dispatcher.") for r in records[1:])
    assert {(r["caller"], r["nested"]) for r in records} == {(CALLER, False)}
    # As over MCP: a route that ran has level 2; a refusal is recorded before any level.
    assert [r["security_level"] for r in records] == [2, None, None]
    assert len({r["trace_id"] for r in records}) == 3
    assert "CANARY" not in audit.read_text(encoding="ascii")
