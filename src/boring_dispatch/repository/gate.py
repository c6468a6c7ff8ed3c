"""The setup gate as the repository pipeline sees it: a protocol and what it is given.

The pipeline calls :meth:`SetupGate.check` on live calls only, after
authorization and before binding. The implementation lives in
:mod:`boring_dispatch.setup` (a layer above the tables); the repository
knows only this protocol, and ``Repository`` builds the default gate lazily.
"""

from __future__ import annotations

from collections.abc import Mapping

from boring_dispatch._static import Protocol
from boring_dispatch._value import value
from boring_dispatch.records import ModuleRecord

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import Final

__all__ = ["MANAGER_MODULE", "GateCall", "SetupGate"]

#: The reserved module ID of the built-in setup manager (exact; look-alikes are ordinary IDs).
MANAGER_MODULE: Final = "setup-interface-manager._rtx"


class ModuleLoading(Protocol):
    """What the gate may read: module ancestry and sources, by direct lookup."""

    def load_ancestry(self, module_id: str) -> tuple[ModuleRecord, ...]: ...


@value
class GateCall:
    """One live call at the gate: what resolution and authorization already loaded."""

    caller: str
    #: The requested export ID.
    target: str
    #: The target's ancestry, outermost first (classification reads only these).
    ancestry: tuple[ModuleRecord, ...]
    #: The selected interface version.
    version: int
    #: ``exports.<target>`` of the terminal module.
    export: Mapping[str, object]
    #: The request's loader: the closure is read through it (same request, same reads).
    loader: object
    #: ``setup_flow_id`` of the call: the exact-flow path instead of status/authorize.
    setup_flow_id: str | None = None


class SetupGate(Protocol):
    """Decides whether a live call may go on to binding; raises a refusal if not."""

    def check(self, call: GateCall) -> None:
        """Return to let the call bind and launch; raise a ``RouteError`` to refuse it."""
