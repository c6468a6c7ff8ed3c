"""Direct, catalogue-free lookup of module and source blueprints (BLUEPRINTS-V6 sections 2, 4, 5.1).

A module ID names its file: ``a.b.c`` is ``<root>/a/b/c/blueprint.yaml``,
where ``<root>`` is the one configured root holding ``a``. The top-level
segment is probed in every root (to detect ambiguity); descendants are read
only under that root, and only after their parent registered them. A
request opens the blueprints it needs and nothing else: no directory is
listed, walked or globbed, and nothing is remembered beyond one
:class:`ModuleLoader`, which lives for one request.

Files are read through :mod:`.files` (no symlink anywhere, regular files,
size cap) and parsed by :mod:`..strict_yaml` (strict YAML). Messages name IDs and
never quote file content or absolute paths.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from boring_dispatch._static import Protocol
from boring_dispatch.errors import (
    BlueprintIdentityMismatch,
    BlueprintMalformed,
    BlueprintSchemaMismatch,
    ChildUnregistered,
    ModuleAmbiguous,
    ModuleNotFound,
    RouteError,
    SourceLocatorInvalid,
    SourceNotFound,
    UnsafeBlueprintPath,
)
from boring_dispatch.records import ModuleRecord, RepositoryConfig, SourceRecord
from boring_dispatch.repository import ids
from boring_dispatch.repository.load.files import (
    MAX_BLUEPRINT_BYTES,
    DirectoryTree,
    FsRefused,
    read_regular,
    relative_parts,
    stat_regular,
)
from boring_dispatch.repository.strict_yaml.load import load_yaml

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import Final

__all__ = [
    "BLUEPRINT_NAME",
    "NO_FOLLOW_FILES",
    "BlueprintFiles",
    "ModuleLoader",
]

#: The file name of every module blueprint.
BLUEPRINT_NAME: Final = "blueprint.yaml"
_SCHEMA_VERSION: Final = 6
_MODULE_MAPS: Final = ("children", "namespace_exports", "sources", "exports")
_FS_REASONS: Final = {
    "symlink": "a path component is a symlink",
    "not_directory": "a path component is not a directory",
    "not_regular": "not a regular file",
    "unsafe_mode": "the file is world-writable",
    "unsafe_directory": "a directory on the way is world-writable (no sticky bit)",
    "unsafe_owner": "the file, or a directory on the way, has an untrusted owner",
    "io": "a path component cannot be inspected",
    "invalid_path": "not a clean path",
    "missing": "a path component is missing",
}


class BlueprintFiles(Protocol):
    """How the loader reaches the disk: one read and one probe, both refusing unsafe paths."""

    def read(self, path: Path, cap: int) -> bytes:
        """The bytes of a regular file (see :func:`.files.read_regular`)."""

    def stat(self, path: Path) -> os.stat_result:
        """Prove ``path`` is a regular file without reading it (see :func:`.files.stat_regular`)."""


class _NoFollowFiles:
    """The real disk, through the no-follow, regular-file-only reader of :mod:`.files`."""

    __slots__ = ()

    def read(self, path: Path, cap: int) -> bytes:
        return read_regular(path, cap)

    def stat(self, path: Path) -> os.stat_result:
        return stat_regular(path)


#: What every loader uses unless told otherwise.
NO_FOLLOW_FILES: Final[BlueprintFiles] = _NoFollowFiles()


class ModuleLoader:
    """Loads and checks the blueprints of one request.

    Create one per request: it memoises the modules and sources it loaded
    (so an ID named twice is read once) and nothing outlives it. Every file
    it touches goes through ``files`` (the real disk unless told otherwise).
    """

    def __init__(self, config: RepositoryConfig, files: BlueprintFiles = NO_FOLLOW_FILES) -> None:
        self._config: Final = config
        self._files = files
        self._modules: dict[str, ModuleRecord] = {}
        self._sources: dict[str, SourceRecord] = {}

    def read_through(self, tree: DirectoryTree) -> None:
        """Reach files through ``tree``, this request's descriptors (its owner closes it).

        A loader given its own ``files`` keeps them.
        """
        if self._files is NO_FOLLOW_FILES:
            self._files = tree

    def load(self, module_id: str) -> ModuleRecord:
        """The checked blueprint of ``module_id``; see :meth:`load_ancestry`."""
        return self.load_ancestry(module_id)[-1]

    def load_ancestry(self, module_id: str) -> tuple[ModuleRecord, ...]:
        """Load ``a``, ``a.b``, ``a.b.c`` for ``a.b.c``, outermost first.

        Each level is registered by its parent (``children.<segment>: {}``)
        before its file is read, and passes the checks of section 2.5.

        Raises:
            InvalidModuleId: the ID does not follow the grammar.
            ModuleNotFound: no root holds the top level, or a registered
                child's blueprint is missing.
            ModuleAmbiguous: more than one root holds the top level.
            ChildUnregistered: a parent does not register the next segment.
            UnsafeBlueprintPath: a symlink, non-directory, non-regular or
                world-writable file, or an unreadable component on the path.
            BlueprintMalformed: oversized, unreadable or invalid YAML, or a
                bad ``version``, ``children``, ``namespace_exports``,
                ``sources`` or ``exports``.
            BlueprintSchemaMismatch: ``schema_version`` is not 6 or
                ``node_type`` is not ``module``.
            BlueprintIdentityMismatch: ``id`` differs from the path's ID.
        """
        segments = ids.parse_module_id(module_id)
        records: list[ModuleRecord] = []
        for depth in range(1, len(segments) + 1):
            current = ".".join(segments[:depth])
            record = self._modules.get(current)
            if record is None:
                if records:
                    record = self._load_child(records[-1], segments[depth - 1])
                else:
                    record = self._load_top(current)
                self._modules[current] = record
            records.append(record)
        return tuple(records)

    def load_source(self, module: ModuleRecord, source_id: str) -> SourceRecord:
        """Load the behavioral-source blueprint ``source_id`` of ``module``.

        Raises:
            SourceLocatorInvalid: ``sources.<id>`` is not a mapping with a
                ``blueprint`` mapping whose ``base`` is ``module-root``, or
                the source belongs to another module.
            UnsafeBlueprintPath: ``blueprint.path`` or ``gateway.path`` is not
                a clean relative path, or reaches a symlink, a non-regular or
                a world-writable file.
            SourceNotFound: the source blueprint or the gateway is missing.
            BlueprintMalformed: invalid YAML, a bad ``version`` or ``gateway``.
            BlueprintSchemaMismatch: not a version-6 ``behavioral_source``.
            BlueprintIdentityMismatch: ``id`` is not ``source_id``.
        """
        cached = self._sources.get(source_id)
        if cached is not None and cached.module is module:
            return cached
        owner = module.module_id
        entry = module.data["sources"]
        locator = entry.get(source_id) if isinstance(entry, dict) else None
        blueprint = locator.get("blueprint") if isinstance(locator, dict) else None
        if source_id.rpartition(".source.")[0] != owner or not isinstance(blueprint, dict):
            raise SourceLocatorInvalid(
                f"{owner} has no source locator for {source_id}", target_module_id=owner
            )
        if blueprint.get("base") != "module-root":
            raise SourceLocatorInvalid(
                f"source {source_id}: blueprint.base must be module-root", target_module_id=owner
            )
        data = self._read_source_file(module, blueprint.get("path"), f"source {source_id}")
        source = _check_source(module, source_id, data)
        self._check_gateway_file(module, source.gateway_path, f"gateway of {source_id}")
        self._sources[source_id] = source
        return source

    # ----------------------------------------------------------------------- #

    def _load_top(self, top: str) -> ModuleRecord:
        found: list[tuple[Path, bytes]] = []
        for root in self._config.module_roots:
            data = self._read_module_file(root.joinpath(top, BLUEPRINT_NAME), top)
            if data is not None:
                found.append((root, data))
        if not found:
            raise ModuleNotFound(f"module not found: {top}", target_module_id=top)
        if len(found) > 1:
            raise ModuleAmbiguous(
                f"module is present in multiple configured roots: {top}", target_module_id=top
            )
        root, data = found[0]
        return _check_module(top, root / top, root, data)

    def _load_child(self, parent: ModuleRecord, segment: str) -> ModuleRecord:
        child_id = f"{parent.module_id}.{segment}"
        children = parent.data["children"]
        if not isinstance(children, dict) or segment not in children:
            raise ChildUnregistered(
                f"{parent.module_id} does not register child {segment}", target_module_id=child_id
            )
        root = parent.root / segment
        data = self._read_module_file(root / BLUEPRINT_NAME, child_id)
        if data is None:
            raise ModuleNotFound(
                f"registered module blueprint not found: {child_id}", target_module_id=child_id
            )
        return _check_module(child_id, root, parent.configured_root, data)

    def _read_module_file(self, path: Path, module_id: str) -> bytes | None:
        """The file's bytes, or ``None`` when a component is missing."""
        try:
            return self._files.read(path, MAX_BLUEPRINT_BYTES)
        except FsRefused as refusal:
            if refusal.reason == "missing":
                return None
            raise _fs_error(refusal, f"blueprint of {module_id}", module_id) from None

    def _read_source_file(self, module: ModuleRecord, authored: object, what: str) -> bytes:
        path = self._source_path(module, authored, what)
        try:
            return self._files.read(path, MAX_BLUEPRINT_BYTES)
        except FsRefused as refusal:
            raise _source_fs_error(refusal, what, module.module_id) from None

    def _check_gateway_file(self, module: ModuleRecord, authored: str, what: str) -> None:
        path = self._source_path(module, authored, what)
        try:
            self._files.stat(path)
        except FsRefused as refusal:
            raise _source_fs_error(refusal, what, module.module_id) from None

    def _source_path(self, module: ModuleRecord, authored: object, what: str) -> Path:
        """An authored path below the module root (section 2.7)."""
        parts = relative_parts(authored)
        if parts is None:
            raise UnsafeBlueprintPath(
                f"{what}: unsafe relative path", target_module_id=module.module_id
            )
        return module.root.joinpath(*parts)


def _check_module(module_id: str, root: Path, configured_root: Path, data: bytes) -> ModuleRecord:
    """Section 2.5 checks 2-7 (check 1 is the reader's)."""
    what = f"blueprint of {module_id}"
    blueprint = load_yaml(data, what=what, target_module_id=module_id)
    _check_header(blueprint, "module", module_id, what, module_id)
    version = _version(blueprint, what, module_id)
    for name in _MODULE_MAPS:
        if not isinstance(blueprint.get(name), dict):
            raise BlueprintMalformed(
                f"{what}: {name} must be a mapping", target_module_id=module_id
            )
    children = blueprint["children"]
    for segment, value in children.items() if isinstance(children, dict) else ():
        if not ids.is_local_segment(segment) or not isinstance(value, dict) or value:
            raise BlueprintMalformed(
                f"{what}: children must map local segments to {{}}", target_module_id=module_id
            )
    return ModuleRecord(module_id, root, configured_root, version, blueprint)


def _check_source(module: ModuleRecord, source_id: str, data: bytes) -> SourceRecord:
    owner = module.module_id
    what = f"source blueprint {source_id}"
    blueprint = load_yaml(data, what=what, target_module_id=owner)
    _check_header(blueprint, "behavioral_source", source_id, what, owner)
    version = _version(blueprint, what, owner)
    gateway = blueprint.get("gateway")
    if not isinstance(gateway, dict):
        raise BlueprintMalformed(f"{what}: gateway must be a mapping", target_module_id=owner)
    gateway_path = gateway.get("path")
    if not isinstance(gateway_path, str) or relative_parts(gateway_path) is None:
        raise UnsafeBlueprintPath(f"{what}: unsafe gateway.path", target_module_id=owner)
    return SourceRecord(source_id, module, version, gateway_path, blueprint)


def _check_header(
    blueprint: Mapping[str, object], node_type: str, expected_id: str, what: str, owner: str
) -> None:
    schema = blueprint.get("schema_version")
    if (
        type(schema) is not int
        or schema != _SCHEMA_VERSION
        or blueprint.get("node_type") != node_type
    ):
        raise BlueprintSchemaMismatch(
            f"{what}: expected schema_version 6 and node_type {node_type}", target_module_id=owner
        )
    if blueprint.get("id") != expected_id:
        raise BlueprintIdentityMismatch(
            f"{what}: id does not match {expected_id}", target_module_id=owner
        )


def _version(blueprint: Mapping[str, object], what: str, owner: str) -> int:
    version = blueprint.get("version")
    if type(version) is not int or version < 1:
        raise BlueprintMalformed(f"{what}: version must be an integer >= 1", target_module_id=owner)
    return version


def _fs_error(refusal: FsRefused, what: str, owner: str) -> RouteError:
    if refusal.reason in ("too_large", "unreadable"):
        reason = "too large" if refusal.reason == "too_large" else "unreadable"
        return BlueprintMalformed(f"{what}: {reason}", target_module_id=owner)
    return UnsafeBlueprintPath(f"{what}: {_FS_REASONS[refusal.reason]}", target_module_id=owner)


def _source_fs_error(refusal: FsRefused, what: str, owner: str) -> RouteError:
    if refusal.reason == "missing":
        return SourceNotFound(f"{what}: file not found", target_module_id=owner)
    return _fs_error(refusal, what, owner)
