"""Offline listing of a repository's exports, for ``dispatcher names --config``.

This is the one module that walks the configured roots. The routing path never
imports it: listing is an explicit, repository-wide operation (the v6
reference's "what dispatcher never does" keeps catalogues off the live route).
A module whose blueprint cannot be read is reported, not skipped silently.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from boring_dispatch._quote import shown_path
from boring_dispatch.errors import BlueprintMalformed, RouteError
from boring_dispatch.records import RepositoryConfig
from boring_dispatch.repository import ids
from boring_dispatch.repository.load.files import MAX_BLUEPRINT_BYTES, FsRefused, read_regular
from boring_dispatch.repository.strict_yaml.load import load_yaml

__all__ = ["exported_interfaces", "iter_exports", "iter_module_exports"]

_BLUEPRINT = "blueprint.yaml"


def iter_exports(config: RepositoryConfig) -> Iterator[tuple[str, str]]:
    """Yield ``(export_id, module_id)`` for every export, sorted by export ID.

    Raises:
        RouteError: a module blueprint is unreadable or malformed, or declares
            an export outside its own module.
    """
    found: list[tuple[str, str]] = []
    for root in config.module_roots:
        for module_id, path in _module_blueprints(root):
            data = _read(path)
            exports = data.get("exports")
            if not isinstance(exports, dict):
                raise BlueprintMalformed(f"exports of {module_id} is not a mapping")
            for export_id in exports:
                owner, _ = ids.parse_interface_id(export_id)
                if owner != module_id:
                    raise BlueprintMalformed(f"{module_id} declares a foreign export")
                found.append((export_id, module_id))
    yield from sorted(found)


def iter_module_exports(config: RepositoryConfig) -> Iterator[tuple[str, tuple[str, ...] | None]]:
    """Yield ``(module_id, its export IDs)`` for every module; ``None`` for a broken one.

    Unlike :func:`iter_exports`, a module whose blueprint is unreadable or
    malformed does not end the scan: it is yielded with ``None`` (the caller
    decides what an unknown module means for it).
    """
    for root in config.module_roots:
        for module_id, path in _module_blueprints(root):
            try:
                exports = _read(path).get("exports")
                if not isinstance(exports, dict):
                    raise BlueprintMalformed(f"exports of {module_id} is not a mapping")
                if any(ids.parse_interface_id(e)[0] != module_id for e in exports):
                    raise BlueprintMalformed(f"{module_id} declares a foreign export")
            except RouteError:
                yield module_id, None
                continue
            yield module_id, tuple(exports)


def exported_interfaces(config: RepositoryConfig) -> tuple[str, ...]:
    """Every export ID of the repository, sorted."""
    return tuple(export_id for export_id, _ in iter_exports(config))


def _module_blueprints(root: Path) -> Iterator[tuple[str, Path]]:
    # followlinks=False: a symlinked module directory is never part of the inventory.
    for directory, subdirs, files in os.walk(root, followlinks=False):
        subdirs.sort()
        here = Path(directory)
        if here == root or _BLUEPRINT not in files:
            continue
        segments = here.relative_to(root).parts
        if not all(ids.is_local_segment(s) for s in segments):
            continue
        module_id = ".".join(segments)
        try:
            ids.parse_module_id(module_id)
        except RouteError:
            continue
        yield module_id, here / _BLUEPRINT


def _read(path: Path) -> dict[str, object]:
    # The routing path's reader: no symlink in any component, a regular file, capped,
    # checked on the opened descriptor (no check-then-open race).
    try:
        data = read_regular(path, MAX_BLUEPRINT_BYTES)
    except FsRefused as refusal:
        raise BlueprintMalformed(f"cannot read {shown_path(path)}: {refusal.reason}") from None
    return load_yaml(data, what=shown_path(path))
