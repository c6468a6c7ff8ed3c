"""Build small, real blueprint repositories on disk for tests.

A :class:`RepoBuilder` writes ``officina.toml`` and blueprint files from
Python dicts (``yaml.safe_dump``), keeping the dicts in memory so later
calls can edit them. Nothing is mocked: tests then load the files through
the real loader.

Example::

    repo = make_repo(tmp_path)                         # roots: ("skills",)
    repo.module("alpha", discovery={"mechanism": "skill"})
    repo.module("alpha._rtx")                          # also registers _rtx in alpha
    repo.source("alpha._rtx", "main", interfaces={"run": {"version": 1}})
    repo.export("alpha._rtx", "run", source="main")    # alpha._rtx.interface.run
    loader = repo.loader()
    loader.load("alpha._rtx")

Defaults make every module and source pass the dispatcher's checks; keyword
fields override them (pass a field as :data:`DROP` to remove it).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

import yaml

from boring_dispatch.records import RepositoryConfig
from boring_dispatch.repository.load.config import load_config
from boring_dispatch.repository.load.files import read_regular, stat_regular
from boring_dispatch.repository.load.lookup import ModuleLoader

__all__ = [
    "DROP",
    "PUBLIC",
    "RepoBuilder",
    "corpus_dir",
    "dump",
    "make_repo",
    "reference_load",
]

#: Pass as a field value to leave that key out of the written blueprint.
DROP: Final = object()
#: An access object that admits every caller.
PUBLIC: Final = {"allow_all_modules": True, "allowed_callers": []}


class RecordingFiles:
    """The real no-follow reader, recording every path it is asked to read or probe."""

    def __init__(self) -> None:
        self.paths: list[Path] = []

    def read(self, path: Path, cap: int) -> bytes:
        self.paths.append(path)
        return read_regular(path, cap)

    def stat(self, path: Path) -> os.stat_result:
        self.paths.append(path)
        return stat_regular(path)


class RecordingLoader(ModuleLoader):
    """A real :class:`ModuleLoader` over :class:`RecordingFiles`: which files a request touched."""

    def __init__(self, config: RepositoryConfig) -> None:
        self.files = RecordingFiles()
        super().__init__(config, self.files)

    @property
    def opened_paths(self) -> tuple[Path, ...]:
        """Every file read or probed, in order."""
        return tuple(self.files.paths)


def make_repo(
    tmp_path: Path,
    roots: tuple[str, ...] = ("skills",),
    *,
    feedback: Mapping[str, str] | None = None,
) -> RepoBuilder:
    """A repository at ``tmp_path / "repo"`` with ``roots`` created and configured.

    ``tmp_path`` is resolved first: the loader refuses symlinks anywhere in a
    path, and some systems keep temporary directories behind one (macOS ``/tmp``).
    """
    return RepoBuilder(tmp_path.resolve() / "repo", roots, feedback)


class RepoBuilder:
    """Writes one repository; see the module docstring."""

    def __init__(
        self, root: Path, roots: tuple[str, ...], feedback: Mapping[str, str] | None
    ) -> None:
        #: The repository root (the directory of ``officina.toml``).
        self.root: Final = root
        #: ``officina.toml``.
        self.config_path: Final = root / "officina.toml"
        #: The configured roots, by their spelling in the configuration.
        self.roots: Final = {name: root / name for name in roots}
        #: Module blueprints as written, by module ID (edit, then :meth:`rewrite`).
        self.modules: dict[str, dict[str, object]] = {}
        #: Where each module lives: module ID -> configured root spelling.
        self.module_roots: dict[str, str] = {}
        for path in self.roots.values():
            path.mkdir(parents=True, exist_ok=True)
        lines = ["schema_version = 1", "", "[modules]"]
        lines.append("roots = [" + ", ".join(f'"{name}"' for name in roots) + "]")
        if feedback:
            lines += ["", "[feedback]", *(f'{key} = "{value}"' for key, value in feedback.items())]
        self.config_path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    def config(self) -> RepositoryConfig:
        """``load_config`` of this repository."""
        return load_config(self.config_path)

    def loader(self) -> RecordingLoader:
        """A fresh loader (one request) over this repository, recording what it touches."""
        return RecordingLoader(self.config())

    def module_dir(self, module_id: str, root: str | None = None) -> Path:
        """The directory of ``module_id`` (its top level decides the root)."""
        top = module_id.partition(".")[0]
        name = root or self.module_roots.get(top) or next(iter(self.roots))
        return self.roots[name].joinpath(*module_id.split("."))

    def module(
        self,
        module_id: str,
        *,
        root: str | None = None,
        register: bool = True,
        **fields: object,
    ) -> Path:
        """Write a module blueprint that passes every check; returns its path.

        ``register`` adds the last segment to the parent's ``children`` (the
        parent must have been written first).
        """
        data: dict[str, object] = {
            "schema_version": 6,
            "node_type": "module",
            "id": module_id,
            "version": 1,
            "children": {},
            "namespace_exports": {},
            "sources": {},
            "exports": {},
        }
        data.update(fields)
        top = module_id.partition(".")[0]
        if "." not in module_id:
            self.module_roots[top] = root or next(iter(self.roots))
        self.modules[module_id] = data
        parent, _, segment = module_id.rpartition(".")
        if parent and register:
            children = self.modules[parent].setdefault("children", {})
            assert isinstance(children, dict)
            children[segment] = {}
            self.rewrite(parent)
        return self.rewrite(module_id, root=root)

    def rewrite(self, module_id: str, *, root: str | None = None) -> Path:
        """Write ``self.modules[module_id]`` again (after editing it in place)."""
        return self.write(module_id, dump(self.modules[module_id]), root=root)

    def write(self, module_id: str, content: str | bytes, *, root: str | None = None) -> Path:
        """Write raw blueprint content for ``module_id`` (no checks, no registration)."""
        path = self.module_dir(module_id, root) / "blueprint.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        raw = content.encode("utf-8") if isinstance(content, str) else content
        path.write_bytes(raw)
        return path

    def source(
        self,
        module_id: str,
        name: str,
        *,
        interfaces: Mapping[str, Mapping[str, object]] | object = None,
        gateway_file: str | None = "gateway.py",
        path: str | None = None,
        **fields: object,
    ) -> Path:
        """Write ``<module>/blueprints/<name>.yaml`` and register it in the module.

        ``interfaces`` is keyed by short name (``run`` becomes
        ``<source-id>.interface.run``); each gets ``version: 1`` unless given
        (:data:`DROP` leaves ``interfaces`` out). ``gateway_file`` is written
        as ``gateway.path`` and created empty (``None``: not created).
        """
        source_id = f"{module_id}.source.{name}"
        relative = path or f"blueprints/{name}.yaml"
        full_interfaces: object = DROP
        if interfaces is not DROP:
            assert interfaces is None or isinstance(interfaces, Mapping)
            full_interfaces = {
                f"{source_id}.interface.{short}": {"version": 1, **body}
                for short, body in (interfaces or {}).items()
            }
        data: dict[str, object] = {
            "schema_version": 6,
            "node_type": "behavioral_source",
            "id": source_id,
            "version": 1,
            "gateway": {"language": "Python", "path": gateway_file or "gateway.py"},
            "interfaces": full_interfaces,
        }
        data.update(fields)
        file = self.module_dir(module_id) / relative
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(dump(data), encoding="utf-8")
        if gateway_file is not None:
            self.gateway(module_id, gateway_file)
        sources = self.modules[module_id].setdefault("sources", {})
        assert isinstance(sources, dict)
        sources[source_id] = {"blueprint": {"base": "module-root", "path": relative}}
        self.rewrite(module_id)
        return file

    def gateway(self, module_id: str, relative: str, text: str = "") -> Path:
        """Create a gateway file below the module's directory."""
        file = self.module_dir(module_id) / relative
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")
        return file

    def export(
        self,
        module_id: str,
        name: str,
        *,
        source: str,
        interface: str | None = None,
        access: Mapping[str, object] | None = None,
    ) -> str:
        """Export ``<source>.interface.<interface or name>`` as ``<module>.interface.<name>``."""
        export_id = f"{module_id}.interface.{name}"
        exports = self.modules[module_id].setdefault("exports", {})
        assert isinstance(exports, dict)
        exports[export_id] = {
            "source_interface": f"{module_id}.source.{source}.interface.{interface or name}",
            "access": copy.deepcopy(dict(access or PUBLIC)),
        }
        self.rewrite(module_id)
        return export_id


class _PlainDumper(yaml.CSafeDumper):
    """Never writes anchors or aliases (the strict loader refuses them)."""

    def ignore_aliases(self, _data: object) -> bool:
        return True


def dump(data: Mapping[str, object]) -> str:
    """YAML text of ``data`` without :data:`DROP` values, anchors or aliases."""
    return yaml.dump(_without_drops(data), Dumper=_PlainDumper, sort_keys=False)


def _without_drops(value: object) -> object:
    if isinstance(value, Mapping):
        return {k: _without_drops(v) for k, v in value.items() if v is not DROP}
    if isinstance(value, list):
        return [_without_drops(v) for v in value if v is not DROP]
    return value


def reference_load(data: str | bytes) -> object:
    """What PyYAML's C safe loader (the existing dispatcher's parser) makes of ``data``."""
    loader = yaml.CSafeLoader(data)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


#: The famulus corpus, vendored as test data (MIT; see ``tests/corpus/famulus/LICENSE``).
FAMULUS: Final = Path(__file__).resolve().parent.parent / "corpus" / "famulus"


def corpus_dir() -> Path:
    """The famulus corpus: 74 real modules, read as data (nothing in it can be launched)."""
    return FAMULUS
