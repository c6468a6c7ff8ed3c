"""The sparse setup closure: a root setup and, recursively, what it requires.

Only ``setup_requires_setup_of`` is followed, each reference by direct lookup
(module ID -> its blueprint), nothing else is read. The order is
prerequisites first, deterministic (declaration order), iterative (no
recursion limit), each shared prerequisite once. Every defect fails closed
with :class:`~boring_dispatch.errors.SetupGraphInvalid`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Final

from boring_dispatch._quote import shown
from boring_dispatch._value import value
from boring_dispatch.errors import RouteError, SetupGraphInvalid
from boring_dispatch.records import ModuleRecord, SourceRecord
from boring_dispatch.repository import ids
from boring_dispatch.repository.load.exports import find_export, select_interface
from boring_dispatch.repository.load.lookup import ModuleLoader
from boring_dispatch.setup.names import SETUP_NAME, setup_export_id

__all__ = ["REQUIRES_KEY", "SetupNode", "check_not_setup_key", "load_closure", "load_setup"]

#: The one key of a setup export that names its prerequisites.
REQUIRES_KEY: Final = "setup_requires_setup_of"


@value
class SetupNode:
    """One setup export of a closure, with what the ledger compares."""

    #: ``<module>.interface.setup``.
    setup_id: str
    #: The selected source interface's version.
    version: int
    #: The setups it requires, in declaration order.
    requires: tuple[str, ...]
    #: SHA-256 (hex) of the canonical JSON of the export, its source interface and version.
    fingerprint: str
    module: ModuleRecord
    source: SourceRecord
    #: The selected source interface body.
    interface: Mapping[str, object]

    @property
    def key(self) -> str:
        """``<setup>@<version>``, as the manager's options spell it."""
        return f"{self.setup_id}@{self.version}"

    @property
    def python(self) -> bool:
        """True when its source interface declares a ``process_binding`` (a Python step).

        Only an interface with no ``process_binding`` at all is a Markdown step: a
        malformed binding is a broken Python step (``run-python`` fails it), never
        a step that ``settle`` could record ready on the assistant's word.
        """
        return "process_binding" in self.interface


def fingerprint(export: Mapping[str, object], interface: Mapping[str, object], version: int) -> str:
    """SHA-256 of the canonical JSON of the setup export, its source interface and version."""
    try:
        text = json.dumps(
            {"export": export, "interface": interface, "version": version},
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=True,
            allow_nan=False,
        )
    except (TypeError, ValueError):
        raise SetupGraphInvalid("a setup export holds a value JSON cannot express") from None
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def check_not_setup_key(export_id: str, export: Mapping[str, object]) -> None:
    """Refuse ``setup_requires_setup_of`` on an export that is not a setup export."""
    if REQUIRES_KEY in export and not export_id.endswith(ids.INTERFACE_MARK + SETUP_NAME):
        raise SetupGraphInvalid(
            f"{export_id}: {REQUIRES_KEY} is allowed on a setup export only",
            interface_id=export_id,
        )


def load_setup(loader: ModuleLoader, setup_id: str) -> SetupNode:
    """Load one setup export by direct lookup and check its ``setup_requires_setup_of``.

    Raises:
        SetupGraphInvalid: the ID is not a setup export, or its references are malformed.
    """
    module_id, name = _split(setup_id)
    if name != SETUP_NAME:
        raise SetupGraphInvalid(f"not a setup export: {shown(setup_id)}")
    try:
        ancestry = loader.load_ancestry(module_id)
        terminal = ancestry[-1]
        export, source_id, source_interface_id = find_export(terminal, setup_id)
        source = loader.load_source(terminal, source_id)
        interface, version = select_interface(source, source_interface_id, None)
    except SetupGraphInvalid:
        raise
    except RouteError as error:
        raise SetupGraphInvalid(
            f"setup export {shown(setup_id)} cannot be loaded ({error.code})",
            target_module_id=module_id,
        ) from None
    requires = _references(setup_id, export)
    for other_id, other in _exports(terminal).items():
        check_not_setup_key(other_id, other)
    return SetupNode(
        setup_id=setup_id,
        version=version,
        requires=tuple(ref for ref, _ in requires),
        fingerprint=fingerprint(export, interface, version),
        module=terminal,
        source=source,
        interface=interface,
    )


def load_closure(loader: ModuleLoader, root: str) -> tuple[SetupNode, ...]:
    """The closure of ``root``, prerequisites first (an iterative depth-first post-order).

    Raises:
        SetupGraphInvalid: a missing or non-setup reference, a version that
            differs from the referenced setup's, a duplicate, or a cycle.
    """
    nodes = _discover(loader, root)
    order: list[SetupNode] = []
    done: set[str] = set()
    on_path: set[str] = {root}
    # Each frame: (setup ID, index of the next prerequisite to visit).
    stack: list[tuple[str, int]] = [(root, 0)]
    while stack:
        setup_id, index = stack.pop()
        node = nodes[setup_id]
        if index < len(node.requires):
            stack.append((setup_id, index + 1))
            needed = node.requires[index]
            if needed in on_path:
                raise SetupGraphInvalid(f"setup cycle through {needed}", interface_id=needed)
            if needed not in done:
                on_path.add(needed)
                stack.append((needed, 0))
            continue
        on_path.discard(setup_id)
        done.add(setup_id)
        order.append(node)
    return tuple(order)


def _discover(loader: ModuleLoader, root: str) -> dict[str, SetupNode]:
    """Load every setup reachable from ``root``; check each pinned version."""
    nodes = {root: load_setup(loader, root)}
    pending = [root]
    while pending:
        owner = nodes[pending.pop()]
        for needed, version in _references(owner.setup_id, _export_of(owner)):
            node = nodes.get(needed)
            if node is None:
                node = nodes[needed] = load_setup(loader, needed)
                pending.append(needed)
            if node.version != version:
                raise SetupGraphInvalid(
                    f"{owner.setup_id} requires {needed} version {version}, "
                    f"the setup is version {node.version}",
                    interface_id=owner.setup_id,
                )
    return nodes


def _export_of(node: SetupNode) -> Mapping[str, object]:
    export = _exports(node.module).get(node.setup_id)
    return export if isinstance(export, Mapping) else {}


def _exports(module: ModuleRecord) -> dict[str, Mapping[str, object]]:
    exports = module.data.get("exports")
    if not isinstance(exports, dict):
        return {}
    return {k: v for k, v in exports.items() if isinstance(k, str) and isinstance(v, Mapping)}


def _references(setup_id: str, export: Mapping[str, object]) -> list[tuple[str, int]]:
    """``setup_requires_setup_of`` as ``(setup ID, version)`` pairs, checked for shape."""
    raw = export.get(REQUIRES_KEY, [])
    if not isinstance(raw, list):
        raise SetupGraphInvalid(f"{setup_id}: {REQUIRES_KEY} must be a list", interface_id=setup_id)
    out: list[tuple[str, int]] = []
    for item in raw:
        if not isinstance(item, dict) or set(item) != {"interface", "version"}:
            raise SetupGraphInvalid(
                f"{setup_id}: each {REQUIRES_KEY} item is {{interface, version}}",
                interface_id=setup_id,
            )
        ref, version = item["interface"], item["version"]
        if not isinstance(ref, str) or type(version) is not int or version < 1:
            raise SetupGraphInvalid(
                f"{setup_id}: a {REQUIRES_KEY} item has a bad interface or version",
                interface_id=setup_id,
            )
        module_id, name = _split(ref)
        if name != SETUP_NAME or ref != setup_export_id(module_id):
            raise SetupGraphInvalid(
                f"{setup_id}: {shown(ref)} is not a setup export", interface_id=setup_id
            )
        if ref == setup_id:
            raise SetupGraphInvalid(f"setup cycle: {setup_id} requires itself", interface_id=ref)
        if any(ref == seen for seen, _ in out):
            raise SetupGraphInvalid(f"{setup_id}: {shown(ref)} is listed twice", interface_id=ref)
        out.append((ref, version))
    return out


def _split(setup_id: object) -> tuple[str, str]:
    try:
        return ids.parse_interface_id(setup_id)
    except RouteError:
        raise SetupGraphInvalid(f"not an interface ID: {shown(setup_id)}") from None
