"""The allowlist of a repository as data, for ``dispatcher serve``: never on the routing path.

For every export: its version, description, derived security level (``None``
when it cannot be derived), output audiences, and the callers its own access
policy names (``allow_all_modules`` or the resolved ``allowed_callers``). The
namespace gates between a caller and the export can narrow that further; a
dry run (``dispatcher --dry-run``) shows the whole decision for one caller.

An export whose facts cannot be read is listed with the ``dispatcher.*`` code
of the refusal instead (``error``), so one broken module never hides the rest.
"""

from __future__ import annotations

from collections.abc import Mapping

from boring_dispatch.errors import RouteError, SecurityLevelUnavailable
from boring_dispatch.repository import ids
from boring_dispatch.repository.facts.audiences import output_audiences
from boring_dispatch.repository.facts.levels import derive_level
from boring_dispatch.repository.load.config import load_config
from boring_dispatch.repository.load.lookup import ModuleLoader
from boring_dispatch.repository.offline.inventory import exported_interfaces
from boring_dispatch.repository.pipeline import resolve_target
from boring_dispatch.repository.repository import Repository

__all__ = ["repository_allowlist"]


def repository_allowlist(repository: Repository) -> dict[str, object]:
    """``{"kind": "repository", "exports": [...]}``, sorted by export ID.

    Raises:
        RouteError: the configuration or the inventory cannot be read.
    """
    config = load_config(repository.config_path)
    exports = []
    for export_id in exported_interfaces(config):
        try:
            exports.append(_export(ModuleLoader(config), export_id))
        except RouteError as error:
            exports.append({"interface": export_id, "error": error.code})
    return {"kind": "repository", "exports": exports}


def _export(loader: ModuleLoader, export_id: str) -> dict[str, object]:
    target = resolve_target(loader, export_id, None)
    try:
        level: int | None = derive_level(target.interface, target.terminal)
    except SecurityLevelUnavailable:
        level = None
    description = target.interface.get("description")
    return {
        "interface": export_id,
        "version": target.version,
        "description": " ".join(description.split()) if isinstance(description, str) else "",
        "security_level": level,
        "output_audiences": output_audiences(target.interface),
        "access": _callers(target.terminal.module_id, target.export.get("access")),
    }


def _callers(owner: str, access: object) -> dict[str, object]:
    """The export's own policy, as authorization reads it (entries resolved, sorted)."""
    if not isinstance(access, Mapping):
        return {"all_modules": False, "allowed_callers": [], "invalid": True}
    entries = access.get("allowed_callers")
    if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
        return {"all_modules": False, "allowed_callers": [], "invalid": True}
    resolved = set()
    for entry in entries:
        try:
            resolved.add(ids.resolve_caller_reference(owner, entry))
        except RouteError:
            return {"all_modules": False, "allowed_callers": [], "invalid": True}
    return {
        "all_modules": access.get("allow_all_modules") is True,
        "allowed_callers": sorted(resolved),
    }
