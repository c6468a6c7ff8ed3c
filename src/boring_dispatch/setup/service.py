"""What the manager does with the ledger: one transaction per operation.

The gate and the manager's routes call these; nothing else reads or writes
the ledger. Every function takes the closure it was given (loaded by the
caller as the seed says) and never reads a blueprint itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from boring_dispatch.errors import SetupFlowRefused
from boring_dispatch.setup.closure import SetupNode
from boring_dispatch.setup.ledger import ops
from boring_dispatch.setup.ledger.store import Ledger, Tx
from boring_dispatch.setup.status import ClosureStatus, step_states

__all__ = [
    "authorize",
    "authorize_flow_call",
    "begin",
    "renew_flow",
    "settle",
    "status",
]


def _status(tx: Tx, closure: Sequence[SetupNode]) -> ClosureStatus:
    records = ops.read_setups(tx, [node.setup_id for node in closure])
    steps = step_states(closure, records)
    if all(step.state == "ready" for step in steps):
        return ClosureStatus("ready", steps)
    flow = ops.active_flow(tx)
    if flow is not None:
        return ClosureStatus("setup_busy", steps, flow.flow_id)
    return ClosureStatus("setup_required", steps)


def status(ledger: Ledger, closure: Sequence[SetupNode]) -> ClosureStatus:
    """Each setup of ``closure`` with its state; overall ready, required or busy."""
    with ledger.transaction() as tx:
        return _status(tx, closure)


def authorize(ledger: Ledger, closure: Sequence[SetupNode], target: str) -> ClosureStatus:
    """The atomic check: every setup still ready (current fingerprint), then an event.

    Returns the status seen inside the transaction; ``ready`` means authorized.
    """
    with ledger.transaction() as tx:
        found = _status(tx, closure)
        if found.status == "ready":
            ops.append_event(tx, "authorized", setup=closure[-1].setup_id, detail=target)
        return found


def authorize_flow_call(
    ledger: Ledger, flow_id: str, closure: Sequence[SetupNode], target: str
) -> None:
    """Admit a call made for flow ``flow_id`` (section 2.6), or refuse it.

    Admitted only while that flow is active, every prerequisite of the
    target's governing setup (the last of ``closure``) is ready with its
    current fingerprint, and the governing setup is the flow's current step
    or is itself ready (a step the flow settled, or one that was ready before
    it began). So the flow's ID never admits a setup that is no longer ready
    (invalidated, or its blueprint changed, since the flow settled it), and
    never refuses what the ordinary gate would admit.

    Raises:
        SetupFlowRefused: otherwise.
    """
    governing = closure[-1].key
    with ledger.transaction() as tx:
        flow = ops.flow_by_id(tx, flow_id)
        states = step_states(closure, ops.read_setups(tx, [node.setup_id for node in closure]))
        prerequisites_ready = all(step.state == "ready" for step in states[:-1])
        current = flow.current_step == governing
        if (
            flow.state != "active"
            or not prerequisites_ready
            or not (current or states[-1].state == "ready")
        ):
            raise SetupFlowRefused("this call is not part of that setup flow's current step")
        ops.append_event(tx, "flow_call_authorized", flow=flow.flow_id, detail=target)
        if current:  # the step is worked on: recover-busy must not free the flow
            # (a call of what is ready renews nothing: it would keep a stale flow alive)
            ops.renew_flow(tx, flow)


def renew_flow(ledger: Ledger, flow_id: str) -> None:
    """Renew the lease of flow ``flow_id`` while its pending step is worked on."""
    with ledger.transaction() as tx:
        ops.renew_flow(tx, ops.flow_by_id(tx, flow_id))


def begin(ledger: Ledger, closure: Sequence[SetupNode], resume: str) -> ops.Flow | ClosureStatus:
    """Create the flow of the not-ready setups of ``closure`` (its root is the last).

    Returns the new flow, or the status when nothing needs doing (``ready``).

    Raises:
        SetupBusy: a flow is active.
    """
    with ledger.transaction() as tx:
        found = _status(tx, closure)
        if found.status == "ready":
            return found
        steps = [f"{step.setup_id}@{step.version}" for step in found.steps if step.state != "ready"]
        return ops.create_flow(tx, closure[-1].setup_id, steps, resume)


def settle(
    ledger: Ledger,
    flow_id: str,
    node: SetupNode,
    outcome: Literal["ready", "failed"],
) -> ops.Flow:
    """Record the outcome of the flow's current step ``node``.

    Raises:
        SetupFlowRefused: unknown flow, inactive flow, or not its current step.
    """
    with ledger.transaction() as tx:
        flow = ops.flow_by_id(tx, flow_id)
        return ops.settle_step(
            tx,
            flow,
            node.setup_id,
            outcome,
            version=node.version,
            fingerprint=node.fingerprint,
        )
