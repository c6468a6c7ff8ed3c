"""A state machine over the manager's routes, the gate and the ledger (SQLite, real files).

Random interleavings of begin, Python and Markdown steps (ready or failed),
invalidate, teardown, recover, recover-busy with expired leases, and edits of
a setup blueprint. After every step:

- at most one flow is active;
- a ``ready`` row is backed by the ledger's history: its last event is the
  ``step_ready`` that wrote it (no invalidation, teardown or clearing since);
- the gate admits a managed call only when every setup of its closure is
  ``ready`` with the current fingerprint, and a call with the active flow's ID
  only for that flow's current step or what is ready, with ready prerequisites.

Python steps are settled the way ``run-python`` settles them (claim, then the
outcome) without launching the gateway: the machine is about the ledger.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import ClassVar

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from boring_dispatch.errors import RouteError
from boring_dispatch.records import RouteRequest
from boring_dispatch.repository.load.config import load_config
from boring_dispatch.repository.load.lookup import ModuleLoader
from boring_dispatch.repository.repository import Repository
from boring_dispatch.setup.closure import SetupNode, load_closure
from boring_dispatch.setup.ledger import ops
from boring_dispatch.setup.manager.routes import SetupManager
from kits.setup_repo import CALLER, write_setup_repository

RESUME = json.dumps({"caller": CALLER, "interface": "app.interface.read", "version": 1})
SETUPS = ("base.interface.setup", "app.interface.setup")
#: target -> the setup that governs it.
TARGETS = {"base.interface.work": "base.interface.setup", "app._rtx.interface.inner": SETUPS[1]}
_HISTORY = ("step_ready", "step_failed", "setup_invalidated", "setup_teardown", "setup_cleared")


class LedgerMachine(RuleBasedStateMachine):
    directory: ClassVar[Path]
    runs: ClassVar[int] = 0

    def __init__(self) -> None:
        super().__init__()
        type(self).runs += 1
        root = self.directory / f"run-{self.runs}"
        config = write_setup_repository(root / "repo")
        self.ledger_path = root / "ledger.sqlite3"
        self.repository = Repository.open(config, ledger=str(self.ledger_path))
        self.manager = SetupManager(self.repository)
        self.base_blueprint = config.parent / "skills" / "base" / "main.yaml"
        self.base_original = self.base_blueprint.read_text()
        with self.manager.ledger().transaction():  # created before the machine reads it
            pass

    def teardown(self) -> None:
        self.manager.ledger().close()

    # ----------------------------------------------------------------- helpers

    def _rows(self, sql: str, *params: object) -> list[tuple[object, ...]]:
        connection = sqlite3.connect(self.ledger_path)
        try:
            return [tuple(row) for row in connection.execute(sql, params).fetchall()]
        finally:
            connection.close()

    def _active(self) -> ops.Flow | None:
        with self.manager.ledger().transaction() as tx:
            return ops.active_flow(tx)

    def _closure(self, setup: str) -> tuple[SetupNode, ...]:
        return load_closure(ModuleLoader(load_config(self.repository.config_path)), setup)

    def _really_ready(self, node: SetupNode) -> bool:
        rows = self._rows("SELECT state, fingerprint FROM setups WHERE id = ?", node.setup_id)
        if rows != [("ready", node.fingerprint)]:
            return False
        marks = ", ".join(f"'{kind}'" for kind in _HISTORY)
        last = self._rows(
            f"SELECT kind FROM events WHERE setup = ? AND kind IN ({marks})"  # noqa: S608
            " ORDER BY seq DESC LIMIT 1",
            node.setup_id,
        )
        return last == [("step_ready",)]

    def _call(self, route: str, options: dict[str, object]) -> dict[str, object] | None:
        try:
            return self.manager.call(route, CALLER, options)
        except RouteError:
            return None

    # ------------------------------------------------------------------- rules

    @rule(setup=st.sampled_from(SETUPS))
    def begin(self, setup: str) -> None:
        self._call("begin", {"setup": setup, "resume": RESUME})

    @rule(ok=st.booleans())
    def python_step(self, ok: bool) -> None:
        flow = self._active()
        if flow is None or flow.current_step is None:
            return
        node = {n.key: n for n in self._closure(flow.root)}.get(flow.current_step)
        if node is None or not node.python or flow.step_state != "pending":
            return
        owner = ops.lease_owner() + ":machine"
        with self.manager.ledger().transaction() as tx:
            ops.claim_step(tx, flow, owner)
        with self.manager.ledger().transaction() as tx:
            current = ops.flow_by_id(tx, flow.flow_id)
            ops.settle_step(
                tx,
                current,
                node.setup_id,
                "ready" if ok else "failed",
                version=node.version,
                fingerprint=node.fingerprint,
            )

    @rule(setup=st.sampled_from(SETUPS), outcome=st.sampled_from(["ready", "failed"]))
    def settle(self, setup: str, outcome: str) -> None:
        flow = self._active()
        if flow is not None:
            self._call("settle", {"flow": flow.flow_id, "setup": setup, "outcome": outcome})

    @rule()
    def claim_and_die(self) -> None:
        """A runner claims the current Python step and dies (its lease is left to expire)."""
        flow = self._active()
        if flow is None or flow.step_state != "pending" or flow.current_step is None:
            return
        if not flow.current_step.startswith("base."):
            return
        with self.manager.ledger().transaction() as tx:
            ops.claim_step(tx, flow, "dead-host:1:1:1")

    @rule(route=st.sampled_from(["recover", "recover-busy"]), expire=st.booleans())
    def recover(self, route: str, expire: bool) -> None:
        flow = self._active()
        if flow is None:
            return
        if expire:
            connection = sqlite3.connect(self.ledger_path)
            try:
                with connection:
                    connection.execute("UPDATE flows SET lease_expires_at = 0 WHERE state='active'")
            finally:
                connection.close()
        self._call(route, {"flow": flow.flow_id})

    @rule(setup=st.sampled_from(SETUPS))
    def invalidate(self, setup: str) -> None:
        self._call("invalidate", {"setup": setup})

    @rule(setup=st.sampled_from(SETUPS), cascade=st.booleans())
    def teardown_one(self, setup: str, cascade: bool) -> None:
        options: dict[str, object] = {"setup": setup}
        if cascade:
            options["cascade"] = True
        self._call("teardown", options)

    @rule(changed=st.booleans())
    def edit_base(self, changed: bool) -> None:
        text = self.base_original.replace("Setup", "Work", 1) if changed else self.base_original
        self.base_blueprint.write_text(text)

    # -------------------------------------------------------------- invariants

    @invariant()
    def one_active_flow_at_most(self) -> None:
        assert self._rows("SELECT count(*) FROM flows WHERE state = 'active'")[0][0] in (0, 1)

    @invariant()
    def ready_rows_are_backed_by_history(self) -> None:
        for (setup,) in self._rows("SELECT id FROM setups WHERE state = 'ready'"):
            marks = ", ".join(f"'{kind}'" for kind in _HISTORY)
            last = self._rows(
                f"SELECT kind FROM events WHERE setup = ? AND kind IN ({marks})"  # noqa: S608
                " ORDER BY seq DESC LIMIT 1",
                setup,
            )
            assert last == [("step_ready",)], setup

    @invariant()
    def the_gate_admits_only_what_is_ready(self) -> None:
        flow = self._active()
        for target, setup in TARGETS.items():
            closure = self._closure(setup)
            ready = [self._really_ready(node) for node in closure]
            try:
                self.repository.resolve_live(RouteRequest(CALLER, target))
                admitted = True
            except RouteError:
                admitted = False
            assert admitted == all(ready), (target, ready)
            if flow is None:
                continue
            try:
                self.repository.resolve_live(
                    RouteRequest(CALLER, target, setup_flow_id=flow.flow_id)
                )
                flow_admitted = True
            except RouteError:
                flow_admitted = False
            current = flow.current_step == closure[-1].key
            expected = all(ready[:-1]) and (ready[-1] or current)
            assert flow_admitted == expected, (target, ready, flow.current_step)


def test_the_ledger_machine(tmp_path: Path) -> None:
    LedgerMachine.directory = tmp_path
    LedgerMachine.runs = 0
    machine = LedgerMachine.TestCase
    machine.settings = settings(
        max_examples=30,
        stateful_step_count=20,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    machine().runTest()
