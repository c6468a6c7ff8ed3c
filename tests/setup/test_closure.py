"""The sparse closure: direct lookup, validated, ordered prerequisites first, fingerprinted."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boring_dispatch.errors import SetupFlowRefused, SetupGraphInvalid, SetupRequired
from boring_dispatch.records import RouteRequest
from boring_dispatch.repository.load.config import load_config
from boring_dispatch.repository.load.lookup import ModuleLoader
from boring_dispatch.repository.repository import Repository
from boring_dispatch.setup.closure import load_closure
from boring_dispatch.setup.manager.routes import SetupManager
from kits.blueprints import PUBLIC, RecordingLoader, RepoBuilder, corpus_dir, make_repo
from kits.setup_repo import CALLER, write_setup_repository


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


# A setup step is a Markdown step only when its source interface has no
# ``process_binding`` at all. A malformed one (null, a list, a string...) is a
# broken Python step: run by ``run-python`` (where it fails), never turned into
# a Markdown step that a ``settle`` records ready on the assistant's word.
_BROKEN_BINDINGS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.text(max_size=10),
    st.lists(st.integers(), max_size=2),
)


@pytest.fixture(scope="module")
def managed_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_setup_repository(tmp_path_factory.mktemp("broken-binding") / "repo")


def _break_binding(config: Path, value: object) -> None:
    blueprint = config.parent / "skills" / "base" / "main.yaml"
    data = yaml.safe_load(blueprint.read_text(encoding="utf-8"))
    data["interfaces"]["base.source.main.interface.setup"]["process_binding"] = value
    blueprint.write_text(yaml.safe_dump(data), encoding="utf-8")


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(value=_BROKEN_BINDINGS)
def test_a_malformed_process_binding_is_no_markdown_step(
    managed_config: Path, value: object
) -> None:
    _break_binding(managed_config, value)
    (node,) = load_closure(ModuleLoader(load_config(managed_config)), "base.interface.setup")
    assert node.python


@pytest.mark.parametrize("value", [None, [], "x", 0, False])
def test_a_malformed_python_step_cannot_be_settled_ready(tmp_path: Path, value: object) -> None:
    config = write_setup_repository(tmp_path / "repo")
    _break_binding(config, value)
    manager = SetupManager(Repository.open(config, ledger=str(tmp_path / "ledger.sqlite3")))
    resume = '{"caller":"host","interface":"base.interface.work","version":1}'
    began = manager.call("begin", CALLER, {"setup": "base.interface.setup@1", "resume": resume})
    settle = {"flow": began["flow_id"], "setup": "base.interface.setup@1", "outcome": "ready"}
    with pytest.raises(SetupFlowRefused):
        manager.call("settle", CALLER, settle)
    ran = manager.call("run-python", CALLER, {"flow": began["flow_id"]})
    assert ran["status"] == "failed"
    with pytest.raises(SetupRequired):
        manager.repository.invoke(RouteRequest(CALLER, "base.interface.work"))
