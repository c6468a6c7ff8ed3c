"""The ledger on a real PostgreSQL (a throwaway server): same schema, same semantics."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from boring_dispatch.errors import RuntimeMisconfigured, SetupBusy, SetupFlowRefused, SetupRequired
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


# Another host of one PostgreSQL ledger whose clock is off by an hour: as a
# subprocess whose wall clock (``time.time``) is shifted, running a manager route.
_SKEWED_ROUTE = """
import json, sys, time
real = time.time
time.time = lambda: real() + float(sys.argv[1])
from boring_dispatch.repository.repository import Repository
from boring_dispatch.setup.manager.routes import SetupManager
from boring_dispatch.setup.ledger import ops
config, url, route, flow = sys.argv[2:6]
if route == "claim":
    manager = SetupManager(Repository.open(config, ledger=url))
    with manager.ledger().transaction() as tx:
        ops.claim_step(tx, ops.flow_by_id(tx, flow), ops.lease_owner() + ":skewed")
    print(json.dumps({"claimed": True}))
else:
    result = SetupManager(Repository.open(config, ledger=url)).call(route, "host", {"flow": flow})
    print(json.dumps(result))
"""


def _skewed(skew: float, config: Path, url: str, route: str, flow: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", _SKEWED_ROUTE, str(skew), str(config), url, route, flow],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    answer = json.loads(done.stdout)
    assert isinstance(answer, dict)
    return answer


@pytest.mark.parametrize("skew", [3600.0, -3600.0], ids=["ahead", "behind"])
def test_a_host_with_a_skewed_clock_never_takes_a_live_lease(
    tmp_path: Path, postgres_url: str, skew: float
) -> None:
    # Leases are compared with the database's clock, not each host's: a live
    # runner's step is not recovered, an active flow is not abandoned, because
    # two hosts' clocks differ.
    config = write_setup_repository(tmp_path / "repo")
    manager = SetupManager(Repository.open(config, ledger=postgres_url))
    try:
        began = manager.call("begin", CALLER, {"setup": "app.interface.setup@1", "resume": RESUME})
        flow_id = str(began["flow_id"])
        if skew > 0:  # this host holds the step's lease; the host ahead tries to take it
            with manager.ledger().transaction() as tx:
                ops.claim_step(tx, ops.flow_by_id(tx, flow_id), ops.lease_owner() + ":live")
            assert _skewed(skew, config, postgres_url, "recover", flow_id)["recovered"] is False
            busy = _skewed(skew, config, postgres_url, "recover-busy", flow_id)
            assert busy["status"] == "active"
        else:  # the host behind holds the lease; this host tries to take it
            _skewed(skew, config, postgres_url, "claim", flow_id)
            assert manager.call("recover", CALLER, {"flow": flow_id})["recovered"] is False
            assert manager.call("recover-busy", CALLER, {"flow": flow_id})["status"] == "active"
    finally:
        manager.ledger().close()


@pytest.mark.parametrize("flow", ["a\x00b", "\x00", "0" * 31 + "\x00", "fl\u00f6w", "\ud800"])
@pytest.mark.parametrize(
    "route", ["run-python", "run-markdown", "settle", "recover", "recover-busy"]
)
def test_a_hostile_flow_id_is_an_unknown_flow_on_postgresql(
    tmp_path: Path, postgres_url: str, flow: str, route: str
) -> None:
    # PostgreSQL refuses a NUL in a text parameter: the flow ID must be checked
    # before it reaches the database (the answer is the same as on SQLite).
    config = write_setup_repository(tmp_path / "repo")
    manager = SetupManager(Repository.open(config, ledger=postgres_url))
    options: dict[str, object] = {"flow": flow}
    if route == "settle":
        options.update(setup="app.interface.setup@1", outcome="ready")
    try:
        with pytest.raises(SetupFlowRefused):
            manager.call(route, CALLER, options)
    finally:
        manager.ledger().close()
