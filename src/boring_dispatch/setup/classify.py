"""Which setup governs a target: read from the ancestry resolution already loaded.

Classification reads nothing: the ancestry records hold every blueprint it
looks at. The governing setup of a target is the setup export of the
nearest module of its ancestry (terminal module first) that exports one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from boring_dispatch._value import value
from boring_dispatch.records import ModuleRecord
from boring_dispatch.setup.names import (
    is_manager_module,
    setup_export_id,
    teardown_export_id,
)

__all__ = ["Classification", "classify", "exports_setup", "governing_setup"]

Kind = Literal["bypass", "unmanaged", "managed", "setup_export", "teardown_export"]


@value
class Classification:
    """What the gate does with one live call."""

    kind: Kind
    #: The governing setup export ID (``None`` when unmanaged or bypassed).
    setup: str | None = None


def exports_setup(module: ModuleRecord) -> bool:
    """True when ``module`` declares ``<module>.interface.setup``, whatever its value.

    A declared setup export that is not a mapping is a malformed setup export,
    not an absent one: the targets it governs then fail closed when its
    closure is loaded (``setup_graph_invalid``), instead of becoming unmanaged.
    """
    exports = module.data.get("exports")
    return isinstance(exports, dict) and setup_export_id(module.module_id) in exports


def governing_setup(ancestry: Sequence[ModuleRecord]) -> str | None:
    """The setup export of the nearest module of ``ancestry`` (outermost first) that has one."""
    for module in reversed(ancestry):
        if exports_setup(module):
            return setup_export_id(module.module_id)
    return None


def classify(caller: object, target: str, ancestry: Sequence[ModuleRecord]) -> Classification:
    """Classify a live call of ``target`` (whose loaded ancestry is ``ancestry``) by ``caller``.

    The manager module bypasses (as caller or as terminal module, compared
    exactly); a managed setup or teardown export is intercepted; any other
    target is managed by its governing setup or unmanaged.
    """
    terminal = ancestry[-1]
    if is_manager_module(caller) or is_manager_module(terminal.module_id):
        return Classification("bypass")
    if exports_setup(terminal):
        if target == setup_export_id(terminal.module_id):
            return Classification("setup_export", target)
        if target == teardown_export_id(terminal.module_id):
            return Classification("teardown_export", setup_export_id(terminal.module_id))
    found = governing_setup(ancestry)
    if found is None:
        return Classification("unmanaged")
    return Classification("managed", found)
