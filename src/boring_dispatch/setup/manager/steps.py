"""Running a Python setup step: claimed under a lease, renewed while it runs, then settled.

The step runs through the dispatcher as ``setup-interface-manager._rtx`` (the
exact bypass) with the flow's ID, so its own nested calls take the
exact-flow path, with the caller's execution limits and trace id (an MCP
server's ``--timeout``, ``--run-as`` and fork server hold for a setup step as
for any gateway of its session, and a cancel of the call reaches it). Exit 0
with nothing cut short settles it ``ready``; anything else settles it
``failed``. If the lease was lost meanwhile (``recover`` took the step back
after it expired), nothing is settled.
"""

from __future__ import annotations

import threading
from typing import Literal

from boring_dispatch.errors import RouteError, SetupFlowRefused
from boring_dispatch.records import ExecLimits, ExecutionResult, RouteRequest
from boring_dispatch.repository.repository import Repository
from boring_dispatch.setup.closure import SetupNode
from boring_dispatch.setup.ledger import ops
from boring_dispatch.setup.ledger.store import Ledger
from boring_dispatch.setup.names import MANAGER_MODULE

__all__ = ["run_python_step"]


def run_python_step(  # noqa: PLR0913 - keyword-only, the launch's limits and trace id
    repository: Repository,
    ledger: Ledger,
    flow: ops.Flow,
    node: SetupNode,
    *,
    limits: ExecLimits | None = None,
    trace_id: str | None = None,
) -> tuple[ExecutionResult | None, ops.Flow]:
    """Run the current step ``node`` of ``flow``; return its run (``None``: refused) and the flow.

    Raises:
        SetupFlowRefused: the step is not pending, or the lease was lost.
    """
    owner = ops.lease_owner() + f":{threading.get_ident()}"
    with ledger.transaction() as tx:
        ops.claim_step(tx, ops.flow_by_id(tx, flow.flow_id), owner)
    stop = threading.Event()
    every = ops.step_lease_s() / 3  # renew at a third of the lease
    renewer = threading.Thread(
        target=_renew, args=(ledger, flow.flow_id, owner, stop, every), daemon=True
    )
    renewer.start()
    result: ExecutionResult | None = None
    try:
        request = RouteRequest(
            caller=MANAGER_MODULE,
            target=node.setup_id,
            version=node.version,
            from_host=False,
            setup_flow_id=flow.flow_id,
        )
        result = repository.invoke(request, limits=limits, trace_id=trace_id)
    except RouteError:
        result = None
    finally:
        stop.set()
        renewer.join(timeout=every + 5)
    outcome: Literal["ready", "failed"] = "ready" if result is not None and result.ok else "failed"
    with ledger.transaction() as tx:
        current = ops.flow_by_id(tx, flow.flow_id)
        if current.step_state != "running" or current.lease_owner != owner:
            raise SetupFlowRefused("the step's lease was lost; its outcome is not recorded")
        settled = ops.settle_step(
            tx, current, node.setup_id, outcome, version=node.version, fingerprint=node.fingerprint
        )
    return result, settled


def _renew(ledger: Ledger, flow_id: str, owner: str, stop: threading.Event, every: float) -> None:
    """Renew the lease until the run ends or the lease is no longer ours.

    A failed renewal (the ledger unreachable for a moment: a dropped
    connection, a busy timeout) is tried again at the next tick; giving up
    would let the lease of a live runner expire.
    """
    while not stop.wait(every):
        try:
            with ledger.transaction() as tx:
                if not ops.renew_step(tx, flow_id, owner):
                    return
        except RouteError:
            continue
