"""The repository-wide routes when some other module of the repository is broken.

``invalidate`` is how an operator revokes a setup (a leaked key): a broken
blueprint elsewhere in the repository (a skill being written, a bad merge)
must not keep a revoked setup ready. Setups whose graph cannot be read are
invalidated with it when they are recorded (they may depend on it).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from boring_dispatch.errors import SetupRequired
from boring_dispatch.records import RouteRequest
from boring_dispatch.repository.repository import Repository
from boring_dispatch.setup.manager.routes import SetupManager
from kits.setup_repo import CALLER, write_setup_repository

RESUME = json.dumps({"caller": CALLER, "interface": "app.interface.read", "version": 1})
_PUBLIC = {"allow_all_modules": True, "allowed_callers": []}


def _plain_setup(requires: object) -> Callable[[Path], None]:
    def breaks(blueprint: Path) -> None:
        data = yaml.safe_load(blueprint.read_text(encoding="utf-8"))
        data["exports"]["plain.interface.setup"] = {
            "source_interface": "plain.source.main.interface.echo",
            "access": _PUBLIC,
            "setup_requires_setup_of": requires,
        }
        blueprint.write_text(yaml.safe_dump(data), encoding="utf-8")

    return breaks


def _unreadable(blueprint: Path) -> None:
    blueprint.write_text("exports: [\n", encoding="utf-8")


def _exports_not_a_mapping(blueprint: Path) -> None:
    data = yaml.safe_load(blueprint.read_text(encoding="utf-8"))
    data["exports"] = ["plain.interface.echo"]
    blueprint.write_text(yaml.safe_dump(data), encoding="utf-8")


BREAKAGES = {
    "missing-prerequisite": _plain_setup([{"interface": "gone.interface.setup", "version": 1}]),
    "version-differs": _plain_setup([{"interface": "base.interface.setup", "version": 9}]),
    "not-a-list": _plain_setup("base.interface.setup"),
    "requires-itself": _plain_setup([{"interface": "plain.interface.setup", "version": 1}]),
    "unreadable-blueprint": _unreadable,
    "exports-not-a-mapping": _exports_not_a_mapping,
}


@pytest.mark.parametrize("breakage", sorted(BREAKAGES))
def test_invalidate_works_whatever_else_is_broken(tmp_path: Path, breakage: str) -> None:
    config = write_setup_repository(tmp_path / "repo")
    manager = SetupManager(Repository.open(config, ledger=str(tmp_path / "ledger.sqlite3")))
    began = manager.call("begin", CALLER, {"setup": "app.interface.setup@1", "resume": RESUME})
    ran = manager.call("run-python", CALLER, {"flow": began["flow_id"]})
    settle = {"flow": ran["flow_id"], "setup": "app.interface.setup@1", "outcome": "ready"}
    assert manager.call("settle", CALLER, settle)["status"] == "completed"
    assert manager.repository.invoke(RouteRequest(CALLER, "base.interface.work")).ok

    BREAKAGES[breakage](config.parent / "skills" / "plain" / "blueprint.yaml")
    result = manager.call("invalidate", CALLER, {"setup": "base.interface.setup"})
    changed = result["setups"]
    assert isinstance(changed, list)
    assert set(changed) >= {"base.interface.setup", "app.interface.setup"}
    for target in ("base.interface.work", "app.interface.read"):
        with pytest.raises(SetupRequired) as refused:
            manager.repository.invoke(RouteRequest(CALLER, target))
        assert refused.value.reason == "invalidated"


_CALLING_TEARDOWN = """class Teardown(ArgvInterface):
    def run(self, argv):
        self.dispatch("base.interface.work", version=1)
        print("revoked")
        return 0"""


@pytest.mark.xfail(
    strict=True,
    reason="design question (SETUP.md 2.5/4): a teardown export runs after its records are"
    " marked teardown, so its nested calls into its own module are refused (setup_required);"
    " the records are cleared anyway and the route says torn_down",
)
def test_a_teardown_export_may_call_its_own_module(tmp_path: Path) -> None:
    config = write_setup_repository(tmp_path / "repo")
    gateway = config.parent / "skills" / "base" / "main.py"
    gateway.write_text(
        gateway.read_text().replace("class Teardown(Print):\n    pass", _CALLING_TEARDOWN)
    )
    manager = SetupManager(Repository.open(config, ledger=str(tmp_path / "ledger.sqlite3")))
    resume = json.dumps({"caller": CALLER, "interface": "base.interface.work", "version": 1})
    began = manager.call("begin", CALLER, {"setup": "base.interface.setup@1", "resume": resume})
    assert manager.call("run-python", CALLER, {"flow": began["flow_id"]})["status"] == "completed"
    result = manager.call("teardown", CALLER, {"setup": "base.interface.setup"})
    teardowns = result["teardowns"]
    assert isinstance(teardowns, list)
    assert teardowns[0]["ok"] is True, teardowns
