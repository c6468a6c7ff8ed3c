"""The sparse closure: direct lookup, validated, ordered prerequisites first, fingerprinted."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boring_dispatch.errors import SetupGraphInvalid
from boring_dispatch.repository.load.config import load_config
from boring_dispatch.setup.closure import load_closure
from kits.blueprints import PUBLIC, RecordingLoader, RepoBuilder, corpus_dir, make_repo


def _setup_module(repo: RepoBuilder, module_id: str, requires: object, **extra: object) -> None:
    """A module whose ``setup`` export requires ``requires`` (a list, or anything malformed)."""
    repo.module(module_id)
    repo.source(module_id, "main", interfaces={"setup": {}, "other": {}})
    repo.export(module_id, "setup", source="main")
    repo.export(module_id, "other", source="main")
    exports = repo.modules[module_id]["exports"]
    assert isinstance(exports, dict)
    exports[f"{module_id}.interface.setup"]["setup_requires_setup_of"] = requires
    for key, value in extra.items():
        exports[f"{module_id}.interface.{key}"] = value
    repo.rewrite(module_id)


def _req(*ids: str, version: int = 1) -> list[dict[str, object]]:
    return [{"interface": f"{i}.interface.setup", "version": version} for i in ids]


def test_corpus_closure_of_list_manager_is_prerequisites_first() -> None:
    loader = RecordingLoader(load_config(corpus_dir() / "officina.toml"))
    closure = load_closure(loader, "list-manager.interface.setup")
    assert [node.key for node in closure] == [
        "connect-google.interface.setup@1",
        "list-manager.interface.setup@1",
    ]
    # Only the two modules (and their sources and gateways) were read: a sparse closure.
    opened = {path.parent.name for path in loader.opened_paths if path.name == "blueprint.yaml"}
    assert opened == {"connect-google", "list-manager"}


def test_shared_prerequisites_once_in_declaration_order(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    _setup_module(repo, "d", [])
    _setup_module(repo, "c", _req("d"))
    _setup_module(repo, "b", _req("d"))
    _setup_module(repo, "a", _req("c", "b"))
    order = [
        node.setup_id.split(".")[0] for node in load_closure(repo.loader(), "a.interface.setup")
    ]
    assert order == ["d", "c", "b", "a"]


def test_a_long_chain_has_no_recursion_limit(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    length = 1200
    for index in range(length):
        _setup_module(repo, f"m{index}", _req(f"m{index + 1}") if index + 1 < length else [])
    closure = load_closure(repo.loader(), "m0.interface.setup")
    assert len(closure) == length
    assert closure[0].setup_id == f"m{length - 1}.interface.setup"


@pytest.mark.parametrize(
    ("requires", "extra"),
    [
        (_req("missing"), {}),
        ([{"interface": "b.interface.other", "version": 1}], {}),
        (_req("b", version=2), {}),
        (_req("b") + _req("b"), {}),
        (_req("a"), {}),
        ("b.interface.setup", {}),
        ([{"interface": "b.interface.setup"}], {}),
        ([{"interface": "b.interface.setup", "version": True}], {}),
        ([{"interface": "b.interface.setup", "version": 1, "extra": 1}], {}),
        ([{"interface": 7, "version": 1}], {}),
        (
            [],
            {
                "bad": {
                    "source_interface": "a.source.main.interface.other",
                    "access": PUBLIC,
                    "setup_requires_setup_of": [],
                }
            },
        ),
    ],
    ids=[
        "missing-module",
        "non-setup-export",
        "version-differs",
        "duplicate",
        "self",
        "not-a-list",
        "no-version",
        "bool-version",
        "extra-key",
        "non-string",
        "key-elsewhere",
    ],
)
def test_graph_defects_fail_closed(
    tmp_path: Path, requires: object, extra: dict[str, object]
) -> None:
    repo = make_repo(tmp_path)
    _setup_module(repo, "b", [])
    _setup_module(repo, "a", requires, **extra)
    with pytest.raises(SetupGraphInvalid) as caught:
        load_closure(repo.loader(), "a.interface.setup")
    assert caught.value.code == "dispatcher.setup_graph_invalid"


@settings(max_examples=25)
@given(st.integers(min_value=2, max_value=6), st.data())
def test_every_cycle_is_refused(size: int, data: st.DataObject) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        repo = make_repo(Path(directory))
        back = data.draw(st.integers(min_value=0, max_value=size - 1), label="cycle back to")
        for index in range(size):
            target = index + 1 if index + 1 < size else back
            _setup_module(repo, f"n{index}", _req(f"n{target}"))
        with pytest.raises(SetupGraphInvalid, match="cycle"):
            load_closure(repo.loader(), "n0.interface.setup")


def test_a_non_setup_root_is_refused(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    _setup_module(repo, "b", [])
    for root in ("b.interface.other", "b.interface.setupx", "not an id", "zz.interface.setup"):
        with pytest.raises(SetupGraphInvalid):
            load_closure(repo.loader(), root)


def test_the_fingerprint_follows_the_setup_blueprint(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    _setup_module(repo, "b", [])
    before = load_closure(repo.loader(), "b.interface.setup")[0].fingerprint
    assert load_closure(repo.loader(), "b.interface.setup")[0].fingerprint == before
    exports = repo.modules["b"]["exports"]
    assert isinstance(exports, dict)
    exports["b.interface.setup"]["access"] = {"allow_all_modules": False, "allowed_callers": ["b"]}
    repo.rewrite("b")
    assert load_closure(repo.loader(), "b.interface.setup")[0].fingerprint != before
