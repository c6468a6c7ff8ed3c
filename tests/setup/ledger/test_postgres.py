"""The ledger on a real PostgreSQL (a throwaway server): same schema, same semantics."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from boring_dispatch.errors import RuntimeMisconfigured, SetupBusy, SetupRequired
from boring_dispatch.records import RouteRequest
from boring_dispatch.repository.repository import Repository
from boring_dispatch.setup.ledger import ops
from boring_dispatch.setup.ledger._schema import SCHEMA_VERSION
from boring_dispatch.setup.ledger.postgres import open_postgres
from boring_dispatch.setup.manager.routes import SetupManager
from kits.setup_repo import CALLER, write_setup_repository

RESUME = '{"caller":"host","interface":"app.interface.read","version":1}'


def test_schema_version_and_one_active_flow(postgres_url: str) -> None:
    ledger = open_postgres(postgres_url)
    with ledger.transaction() as tx:
        flow = ops.create_flow(tx, "a.interface.setup", ["a.interface.setup@1"], "{}")
    with pytest.raises(SetupBusy) as busy, ledger.transaction() as tx:
        ops.create_flow(tx, "b.interface.setup", ["b.interface.setup@1"], "{}")
    assert busy.value.flow_id == flow.flow_id
    ledger.close()
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        row = connection.execute(
            "SELECT value FROM ledger_meta WHERE key = 'schema_version'"
        ).fetchone()
        assert row == (str(SCHEMA_VERSION),)
        with pytest.raises(psycopg.errors.UniqueViolation):
            connection.execute(
                "INSERT INTO flows (id, root, state, steps, current, step_state, resume,"
                " created_at, updated_at) VALUES ('x','r','active','[]',0,'pending','{}',0,0)"
            )
        connection.execute(
            "UPDATE ledger_meta SET value = %s WHERE key = 'schema_version'",
            (str(SCHEMA_VERSION + 1),),
        )
    with pytest.raises(RuntimeMisconfigured), open_postgres(postgres_url).transaction():
        pass


def test_a_whole_flow_on_postgresql(tmp_path: Path, postgres_url: str) -> None:
    config = write_setup_repository(tmp_path / "repo")
    repository = Repository.open(config, ledger=postgres_url)
    manager = SetupManager(repository)
    with pytest.raises(SetupRequired):
        repository.invoke(RouteRequest(CALLER, "app.interface.read"))
    began = manager.call("begin", CALLER, {"setup": "app.interface.setup@1", "resume": RESUME})
    flow = began["flow_id"]
    ran = manager.call("run-python", CALLER, {"flow": flow})
    assert ran["step"] == "app.interface.setup@1"
    done = manager.call(
        "settle", CALLER, {"flow": flow, "setup": "app.interface.setup@1", "outcome": "ready"}
    )
    assert done["status"] == "completed"
    assert repository.invoke(RouteRequest(CALLER, "app.interface.read")).stdout == "read\n"
    manager.ledger().close()
