"""A Python step's lease: renewed while its runner lives, whatever the ledger's connection does."""

from __future__ import annotations

import os
import signal
import threading
from functools import partial
from pathlib import Path

import psycopg
import pytest

from boring_dispatch.repository.repository import Repository
from boring_dispatch.setup.manager.routes import SetupManager
from kits.gateways import process_gone, wait_until
from kits.setup_repo import CALLER, write_setup_repository

RESUME = '{"caller":"host","interface":"base.interface.work","version":1}'


def _lease(url: str) -> float:
    with psycopg.connect(url, autocommit=True) as connection:
        row = connection.execute(
            "SELECT lease_expires_at FROM flows WHERE state = 'active'"
        ).fetchone()
    assert row is not None
    return float(row[0])


def _drop_other_connections(url: str) -> None:
    """The database drops every other session (a restart, a network cut, a failover)."""
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )


def test_a_lost_ledger_connection_does_not_stop_the_lease_renewal(
    tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # If the renewal gave up on the first failed transaction, the live runner's
    # lease would expire and ``recover`` would hand the step to a second
    # runner while the first still runs it: the same setup run twice at once.
    monkeypatch.setenv("BORING_DISPATCH_SETUP_LEASE_S", "0.3")
    config = write_setup_repository(tmp_path / "repo")
    control = config.parent / "skills" / "base" / "control.txt"
    control.write_text("sleep")
    manager = SetupManager(Repository.open(config, ledger=postgres_url))
    began = manager.call("begin", CALLER, {"setup": "base.interface.setup@1", "resume": RESUME})
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(manager.call("run-python", CALLER, {"flow": began["flow_id"]}))
        except Exception as error:  # the step is killed below: any outcome will do
            outcome.append(error)

    runner = threading.Thread(target=run)
    runner.start()
    pid_file = control.with_name("pid.txt")
    gateway = 0
    try:
        assert wait_until(pid_file.exists, timeout_s=60), "the step never started"
        gateway = int(pid_file.read_text())
        _drop_other_connections(postgres_url)
        dropped_at = _lease(postgres_url)
        assert wait_until(lambda: _lease(postgres_url) > dropped_at + 0.5, timeout_s=10), (
            "the lease was not renewed after the connection was lost"
        )
    finally:
        if gateway:
            os.kill(gateway, signal.SIGKILL)
            assert wait_until(partial(process_gone, gateway), timeout_s=30)
        runner.join(timeout=60)
        manager.ledger().close()
    assert not runner.is_alive()
