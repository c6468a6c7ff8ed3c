"""``kill -9`` of a Python step's runner, again and again: the ledger stays consistent.

The runner is a real ``dispatcher setup run-python`` process (it holds the
step's lease and launches the step's gateway). Killed mid-step, it leaves the
step ``running`` under a lease that nobody renews; ``recover`` brings it back
to pending once the lease expired (``BORING_DISPATCH_SETUP_LEASE_S`` keeps it
short here). Never two active flows, never ``ready`` without a successful run.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest

from boring_dispatch.setup.ledger.opening import open_ledger
from kits.gateways import process_gone, wait_until
from kits.setup_repo import CALLER, write_setup_repository

ROUNDS = 6
RESUME = '{"caller":"host","interface":"base.interface.work","version":1}'


def _setup(config: Path, ledger: str, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "boring_dispatch",
            "setup",
            *args,
            "--config",
            str(config),
            "--ledger",
            ledger,
            "--caller",
            CALLER,
            "--error-format",
            "json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _result(process: subprocess.Popen[str]) -> dict[str, object]:
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    found = json.loads(out)
    assert isinstance(found, dict)
    return found


def _rows(ledger: str, sql: str) -> list[tuple[object, ...]]:
    if not ledger.startswith("postgresql://"):
        connection = sqlite3.connect(ledger)
        try:
            return [tuple(row) for row in connection.execute(sql).fetchall()]
        finally:
            connection.close()
    store = open_ledger(Path("/unused/officina.toml"), ledger)
    try:
        with store.transaction() as tx:
            return [tuple(row) for row in tx.all(sql)]
    finally:
        store.close()


def _invariants(ledger: str, *, ready_allowed: bool) -> None:
    active = _rows(ledger, "SELECT count(*) FROM flows WHERE state = 'active'")
    ready = _rows(ledger, "SELECT count(*) FROM setups WHERE state = 'ready'")
    assert active[0][0] in (0, 1)
    if not ledger.startswith("postgresql://"):
        assert _rows(ledger, "PRAGMA integrity_check") == [("ok",)]
    if not ready_allowed:
        assert ready == [(0,)]


@pytest.fixture(params=["sqlite", "postgresql"])
def ledger(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "ledger.sqlite3")
    url: str = request.getfixturevalue("postgres_url")
    return url


def test_repeated_kill_9_of_the_step_runner(tmp_path: Path, ledger: str) -> None:
    config = write_setup_repository(tmp_path / "repo")
    control = config.parent / "skills" / "base" / "control.txt"
    pid_file = control.with_name("pid.txt")
    env = {**os.environ, "BORING_DISPATCH_SETUP_LEASE_S": "0.5"}
    began = _result(
        _setup(
            config, ledger, env, "begin", "--setup", "base.interface.setup@1", "--resume", RESUME
        )
    )
    flow = str(began["flow_id"])
    control.write_text("sleep")
    for _ in range(ROUNDS):
        pid_file.unlink(missing_ok=True)
        runner = _setup(config, ledger, env, "run-python", "--flow", flow)
        assert wait_until(pid_file.exists, timeout_s=60), "the step never started"
        gateway = int(pid_file.read_text())
        runner.send_signal(signal.SIGKILL)
        runner.communicate(timeout=30)
        os.kill(gateway, signal.SIGKILL)  # the orphaned step (its own session) goes too
        assert wait_until(partial(process_gone, gateway), timeout_s=30)
        _invariants(ledger, ready_allowed=False)
        assert _rows(ledger, "SELECT step_state FROM flows") == [("running",)]

        def recovered() -> bool:
            result = _result(_setup(config, ledger, env, "recover", "--flow", flow))
            return result["recovered"] is True

        assert wait_until(recovered, timeout_s=30), "recover never freed the step"
        _invariants(ledger, ready_allowed=False)
    control.write_text("ok")
    done = _result(_setup(config, ledger, env, "run-python", "--flow", flow))
    assert done["status"] == "completed"
    _invariants(ledger, ready_allowed=True)
    kinds = [k for (k,) in _rows(ledger, "SELECT kind FROM events ORDER BY seq")]
    assert kinds.count("step_claimed") == ROUNDS + 1
    assert kinds.count("step_recovered") == ROUNDS
    assert kinds.count("step_ready") == 1
