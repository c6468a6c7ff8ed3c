from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from boring_dispatch.errors import RegistryInvalid
from boring_dispatch.registry.spec import load_registry

MODULE = """
from boring_dispatch import Registry, Tool

def ping() -> str:
    return "pong"

TABLE = Registry({"ping": Tool(ping, description="Ping.")}, name="spec_test")
NOT_A_TABLE = {"ping": ping}

def __getattr__(name):
    return TABLE
"""


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    root = tmp_path / "spec_pkg_a1"
    root.mkdir()
    (root / "__init__.py").write_text("", encoding="utf-8")
    (root / "tables.py").write_text(MODULE, encoding="utf-8")
    (root / "broken.py").write_text("raise RuntimeError('import-time failure')\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "spec_pkg_a1"
    for name in [m for m in sys.modules if m.startswith("spec_pkg_a1")]:
        del sys.modules[name]


def test_a_spec_names_a_module_level_registry(package: str) -> None:
    registry = load_registry(f"{package}.tables:TABLE")
    assert registry.name == "spec_test"
    assert registry.names() == ("ping",)


@pytest.mark.parametrize(
    "spec",
    [
        "",
        "tables",
        "tables:",
        ":TABLE",
        "pkg.tables:TABLE:X",
        "pkg..tables:TABLE",
        "pkg.tables:TABLE.attr",
        "pkg/tables:TABLE",
        "../pkg:TABLE",
        "pkg.tables:TABLE ",
        "pkg.tables:TABLE\n",
        "os:system()",
        "__import__('os'):x",
        "pkg.t\u00e4bles:TABLE",
        "a" * 300 + ":X",
    ],
)
def test_a_malformed_spec_is_refused_before_any_import(
    spec: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    imported: list[str] = []
    monkeypatch.setattr("boring_dispatch.registry.spec.import_module", imported.append)
    with pytest.raises(RegistryInvalid) as caught:
        load_registry(spec)
    assert caught.value.code == "registry_invalid"
    assert imported == []


@pytest.mark.parametrize(
    "suffix",
    ["tables:NOT_A_TABLE", "tables:MISSING", "broken:TABLE", "absent_module:TABLE"],
)
def test_a_spec_that_does_not_lead_to_a_registry_is_refused(package: str, suffix: str) -> None:
    with pytest.raises(RegistryInvalid) as caught:
        load_registry(f"{package}.{suffix}")
    assert caught.value.code == "registry_invalid"


def test_a_module_getattr_hook_is_never_consulted(package: str) -> None:
    with pytest.raises(RegistryInvalid):
        load_registry(f"{package}.tables:ANYTHING")
