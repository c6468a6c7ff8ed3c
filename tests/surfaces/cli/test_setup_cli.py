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
