"""A small managed repository for the setup tests, written with the real blueprint shapes.

Modules (root ``skills``):

- ``host``: the discoverable skill every test calls as.
- ``base``: ``base.interface.setup`` is a **Python** step (entry ``Setup``: it
  reads ``control.txt`` in its module directory: ``ok`` exits 0, ``fail``
  exits 1, ``sleep`` writes its pid to ``pid.txt`` and sleeps, ``uid`` prints
  ``setup uid=N`` and exits 0), requiring
  nothing; ``base.interface.work`` prints ``work``; ``base.interface.teardown``.
- ``app``: ``app.interface.setup`` is a **Markdown** step (no process
  binding) requiring ``base.interface.setup@1``; ``app.interface.read``
  prints ``read``; its child ``app._rtx`` exports ``app._rtx.interface.inner``
  (governed by ``app``'s setup through the ancestry).
- ``plain``: unmanaged; ``plain.interface.echo`` prints ``echo``;
  ``plain.interface.nest`` calls ``app.interface.read`` and then prints
  ``NESTED-OK`` and exits 0 whatever happened (a gateway hiding a refusal);
  ``plain.interface.hold`` writes ``hold-<pid>.pid`` in its module directory and
  holds until a ``release`` file appears there (a call that keeps its slot).
- :data:`LOOKALIKES`: look-alikes of the manager whose gateways call
  ``app.interface.read`` like ``plain.interface.nest`` (they must not bypass the gate).
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Final

from kits.cases import RepositorySpec, _write
from kits.mcp import _contract, _outputs

__all__ = ["CALLER", "LOOKALIKES", "write_setup_repository"]

CALLER: Final = "host"
#: Modules whose IDs look like the manager's (``setup-interface-manager._rtx``) but are not.
LOOKALIKES: Final = (("setup-interface-managers", "_rtx"), ("setup-interface-manager", "rtx"))
_PUBLIC: Final = {"allow_all_modules": True, "allowed_callers": []}
_ANY: Final = {"min_positionals": 0, "allow_extra_positionals": True}

GATEWAY: Final = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from boring_dispatch.gateway import ArgvInterface


    class Setup(ArgvInterface):
        def run(self, argv):
            mode = Path("control.txt").read_text().strip() if Path("control.txt").exists() else "ok"
            if mode == "sleep":
                Path("pid.txt").write_text(str(os.getpid()))
                time.sleep(300)
            if mode == "uid":
                print(f"setup uid={os.getuid()}")
                return 0
            print("setup " + mode)
            return 0 if mode == "ok" else 1


    class Print(ArgvInterface):
        def run(self, argv):
            print(self.__class__.__name__.lower())
            return 0


    class Work(Print):
        pass


    class Read(Print):
        pass


    class Inner(Print):
        pass


    class Echo(Print):
        pass


    class Teardown(Print):
        pass


    class Hold(ArgvInterface):
        def run(self, argv):
            # Counted by its pid file; holds its slot until the test writes ``release``.
            Path(f"hold-{os.getpid()}.pid").write_text(str(os.getpid()))
            while not Path("release").exists():
                time.sleep(0.01)
            return 0


    class Nest(ArgvInterface):
        def run(self, argv):
            try:
                self.dispatch("app.interface.read", version=1)
            except Exception as error:
                print("hidden: " + type(error).__name__)
            print("NESTED-OK")
            return 0
    """
)


def _python(entry: str) -> dict[str, object]:
    """A level-0 Python interface (machine output) running ``entry``."""
    return {
        "version": 1,
        "process_binding": {"kind": "process", "entry": entry, "patterns": [_ANY]},
        "contract": _contract(_outputs("machine", "machine"), 0),
    }


def _module(
    module_id: str,
    interfaces: dict[str, dict[str, object]],
    *,
    skill: bool = False,
    requires: list[dict[str, object]] | None = None,
    **fields: object,
) -> tuple[dict[str, object], dict[str, object]]:
    source_id = f"{module_id}.source.main"
    exports: dict[str, object] = {}
    for name in interfaces:
        export: dict[str, object] = {
            "source_interface": f"{source_id}.interface.{name}",
            "access": dict(_PUBLIC),
        }
        if name == "setup" and requires is not None:
            export["setup_requires_setup_of"] = requires
        exports[f"{module_id}.interface.{name}"] = export
    module: dict[str, object] = {
        "schema_version": 6,
        "node_type": "module",
        "id": module_id,
        "version": 1,
        "children": {},
        "namespace_exports": {},
        "sources": {source_id: {"blueprint": {"base": "module-root", "path": "main.yaml"}}},
        "exports": exports,
    }
    if skill:
        module["discovery"] = {"mechanism": "skill"}
    module.update(fields)
    source = {
        "schema_version": 6,
        "node_type": "behavioral_source",
        "id": source_id,
        "version": 1,
        "gateway": {"path": "main.py"},
        "interfaces": {f"{source_id}.interface.{k}": v for k, v in interfaces.items()},
    }
    return module, source


def write_setup_repository(directory: Path) -> Path:
    """Write the managed repository under ``directory``; return its ``officina.toml``."""
    directory = directory.resolve()
    modules: dict[str, object] = {}
    sources: dict[str, object] = {}
    files: dict[str, str] = {}

    def add(module_id: str, pair: tuple[dict[str, object], dict[str, object]]) -> None:
        modules[module_id], sources[f"{module_id}.source.main"] = pair
        files[f"skills/{module_id.replace('.', '/')}/main.py"] = GATEWAY

    add("host", _module("host", {}, skill=True))
    add(
        "base",
        _module(
            "base",
            {"setup": _python("Setup"), "work": _python("Work"), "teardown": _python("Teardown")},
            requires=[],
        ),
    )
    app_module, app_source = _module(
        "app",
        {"setup": {"version": 1}, "read": _python("Read"), "teardown": _python("Teardown")},
        requires=[{"interface": "base.interface.setup", "version": 1}],
        children={"_rtx": {}},
        namespace_exports={
            "_rtx": {
                "version": 1,
                "access": dict(_PUBLIC),
                "surface": {"only": {"app._rtx.interface.inner": 1}},
            }
        },
    )
    # The Markdown step lives in its own source, whose gateway is SKILL.md.
    skill_id = "app.source.skill"
    app_source["interfaces"].pop("app.source.main.interface.setup")  # type: ignore[attr-defined]
    app_module["exports"]["app.interface.setup"]["source_interface"] = (  # type: ignore[index]
        f"{skill_id}.interface.setup"
    )
    app_module["sources"][skill_id] = {  # type: ignore[index]
        "blueprint": {"base": "module-root", "path": "skill.yaml"}
    }
    sources[skill_id] = {
        "schema_version": 6,
        "node_type": "behavioral_source",
        "id": skill_id,
        "version": 1,
        "gateway": {"language": "Markdown", "path": "SKILL.md"},
        "interfaces": {f"{skill_id}.interface.setup": {"version": 1}},
    }
    add("app", (app_module, app_source))
    add("app._rtx", _module("app._rtx", {"inner": _python("Inner")}))
    plain = {"echo": _python("Echo"), "nest": _python("Nest"), "hold": _python("Hold")}
    add("plain", _module("plain", plain))
    for top, child in LOOKALIKES:
        namespace = {
            child: {
                "version": 1,
                "access": dict(_PUBLIC),
                "surface": {"only": {f"{top}.{child}.interface.nest": 1}},
            }
        }
        add(top, _module(top, {}, children={child: {}}, namespace_exports=namespace))
        add(f"{top}.{child}", _module(f"{top}.{child}", {"nest": _python("Nest")}))
    files["skills/app/SKILL.md"] = "# app setup\n\nCall app._rtx.interface.inner, then settle.\n"
    spec = RepositorySpec(roots=("skills",), modules=modules, sources=sources, files=files)
    return _write(spec, directory)
