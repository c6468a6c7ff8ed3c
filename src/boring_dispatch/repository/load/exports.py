"""Choosing what a request names inside loaded blueprints (BLUEPRINTS-V6 sections 2.6, 5.1).

The host caller's shape, the terminal module's export, and the implementing
source's interface at the pinned version. Nothing here reads a file: the
blueprints come from :class:`~.lookup.ModuleLoader`.
"""

from __future__ import annotations

from collections.abc import Mapping

from boring_dispatch._quote import shown
from boring_dispatch.errors import (
    HostCallerInvalid,
    InterfaceNotFound,
    InterfaceVersionMismatch,
    SourceInterfaceInvalid,
)
from boring_dispatch.records import ModuleRecord, SourceRecord
from boring_dispatch.repository import ids

__all__ = ["find_export", "require_host_caller", "select_interface"]


def require_host_caller(caller: ModuleRecord) -> None:
    """Host callers must be discoverable top-level skills (section 2.6).

    Raises:
        HostCallerInvalid: the caller has more than one segment, or its
            ``discovery.mechanism`` is not ``skill``.
    """
    discovery = caller.data.get("discovery")
    top_level = "." not in caller.module_id
    if not top_level or not isinstance(discovery, dict) or discovery.get("mechanism") != "skill":
        raise HostCallerInvalid(
            f"host caller must be a discoverable top-level skill: {caller.module_id}",
            caller_module_id=caller.module_id,
        )


def find_export(terminal: ModuleRecord, target: str) -> tuple[Mapping[str, object], str, str]:
    """The export ``target`` of its terminal module (section 5.1 steps 5-6).

    Returns:
        ``(export mapping, source ID, source-interface ID)``.

    Raises:
        InterfaceNotFound: ``exports.<target>`` is not a mapping (or the
            target is not an export ID of ``terminal``).
        SourceInterfaceInvalid: ``source_interface`` is not
            ``<terminal>.source.<name>.interface.<name>``: an export may only
            point at a source of its own module.
    """
    owner = terminal.module_id
    exports = terminal.data["exports"]
    export = exports.get(target) if isinstance(exports, dict) else None
    if not target.startswith(owner + ids.INTERFACE_MARK) or not isinstance(export, dict):
        raise InterfaceNotFound(
            f"interface not found: {target}", target_module_id=owner, interface_id=target
        )
    source_interface = export.get("source_interface")
    split = ids.split_source_interface(source_interface)
    if (
        not isinstance(source_interface, str)
        or split is None
        or split[0].rpartition(".source.")[0] != owner
    ):
        raise SourceInterfaceInvalid(
            f"{target}: source_interface must name an interface of a source of {owner}",
            target_module_id=owner,
            interface_id=target,
        )
    return export, split[0], source_interface


def select_interface(
    source: SourceRecord,
    source_interface_id: str,
    requested: object | None,
    *,
    export_id: str | None = None,
) -> tuple[Mapping[str, object], int]:
    """The source interface and its version, checked against a pin (steps 9-10).

    Args:
        source: The loaded source.
        source_interface_id: ``<source-id>.interface.<name>``.
        requested: The pinned version, or ``None`` for the available one.
        export_id: Names the interface in the mismatch message (defaults to
            the source-interface ID).

    Raises:
        SourceInterfaceInvalid: the interface is missing, not a mapping, or
            its ``version`` is not an integer >= 1.
        InterfaceVersionMismatch: a pin that is not exactly an integer
            (``True`` is not 1), below 1, or different from the available
            version. A wrong pin is always an error, never retried.
    """
    owner = source.module.module_id
    interfaces = source.data.get("interfaces")
    interface = interfaces.get(source_interface_id) if isinstance(interfaces, dict) else None
    mine = source_interface_id.startswith(source.source_id + ids.INTERFACE_MARK)
    if not mine or not isinstance(interface, dict):
        raise SourceInterfaceInvalid(
            f"source interface not found: {source_interface_id}", target_module_id=owner
        )
    version = interface.get("version")
    if type(version) is not int or version < 1:
        raise SourceInterfaceInvalid(
            f"{source_interface_id}: version must be an integer >= 1", target_module_id=owner
        )
    if requested is not None and (type(requested) is not int or requested != version):
        named = export_id or source_interface_id
        raise InterfaceVersionMismatch(
            f"version mismatch for {named}: requested {shown(requested)}, available {version}",
            target_module_id=owner,
            interface_id=export_id,
        )
    return interface, version


# --------------------------------------------------------------------------- #
