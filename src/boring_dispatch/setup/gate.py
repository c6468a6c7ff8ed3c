"""The setup gate of live calls (the :class:`~boring_dispatch.repository.gate.SetupGate`).

bypass (the exact manager module) -> unmanaged (proceed; the ledger is not
opened) -> setup/teardown export (intercepted: ``setup_managed``) -> the
closure -> ``setup_flow_id``: the exact-flow path; otherwise status, then the
atomic authorize when ready, else ``setup_required`` or ``setup_busy``.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, cast

from boring_dispatch.errors import SetupBusy, SetupManaged, SetupRequired
from boring_dispatch.repository.gate import GateCall
from boring_dispatch.repository.load.lookup import ModuleLoader
from boring_dispatch.setup.classify import classify

if TYPE_CHECKING:
    from boring_dispatch.setup.ledger.store import Ledger
    from boring_dispatch.setup.status import ClosureStatus

__all__ = ["LedgerGate"]


class LedgerGate:
    """The gate of one repository; its ledger is opened on the first managed call only."""

    def __init__(self, config_path: Path, *, ledger: str | None = None) -> None:
        self._config_path = config_path
        self._ledger_name = ledger
        self._ledger: Ledger | None = None
        self._lock = threading.Lock()

    def ledger(self) -> Ledger:
        """The ledger (built once; connected by its first transaction)."""
        with self._lock:
            if self._ledger is None:
                from boring_dispatch.setup.ledger.opening import open_ledger

                self._ledger = open_ledger(self._config_path, self._ledger_name)
            return self._ledger

    def check(self, call: GateCall) -> None:
        found = classify(call.caller, call.target, call.ancestry)
        if found.kind == "bypass":
            return
        # Loaded past this point only: an unmanaged call imports nothing of the ledger.
        from boring_dispatch.setup.closure import check_not_setup_key, load_closure

        check_not_setup_key(call.target, call.export)
        if found.kind == "unmanaged" or found.setup is None:
            return
        from boring_dispatch.setup import service

        terminal = call.ancestry[-1].module_id
        if found.kind in ("setup_export", "teardown_export"):
            raise SetupManaged(
                f"{call.target} is a managed setup interface: the setup manager runs it",
                caller_module_id=call.caller,
                target_module_id=terminal,
                interface_id=call.target,
            ).with_facts(
                call_path=(call.target,),
                interface_version=call.version,
                setup=found.setup,
                version=call.version if found.kind == "setup_export" else 0,
                reason="teardown" if found.kind == "teardown_export" else "setup",
            )
        closure = load_closure(cast("ModuleLoader", call.loader), found.setup)
        ledger = self.ledger()
        if call.setup_flow_id is not None:
            service.authorize_flow_call(ledger, call.setup_flow_id, closure, call.target)
            return
        seen = service.status(ledger, closure)
        if seen.status == "ready":
            seen = service.authorize(ledger, closure, call.target)
            if seen.status == "ready":
                return
        raise _refusal(seen, call, terminal, closure[-1].setup_id, closure[-1].version)


def _refusal(
    seen: ClosureStatus, call: GateCall, terminal: str, setup: str, version: int
) -> SetupRequired | SetupBusy:
    if seen.status == "setup_busy" and seen.flow_id is not None:
        return SetupBusy(
            "a setup flow is active; try again when it ends",
            caller_module_id=call.caller,
            target_module_id=terminal,
            interface_id=call.target,
        ).with_facts(call_path=(call.target,), interface_version=call.version, flow_id=seen.flow_id)
    return SetupRequired(
        f"{call.target} needs {setup} ({seen.reason}): begin it with the setup manager",
        caller_module_id=call.caller,
        target_module_id=terminal,
        interface_id=call.target,
    ).with_facts(
        call_path=(call.target,),
        interface_version=call.version,
        setup=setup,
        version=version,
        reason=seen.reason,
    )
