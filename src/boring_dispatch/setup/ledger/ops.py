"""The ledger's operations, each inside one :meth:`~.store.Ledger.transaction`.

Rows hold setup IDs, versions, fingerprints, flow IDs, states, times and the
lease owner (host, pid, start time); never arguments, stdin or output.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import time
from collections.abc import Sequence
from typing import Final, Literal

from boring_dispatch._value import value
from boring_dispatch.errors import SetupBusy, SetupFlowRefused, SetupUnavailable
from boring_dispatch.setup.ledger.store import Row, Tx

__all__ = [
    "FLOW_LEASE_S",
    "STEP_LEASE_S",
    "Flow",
    "SetupRecord",
    "active_flow",
    "append_event",
    "claim_step",
    "clear_setups",
    "create_flow",
    "flow_by_id",
    "lease_owner",
    "mark_setups",
    "new_flow_id",
    "read_setups",
    "recorded_setups",
    "recover_busy",
    "recover_step",
    "renew_flow",
    "renew_step",
    "settle_step",
    "step_lease_s",
]

#: A flow's lease: renewed by the manager routes on the flow and the calls for its current
#: step; expired, ``recover-busy`` frees it.
FLOW_LEASE_S: Final = 900.0
#: A running Python step's lease: renewed while its runner lives.
STEP_LEASE_S: Final = 30.0
#: Overrides :data:`STEP_LEASE_S` (seconds, 0.2 to 3600): a shorter lease frees a dead
#: runner's step sooner, at the cost of more renewals.
LEASE_ENV: Final = "BORING_DISPATCH_SETUP_LEASE_S"


def step_lease_s() -> float:
    """The step lease length: :data:`LEASE_ENV` when valid, else :data:`STEP_LEASE_S`."""
    raw = os.environ.get(LEASE_ENV, "")
    try:
        chosen = float(raw) if raw else STEP_LEASE_S
    except ValueError:
        return STEP_LEASE_S
    return chosen if 0.2 <= chosen <= 3600.0 else STEP_LEASE_S


_FLOW_COLUMNS: Final = (
    "id, root, state, steps, current, step_state, resume, lease_owner, lease_expires_at,"
    " created_at, updated_at"
)


@value
class SetupRecord:
    """One row of ``setups``."""

    setup_id: str
    version: int
    state: str
    fingerprint: str


@value
class Flow:
    """One row of ``flows``."""

    flow_id: str
    root: str
    state: str
    #: ``<setup>@<version>`` of every step, in order.
    steps: tuple[str, ...]
    current: int
    step_state: str
    #: The call to resume afterwards: the JSON text of ``{caller, interface, version}``.
    resume: str
    lease_owner: str | None
    lease_expires_at: float | None
    created_at: float
    updated_at: float

    @property
    def current_step(self) -> str | None:
        """``<setup>@<version>`` of the current step, or ``None`` past the last."""
        return self.steps[self.current] if self.current < len(self.steps) else None

    def lease_expired(self, now: float) -> bool:
        return self.lease_expires_at is None or self.lease_expires_at <= now


def new_flow_id() -> str:
    """A time-ordered, unguessable flow ID (milliseconds, then 80 random bits)."""
    return f"{int(time.time() * 1000):012x}{secrets.token_hex(10)}"


def lease_owner() -> str:
    """``host:pid:start`` of this process (who holds a lease)."""
    return f"{socket.gethostname()[:64]}:{os.getpid()}:{int(_STARTED)}"


_STARTED: Final = time.time()


def append_event(
    tx: Tx, kind: str, *, flow: str | None = None, setup: str | None = None, detail: str = ""
) -> None:
    """Append one event (never arguments or output)."""
    tx.run(
        "INSERT INTO events (at, flow, setup, kind, detail) VALUES (?, ?, ?, ?, ?)",
        tx.now(),
        flow,
        setup,
        kind,
        detail,
    )


def read_setups(tx: Tx, setup_ids: Sequence[str]) -> dict[str, SetupRecord]:
    """The rows of ``setup_ids`` that exist."""
    out: dict[str, SetupRecord] = {}
    for setup_id in setup_ids:
        row = tx.one("SELECT id, version, state, fingerprint FROM setups WHERE id = ?", setup_id)
        if row is not None:
            try:
                version = _int(row[1])
            except ValueError:
                raise SetupUnavailable("the setup ledger holds a malformed setup row") from None
            out[setup_id] = SetupRecord(str(row[0]), version, str(row[2]), str(row[3]))
    return out


def recorded_setups(tx: Tx) -> list[str]:
    """The IDs of every row of ``setups``, sorted."""
    return [str(row[0]) for row in tx.all("SELECT id FROM setups ORDER BY id")]


def active_flow(tx: Tx) -> Flow | None:
    row = tx.one(f"SELECT {_FLOW_COLUMNS} FROM flows WHERE state = 'active'")  # noqa: S608
    return None if row is None else _flow(row)


def flow_by_id(tx: Tx, flow_id: object) -> Flow:
    """The flow ``flow_id``.

    Raises:
        SetupFlowRefused: no flow has that ID (or it is not an ID: flow IDs are
            ASCII letters and digits, so a NUL or a lone surrogate, which a
            database cannot even take, never reaches it).
    """
    row = None
    if type(flow_id) is str and 0 < len(flow_id) <= 64 and flow_id.isascii() and flow_id.isalnum():
        row = tx.one(f"SELECT {_FLOW_COLUMNS} FROM flows WHERE id = ?", flow_id)  # noqa: S608
    if row is None:
        raise SetupFlowRefused("unknown setup flow")
    return _flow(row)


def create_flow(tx: Tx, root: str, steps: Sequence[str], resume: str) -> Flow:
    """Create the one active flow.

    Raises:
        SetupBusy: another flow is active (checked, and enforced by the unique index).
    """
    existing = active_flow(tx)
    if existing is not None:
        raise SetupBusy("a setup flow is active").with_facts(flow_id=existing.flow_id)
    now = tx.now()
    flow_id = new_flow_id()
    tx.run(
        f"INSERT INTO flows ({_FLOW_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",  # noqa: S608
        flow_id,
        root,
        "active",
        json.dumps(list(steps)),
        0,
        "pending",
        resume,
        lease_owner(),
        now + FLOW_LEASE_S,
        now,
        now,
    )
    append_event(tx, "flow_begun", flow=flow_id, setup=root)
    return flow_by_id(tx, flow_id)


def claim_step(tx: Tx, flow: Flow, owner: str) -> None:
    """Mark the current step running under ``owner``'s lease (a Python step)."""
    _require_pending(flow)
    now = tx.now()
    tx.run(
        "UPDATE flows SET step_state = 'running', lease_owner = ?, lease_expires_at = ?,"
        " updated_at = ? WHERE id = ? AND state = 'active' AND step_state = 'pending'",
        owner,
        now + step_lease_s(),
        now,
        flow.flow_id,
    )
    append_event(tx, "step_claimed", flow=flow.flow_id, setup=flow.current_step)


def renew_flow(tx: Tx, flow: Flow) -> None:
    """Extend an active flow's lease while its pending step is worked on (a Markdown step).

    A running Python step's lease is its runner's alone: left as it is.
    """
    if flow.state != "active" or flow.step_state != "pending":
        return
    now = tx.now()
    tx.run(
        "UPDATE flows SET lease_expires_at = ?, updated_at = ?"
        " WHERE id = ? AND state = 'active' AND step_state = 'pending'",
        now + FLOW_LEASE_S,
        now,
        flow.flow_id,
    )


def renew_step(tx: Tx, flow_id: str, owner: str) -> bool:
    """Extend a running step's lease; False when it is no longer ours."""
    now = tx.now()
    row = tx.one(
        "SELECT lease_owner FROM flows WHERE id = ? AND state = 'active'"
        " AND step_state = 'running'",
        flow_id,
    )
    if row is None or row[0] != owner:
        return False
    tx.run(
        "UPDATE flows SET lease_expires_at = ?, updated_at = ? WHERE id = ?",
        now + step_lease_s(),
        now,
        flow_id,
    )
    return True


def settle_step(  # noqa: PLR0913 - the flow, the step and what to record
    tx: Tx,
    flow: Flow,
    setup: str,
    outcome: Literal["ready", "failed"],
    *,
    version: int,
    fingerprint: str,
) -> Flow:
    """Record the current step's outcome; advance the flow or end it.

    Raises:
        SetupFlowRefused: the flow is not active or ``setup`` is not its current step.
    """
    if flow.state != "active" or flow.current_step != f"{setup}@{version}":
        raise SetupFlowRefused("that setup is not the current step of an active flow")
    now = tx.now()
    tx.run(
        "DELETE FROM setups WHERE id = ?",
        setup,
    )
    tx.run(
        "INSERT INTO setups (id, version, state, fingerprint, flow_id, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        setup,
        version,
        outcome,
        fingerprint,
        flow.flow_id,
        now,
    )
    append_event(tx, f"step_{outcome}", flow=flow.flow_id, setup=setup)
    if outcome == "failed":
        state, current = "failed", flow.current
    else:
        current = flow.current + 1
        state = "completed" if current >= len(flow.steps) else "active"
    tx.run(
        "UPDATE flows SET state = ?, current = ?, step_state = 'pending', lease_owner = ?,"
        " lease_expires_at = ?, updated_at = ? WHERE id = ?",
        state,
        current,
        lease_owner(),
        now + FLOW_LEASE_S,
        now,
        flow.flow_id,
    )
    if state != "active":
        append_event(tx, f"flow_{state}", flow=flow.flow_id, setup=flow.root)
    return flow_by_id(tx, flow.flow_id)


def recover_step(tx: Tx, flow: Flow) -> bool:
    """A step left running by a dead runner (lease expired) goes back to pending."""
    now = tx.now()
    if flow.state != "active" or flow.step_state != "running" or not flow.lease_expired(now):
        return False
    tx.run(
        "UPDATE flows SET step_state = 'pending', lease_expires_at = ?, updated_at = ?"
        " WHERE id = ? AND step_state = 'running'",
        now + FLOW_LEASE_S,
        now,
        flow.flow_id,
    )
    append_event(tx, "step_recovered", flow=flow.flow_id, setup=flow.current_step)
    return True


def recover_busy(tx: Tx, flow: Flow) -> bool:
    """Abandon an active flow whose lease expired, freeing the one-active-flow lock."""
    now = tx.now()
    if flow.state != "active" or not flow.lease_expired(now):
        return False
    tx.run(
        "UPDATE flows SET state = 'abandoned', updated_at = ? WHERE id = ? AND state = 'active'",
        now,
        flow.flow_id,
    )
    append_event(tx, "flow_abandoned", flow=flow.flow_id, setup=flow.root)
    return True


def mark_setups(tx: Tx, setup_ids: Sequence[str], state: str, *, only_ready: bool) -> list[str]:
    """Set ``state`` on the existing rows of ``setup_ids`` (only ``ready`` ones if asked)."""
    changed: list[str] = []
    now = tx.now()
    for setup_id in setup_ids:
        row = tx.one("SELECT state FROM setups WHERE id = ?", setup_id)
        if row is None or (only_ready and row[0] != "ready"):
            continue
        tx.run("UPDATE setups SET state = ?, updated_at = ? WHERE id = ?", state, now, setup_id)
        append_event(tx, f"setup_{state}", setup=setup_id)
        changed.append(setup_id)
    return changed


def clear_setups(tx: Tx, setup_ids: Sequence[str]) -> None:
    """Forget the records of ``setup_ids`` (after their teardown)."""
    for setup_id in setup_ids:
        tx.run("DELETE FROM setups WHERE id = ?", setup_id)
        append_event(tx, "setup_cleared", setup=setup_id)


def _require_pending(flow: Flow) -> None:
    if flow.state != "active" or flow.current_step is None:
        raise SetupFlowRefused("the setup flow is not active")
    if flow.step_state != "pending":
        raise SetupFlowRefused(
            "the current step is already running (recover it if its runner died)"
        )


def _flow(row: Row) -> Flow:
    """The flow of one ``flows`` row.

    Raises:
        SetupUnavailable: a row no dispatcher writes (the ledger is unusable, fail closed).
    """
    try:
        steps = json.loads(str(row[3]))
        if not isinstance(steps, list) or not all(type(step) is str for step in steps):
            raise ValueError("steps")  # noqa: TRY301 - one refusal for every malformed column
        if not 0 <= _int(row[4]) <= len(steps):
            raise ValueError("current")  # noqa: TRY301
        return Flow(
            flow_id=str(row[0]),
            root=str(row[1]),
            state=str(row[2]),
            steps=tuple(steps),
            current=_int(row[4]),
            step_state=str(row[5]),
            resume=str(row[6]),
            lease_owner=None if row[7] is None else str(row[7]),
            lease_expires_at=None if row[8] is None else float(str(row[8])),
            created_at=float(str(row[9])),
            updated_at=float(str(row[10])),
        )
    except (ValueError, TypeError):
        raise SetupUnavailable("the setup ledger holds a malformed flow row") from None


def _int(raw: object) -> int:
    return int(str(raw))
