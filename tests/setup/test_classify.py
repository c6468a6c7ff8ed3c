"""Classification: the governing setup from the loaded ancestry, the exact manager bypass."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boring_dispatch.errors import SetupGraphInvalid
from boring_dispatch.records import RouteRequest
from boring_dispatch.repository.load.config import load_config
from boring_dispatch.repository.repository import Repository
from boring_dispatch.setup.classify import classify, governing_setup
from boring_dispatch.setup.names import MANAGER_MODULE
from kits.blueprints import RecordingLoader, corpus_dir
from kits.setup_repo import CALLER, write_setup_repository

CORPUS = corpus_dir() / "officina.toml"

MANAGED = {
    "list-manager": "list-manager.interface.setup",
    "list-manager._rtx": "list-manager.interface.setup",
    "cloud-files": "cloud-files.interface.setup",
    "cloud-files._rtx": "cloud-files.interface.setup",
    "g-calendar": "g-calendar.interface.setup",
    "g-calendar._rtx": "g-calendar.interface.setup",
    "connect-google._rtx": "connect-google.interface.setup",
}
UNMANAGED = ("get-weather", "daily-plan", "daily-plan._rtx", "ci-debug._rtx")


def _loader() -> RecordingLoader:
    return RecordingLoader(load_config(CORPUS))


@pytest.mark.parametrize(("module_id", "setup"), sorted(MANAGED.items()))
def test_corpus_managed_modules_are_governed_by_their_nearest_setup(
    module_id: str, setup: str
) -> None:
    loader = _loader()
    ancestry = loader.load_ancestry(module_id)
    read = loader.opened_paths
    assert governing_setup(ancestry) == setup
    found = classify("daily-plan", f"{module_id}.interface.anything", ancestry)
    assert (found.kind, found.setup) == ("managed", setup)
    assert loader.opened_paths == read  # classification reads nothing


@pytest.mark.parametrize("module_id", UNMANAGED)
def test_corpus_other_modules_are_unmanaged(module_id: str) -> None:
    ancestry = _loader().load_ancestry(module_id)
    assert classify("daily-plan", f"{module_id}.interface.x", ancestry).kind == "unmanaged"


def test_a_setup_or_teardown_export_is_intercepted() -> None:
    ancestry = _loader().load_ancestry("connect-google")
    setup = classify("daily-plan", "connect-google.interface.setup", ancestry)
    assert (setup.kind, setup.setup) == ("setup_export", "connect-google.interface.setup")
    teardown = classify("daily-plan", "connect-google.interface.teardown", ancestry)
    assert teardown.kind == "teardown_export"
    # The same names in an unmanaged module are ordinary interfaces.
    plain = _loader().load_ancestry("get-weather")
    assert classify("x", "get-weather.interface.setup", plain).kind == "unmanaged"


def test_the_exact_manager_caller_bypasses() -> None:
    ancestry = _loader().load_ancestry("list-manager._rtx")
    target = "list-manager._rtx.interface.read-list"
    assert classify(MANAGER_MODULE, target, ancestry).kind == "bypass"


@given(
    st.one_of(
        st.text(max_size=40),
        st.sampled_from(
            [
                MANAGER_MODULE + "x",
                MANAGER_MODULE + " ",
                " " + MANAGER_MODULE,
                MANAGER_MODULE.upper(),
                "setup-interface-manager",
                "setup-interface-manager._rtx.child",
                "setup-interface-managers._rtx",
                MANAGER_MODULE.replace("-", "\u2010"),
            ]
        ),
    ).filter(lambda text: text != MANAGER_MODULE)
)
def test_look_alike_callers_never_bypass(caller: str) -> None:
    ancestry = _LIST_MANAGER
    found = classify(caller, "list-manager._rtx.interface.read-list", ancestry)
    assert found.kind == "managed"


_LIST_MANAGER = _loader().load_ancestry("list-manager._rtx")


def test_corpus_path_is_absolute() -> None:
    assert Path(CORPUS).is_absolute()


# A setup export whose value is not a mapping is a malformed setup export, not
# an absent one: the targets it would govern fail closed, they do not become
# unmanaged (a YAML slip such as an empty ``app.interface.setup:`` would
# otherwise switch the gate off for the whole skill).
_NOT_A_MAPPING = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.lists(st.text(max_size=5), max_size=3),
    st.lists(st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=2), max_size=2),
)


@pytest.fixture(scope="module")
def setup_repo(tmp_path_factory: pytest.TempPathFactory) -> Repository:
    directory = tmp_path_factory.mktemp("malformed-setup")
    config = write_setup_repository(directory / "repo")
    return Repository.open(config, ledger=str(directory / "ledger.sqlite3"))


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    value=_NOT_A_MAPPING, target=st.sampled_from(["app.interface.read", "app._rtx.interface.inner"])
)
def test_a_setup_export_that_is_not_a_mapping_fails_closed(
    setup_repo: Repository, value: object, target: str
) -> None:
    blueprint = setup_repo.config_path.parent / "skills" / "app" / "blueprint.yaml"
    data = yaml.safe_load(blueprint.read_text(encoding="utf-8"))
    data["exports"]["app.interface.setup"] = value
    blueprint.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(SetupGraphInvalid):
        setup_repo.invoke(RouteRequest(CALLER, target))
