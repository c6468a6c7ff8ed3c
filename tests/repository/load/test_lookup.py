"""Direct lookup: root selection, registration before reading, per-module and source checks.

Every error code of BLUEPRINTS-V6 sections 2 and 5.1 steps 2-10 has a test
here; path attacks are in ``tests/security/test_blueprint_files.py``.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import event, given

from boring_dispatch.errors import RouteError
from boring_dispatch.records import ModuleRecord, SourceRecord
from boring_dispatch.repository.load.config import load_config
from boring_dispatch.repository.load.exports import (
    find_export,
    require_host_caller,
    select_interface,
)
from boring_dispatch.repository.load.lookup import ModuleLoader
from kits.blueprints import (
    DROP,
    RecordingLoader,
    RepoBuilder,
    corpus_dir,
    dump,
    make_repo,
    reference_load,
)
from kits.strategies import blueprint_data_mutations

CORPUS = corpus_dir()
SKILL = {"mechanism": "skill"}


def code_of(call: object, *args: object, **kwargs: object) -> RouteError:
    assert callable(call)
    with pytest.raises(RouteError) as info:
        call(*args, **kwargs)
    return info.value


@pytest.fixture
def repo(tmp_path: Path) -> RepoBuilder:
    """``alpha`` (a skill) > ``alpha._rtx`` > ``alpha._rtx.leaf`` with one source and export."""
    repo = make_repo(tmp_path, roots=("skills", "extra"))
    repo.module("alpha", discovery=SKILL)
    repo.module("alpha._rtx")
    repo.module("alpha._rtx.leaf")
    repo.source("alpha._rtx", "main", interfaces={"run": {"version": 3}})
    repo.export("alpha._rtx", "run", source="main")
    return repo


def rtx_source(repo: RepoBuilder) -> tuple[RecordingLoader, ModuleRecord, SourceRecord]:
    loader = repo.loader()
    module = loader.load("alpha._rtx")
    _, source_id, _ = find_export(module, "alpha._rtx.interface.run")
    return loader, module, loader.load_source(module, source_id)


# --------------------------------------------------------------------------- #
# Ancestry and root selection


def test_load_ancestry_returns_outermost_first_with_lexical_roots(repo: RepoBuilder) -> None:
    records = repo.loader().load_ancestry("alpha._rtx.leaf")
    skills = repo.roots["skills"]
    assert [r.module_id for r in records] == ["alpha", "alpha._rtx", "alpha._rtx.leaf"]
    assert [r.root for r in records] == [
        skills / "alpha",
        skills / "alpha" / "_rtx",
        skills / "alpha" / "_rtx" / "leaf",
    ]
    assert {r.configured_root for r in records} == {skills}
    assert records[0].version == 1
    assert records[0].data["discovery"] == SKILL


def test_load_is_the_last_record_of_the_ancestry(repo: RepoBuilder) -> None:
    loader = repo.loader()
    assert loader.load("alpha._rtx") == loader.load_ancestry("alpha._rtx")[-1]


def test_only_the_top_level_is_probed_in_every_root(repo: RepoBuilder) -> None:
    loader = repo.loader()
    loader.load_ancestry("alpha._rtx.leaf")
    skills, extra = repo.roots["skills"], repo.roots["extra"]
    assert loader.opened_paths == (
        skills / "alpha" / "blueprint.yaml",
        extra / "alpha" / "blueprint.yaml",
        skills / "alpha" / "_rtx" / "blueprint.yaml",
        skills / "alpha" / "_rtx" / "leaf" / "blueprint.yaml",
    )


def test_a_loader_reads_each_blueprint_once(repo: RepoBuilder) -> None:
    loader = repo.loader()
    loader.load_ancestry("alpha._rtx.leaf")
    opened = loader.opened_paths
    loader.load_ancestry("alpha._rtx")
    loader.load("alpha")
    assert loader.opened_paths == opened


def test_a_module_in_a_later_root_is_found_and_its_descendants_stay_there(
    repo: RepoBuilder,
) -> None:
    repo.module("beta", root="extra")
    repo.module("beta.child")
    record = repo.loader().load("beta.child")
    assert record.root == repo.roots["extra"] / "beta" / "child"
    assert record.configured_root == repo.roots["extra"]


def test_descendants_are_never_looked_up_in_another_root(repo: RepoBuilder) -> None:
    # alpha registers "ghost"; only extra/alpha/ghost exists. It must not be found.
    repo.modules["alpha"]["children"] = {"_rtx": {}, "ghost": {}}
    repo.rewrite("alpha")
    repo.write("alpha.ghost", yaml.safe_dump({"id": "alpha.ghost"}), root="extra")
    loader = repo.loader()
    error = code_of(loader.load, "alpha.ghost")
    assert error.code == "dispatcher.module_not_found"
    assert error.target_module_id == "alpha.ghost"
    assert repo.roots["extra"] / "alpha" / "ghost" / "blueprint.yaml" not in loader.opened_paths


def test_a_top_level_module_in_two_roots_is_ambiguous(repo: RepoBuilder) -> None:
    repo.write("alpha", (repo.module_dir("alpha") / "blueprint.yaml").read_text(), root="extra")
    error = code_of(repo.loader().load, "alpha")
    assert error.code == "dispatcher.module_ambiguous"
    assert error.target_module_id == "alpha"


def test_an_unknown_top_level_module_is_not_found(repo: RepoBuilder) -> None:
    error = code_of(repo.loader().load, "nowhere.child")
    assert error.code == "dispatcher.module_not_found"
    assert error.target_module_id == "nowhere"


@pytest.mark.parametrize(
    "module_id", ["", "Alpha", "_rtx", "alpha..rtx", "alpha.", "alpha.interface", "a/b", "a b"]
)
def test_invalid_module_ids_are_refused_before_any_file_is_opened(
    repo: RepoBuilder, module_id: str
) -> None:
    loader = repo.loader()
    assert code_of(loader.load, module_id).code == "dispatcher.invalid_module_id"
    assert loader.opened_paths == ()


def test_an_unregistered_child_is_refused_before_its_file_is_read(repo: RepoBuilder) -> None:
    repo.write("alpha.stray", "[unterminated")
    loader = repo.loader()
    error = code_of(loader.load, "alpha.stray")
    assert error.code == "dispatcher.child_unregistered"
    assert error.target_module_id == "alpha.stray"
    assert repo.module_dir("alpha.stray") / "blueprint.yaml" not in loader.opened_paths


def test_a_registered_child_without_a_blueprint_is_not_found(repo: RepoBuilder) -> None:
    repo.modules["alpha"]["children"] = {"_rtx": {}, "gone": {}}
    repo.rewrite("alpha")
    error = code_of(repo.loader().load, "alpha.gone")
    assert error.code == "dispatcher.module_not_found"
    assert error.target_module_id == "alpha.gone"


# --------------------------------------------------------------------------- #
# Per-module checks (section 2.5)


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"schema_version": 5}, "dispatcher.blueprint_schema_mismatch"),
        ({"schema_version": "6"}, "dispatcher.blueprint_schema_mismatch"),
        ({"schema_version": 6.0}, "dispatcher.blueprint_schema_mismatch"),
        ({"schema_version": DROP}, "dispatcher.blueprint_schema_mismatch"),
        ({"node_type": "behavioral_source"}, "dispatcher.blueprint_schema_mismatch"),
        ({"id": "alpha._rtx.other"}, "dispatcher.blueprint_identity_mismatch"),
        ({"id": DROP}, "dispatcher.blueprint_identity_mismatch"),
        ({"version": True}, "dispatcher.blueprint_malformed"),
        ({"version": 0}, "dispatcher.blueprint_malformed"),
        ({"version": -1}, "dispatcher.blueprint_malformed"),
        ({"version": "1"}, "dispatcher.blueprint_malformed"),
        ({"version": 1.5}, "dispatcher.blueprint_malformed"),
        ({"version": DROP}, "dispatcher.blueprint_malformed"),
        ({"children": DROP}, "dispatcher.blueprint_malformed"),
        ({"children": []}, "dispatcher.blueprint_malformed"),
        ({"namespace_exports": DROP}, "dispatcher.blueprint_malformed"),
        ({"namespace_exports": None}, "dispatcher.blueprint_malformed"),
        ({"sources": []}, "dispatcher.blueprint_malformed"),
        ({"exports": "x"}, "dispatcher.blueprint_malformed"),
        ({"children": {"leaf": {}, "Bad": {}}}, "dispatcher.blueprint_malformed"),
        ({"children": {"leaf": {}, "interface": {}}}, "dispatcher.blueprint_malformed"),
        ({"children": {"leaf": {}, "x-rtx": {}}}, "dispatcher.blueprint_malformed"),
        ({"children": {"leaf": {"a": 1}}}, "dispatcher.blueprint_malformed"),
        ({"children": {"leaf": None}}, "dispatcher.blueprint_malformed"),
        ({"children": {"leaf": []}}, "dispatcher.blueprint_malformed"),
    ],
)
def test_module_blueprint_checks(repo: RepoBuilder, fields: dict[str, object], code: str) -> None:
    repo.modules["alpha._rtx"].update(fields)
    repo.rewrite("alpha._rtx")
    error = code_of(repo.loader().load, "alpha._rtx.leaf")
    assert error.code == code
    assert error.target_module_id == "alpha._rtx"


@pytest.mark.parametrize("text", ["[unterminated", "- a list\n", "", "a: 1\na: 2\n", "k: !x y\n"])
def test_unparsable_module_blueprints_are_malformed(repo: RepoBuilder, text: str) -> None:
    repo.write("alpha._rtx", text)
    error = code_of(repo.loader().load, "alpha._rtx")
    assert error.code == "dispatcher.blueprint_malformed"
    assert error.target_module_id == "alpha._rtx"


def test_fields_the_dispatcher_does_not_read_are_not_checked(repo: RepoBuilder) -> None:
    repo.modules["alpha"].update(gateway=5, content="x", authority=[], maturity=None)
    repo.rewrite("alpha")
    assert repo.loader().load("alpha").data["gateway"] == 5


def test_an_unrelated_malformed_module_is_never_read(repo: RepoBuilder) -> None:
    repo.write("broken", "[unterminated")
    loader = repo.loader()
    loader.load_ancestry("alpha._rtx.leaf")
    assert all("broken" not in path.parts for path in loader.opened_paths)


# --------------------------------------------------------------------------- #
# Host caller (section 2.6)


def test_a_top_level_skill_is_a_valid_host_caller(repo: RepoBuilder) -> None:
    require_host_caller(repo.loader().load("alpha"))


@pytest.mark.parametrize(
    "discovery", [DROP, None, "skill", {}, {"mechanism": "Skill"}, {"mechanism": "reasoning"}]
)
def test_a_top_level_module_without_skill_discovery_is_not_a_host_caller(
    repo: RepoBuilder, discovery: object
) -> None:
    repo.modules["alpha"]["discovery"] = discovery
    repo.rewrite("alpha")
    error = code_of(require_host_caller, repo.loader().load("alpha"))
    assert error.code == "dispatcher.host_caller_invalid"
    assert error.caller_module_id == "alpha"


def test_a_child_is_never_a_host_caller_even_with_skill_discovery(repo: RepoBuilder) -> None:
    repo.modules["alpha._rtx"]["discovery"] = SKILL
    repo.rewrite("alpha._rtx")
    error = code_of(require_host_caller, repo.loader().load("alpha._rtx"))
    assert error.code == "dispatcher.host_caller_invalid"


# --------------------------------------------------------------------------- #
# Export and source (steps 5-8)


def test_find_export_returns_the_export_and_its_source_ids(repo: RepoBuilder) -> None:
    module = repo.loader().load("alpha._rtx")
    export, source_id, source_interface = find_export(module, "alpha._rtx.interface.run")
    assert export["source_interface"] == "alpha._rtx.source.main.interface.run"
    assert source_id == "alpha._rtx.source.main"
    assert source_interface == "alpha._rtx.source.main.interface.run"


@pytest.mark.parametrize(
    ("target", "export"),
    [
        ("alpha._rtx.interface.missing", None),
        ("alpha._rtx.interface.run", "not a mapping"),
        ("alpha._rtx.interface.run", ["a"]),
        ("alpha.interface.run", None),
    ],
)
def test_a_missing_export_is_interface_not_found(
    repo: RepoBuilder, target: str, export: object
) -> None:
    if export is not None:
        repo.modules["alpha._rtx"]["exports"] = {"alpha._rtx.interface.run": export}
        repo.rewrite("alpha._rtx")
    error = code_of(find_export, repo.loader().load("alpha._rtx"), target)
    assert error.code == "dispatcher.interface_not_found"
    assert error.interface_id == target


def test_an_export_key_of_another_module_is_not_found_in_this_one(repo: RepoBuilder) -> None:
    exports = repo.modules["alpha._rtx"]["exports"]
    assert isinstance(exports, dict)
    exports["alpha.interface.run"] = exports["alpha._rtx.interface.run"]
    repo.rewrite("alpha._rtx")
    error = code_of(find_export, repo.loader().load("alpha._rtx"), "alpha.interface.run")
    assert error.code == "dispatcher.interface_not_found"


@pytest.mark.parametrize(
    "source_interface",
    [
        DROP,
        None,
        3,
        "alpha._rtx.interface.run",
        "alpha._rtx.source.main",
        "alpha.source.main.interface.run",
        "alpha._rtx.leaf.source.main.interface.run",
        "other.source.main.interface.run",
        "alpha._rtx.source.Main.interface.run",
        "alpha._rtx.source.main.interface.",
        "alpha._rtx.source.a.source.b.interface.run",
    ],
)
def test_a_source_interface_outside_the_terminal_module_is_invalid(
    repo: RepoBuilder, source_interface: object
) -> None:
    exports = repo.modules["alpha._rtx"]["exports"]
    assert isinstance(exports, dict)
    exports["alpha._rtx.interface.run"]["source_interface"] = source_interface
    repo.rewrite("alpha._rtx")
    error = code_of(find_export, repo.loader().load("alpha._rtx"), "alpha._rtx.interface.run")
    assert error.code == "dispatcher.source_interface_invalid"


def test_load_source_returns_the_checked_source(repo: RepoBuilder) -> None:
    loader, module, source = rtx_source(repo)
    assert source.source_id == "alpha._rtx.source.main"
    assert source.module is module
    assert source.version == 1
    assert source.gateway_path == "gateway.py"
    assert loader.opened_paths[-2:] == (
        module.root / "blueprints" / "main.yaml",
        module.root / "gateway.py",
    )
    assert loader.load_source(module, source.source_id) is source


@pytest.mark.parametrize(
    "locator",
    [
        DROP,
        None,
        "blueprints/main.yaml",
        {},
        {"blueprint": "blueprints/main.yaml"},
        {"blueprint": {"base": "repository-root", "path": "blueprints/main.yaml"}},
        {"blueprint": {"path": "blueprints/main.yaml"}},
        {"blueprint": {"base": "Module-Root", "path": "blueprints/main.yaml"}},
    ],
)
def test_bad_source_locators_are_invalid(repo: RepoBuilder, locator: object) -> None:
    sources = repo.modules["alpha._rtx"]["sources"]
    assert isinstance(sources, dict)
    sources["alpha._rtx.source.main"] = locator
    repo.rewrite("alpha._rtx")
    error = code_of(rtx_source, repo)
    assert error.code == "dispatcher.source_locator_invalid"
    assert error.target_module_id == "alpha._rtx"


def test_a_source_of_another_module_cannot_be_loaded_through_this_one(repo: RepoBuilder) -> None:
    loader = repo.loader()
    module = loader.load("alpha._rtx")
    sources = module.data["sources"]
    assert isinstance(sources, dict)
    error = code_of(loader.load_source, loader.load("alpha"), "alpha._rtx.source.main")
    assert error.code == "dispatcher.source_locator_invalid"


@pytest.mark.parametrize(
    "path", ["", "/etc/passwd", "../main.yaml", "blueprints/../x.yaml", "a\\b.yaml", 3, None]
)
def test_unsafe_source_blueprint_paths_are_refused(repo: RepoBuilder, path: object) -> None:
    sources = repo.modules["alpha._rtx"]["sources"]
    assert isinstance(sources, dict)
    sources["alpha._rtx.source.main"] = {"blueprint": {"base": "module-root", "path": path}}
    repo.rewrite("alpha._rtx")
    assert code_of(rtx_source, repo).code == "dispatcher.unsafe_blueprint_path"


@pytest.mark.parametrize("path", ["blueprints/nope.yaml", "nodir/main.yaml"])
def test_a_missing_source_blueprint_is_source_not_found(repo: RepoBuilder, path: str) -> None:
    sources = repo.modules["alpha._rtx"]["sources"]
    assert isinstance(sources, dict)
    sources["alpha._rtx.source.main"] = {"blueprint": {"base": "module-root", "path": path}}
    repo.rewrite("alpha._rtx")
    assert code_of(rtx_source, repo).code == "dispatcher.source_not_found"


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"schema_version": 5}, "dispatcher.blueprint_schema_mismatch"),
        ({"schema_version": True}, "dispatcher.blueprint_schema_mismatch"),
        ({"node_type": "module"}, "dispatcher.blueprint_schema_mismatch"),
        ({"node_type": DROP}, "dispatcher.blueprint_schema_mismatch"),
        ({"id": "alpha._rtx.source.other"}, "dispatcher.blueprint_identity_mismatch"),
        ({"version": 0}, "dispatcher.blueprint_malformed"),
        ({"version": -1}, "dispatcher.blueprint_malformed"),
        ({"version": True}, "dispatcher.blueprint_malformed"),
        ({"version": DROP}, "dispatcher.blueprint_malformed"),
        ({"gateway": DROP}, "dispatcher.blueprint_malformed"),
        ({"gateway": "gateway.py"}, "dispatcher.blueprint_malformed"),
        ({"gateway": {"language": "Python"}}, "dispatcher.unsafe_blueprint_path"),
        ({"gateway": {"path": "../gateway.py"}}, "dispatcher.unsafe_blueprint_path"),
        ({"gateway": {"path": "/bin/sh"}}, "dispatcher.unsafe_blueprint_path"),
        ({"gateway": {"path": "a//gateway.py"}}, "dispatcher.unsafe_blueprint_path"),
        ({"gateway": {"path": "missing.py"}}, "dispatcher.source_not_found"),
        ({"gateway": {"path": "blueprints"}}, "dispatcher.unsafe_blueprint_path"),
    ],
)
def test_source_blueprint_checks(repo: RepoBuilder, fields: dict[str, Any], code: str) -> None:
    repo.source("alpha._rtx", "main", interfaces={"run": {"version": 3}}, **fields)
    error = code_of(rtx_source, repo)
    assert error.code == code
    assert error.target_module_id == "alpha._rtx"


@pytest.mark.parametrize("text", ["[unterminated", "- a\n", "a: &x 1\n", "a: 1\na: 2\n"])
def test_unparsable_source_blueprints_are_malformed(repo: RepoBuilder, text: str) -> None:
    (repo.module_dir("alpha._rtx") / "blueprints" / "main.yaml").write_text(text)
    assert code_of(rtx_source, repo).code == "dispatcher.blueprint_malformed"


# --------------------------------------------------------------------------- #
# Interface and version (steps 9-10)


def test_select_interface_returns_the_interface_and_its_version(repo: RepoBuilder) -> None:
    _, _, source = rtx_source(repo)
    sid = "alpha._rtx.source.main.interface.run"
    interface, version = select_interface(source, sid, None)
    assert (interface["version"], version) == (3, 3)
    assert select_interface(source, sid, 3)[1] == 3


@pytest.mark.parametrize(
    "requested",
    [4, 2, 0, -1, True, "3", 3.0, 10**5000, [3]],
    ids=["4", "2", "0", "-1", "True", "str", "float", "huge", "list"],
)
def test_a_wrong_pin_is_always_a_version_mismatch(repo: RepoBuilder, requested: object) -> None:
    _, _, source = rtx_source(repo)
    error = code_of(
        select_interface,
        source,
        "alpha._rtx.source.main.interface.run",
        requested,
        export_id="alpha._rtx.interface.run",
    )
    assert error.code == "dispatcher.interface_version_mismatch"
    assert error.interface_id == "alpha._rtx.interface.run"
    assert error.message.startswith("version mismatch for alpha._rtx.interface.run: requested ")
    assert len(error.message) < 200


def test_a_pin_of_true_for_version_one_is_a_mismatch(repo: RepoBuilder) -> None:
    repo.source("alpha._rtx", "main", interfaces={"run": {"version": 1}})
    _, _, source = rtx_source(repo)
    error = code_of(
        select_interface, source, "alpha._rtx.source.main.interface.run", requested=True
    )
    assert error.code == "dispatcher.interface_version_mismatch"


@pytest.mark.parametrize(
    "interfaces",
    [
        {"other": {"version": 1}},
        {"run": {"version": 0}},
        {"run": {"version": -1}},
        {"run": {"version": True}},
        {"run": {"version": "3"}},
        {"run": {"version": DROP}},
    ],
)
def test_a_missing_or_unversioned_source_interface_is_invalid(
    repo: RepoBuilder, interfaces: dict[str, dict[str, object]]
) -> None:
    repo.source("alpha._rtx", "main", interfaces=interfaces)
    _, _, source = rtx_source(repo)
    error = code_of(select_interface, source, "alpha._rtx.source.main.interface.run", None)
    assert error.code == "dispatcher.source_interface_invalid"


@pytest.mark.parametrize("interfaces", [DROP, [], "x", {"alpha._rtx.source.main.interface.run": 3}])
def test_interfaces_that_are_not_a_mapping_of_mappings_are_invalid(
    repo: RepoBuilder, interfaces: object
) -> None:
    path = repo.source("alpha._rtx", "main", interfaces=DROP)
    if interfaces is not DROP:  # written as given, not keyed by short names
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        path.write_text(dump({**data, "interfaces": interfaces}), encoding="utf-8")
    _, _, source = rtx_source(repo)
    error = code_of(select_interface, source, "alpha._rtx.source.main.interface.run", None)
    assert error.code == "dispatcher.source_interface_invalid"


def test_an_interface_of_another_source_is_invalid(repo: RepoBuilder) -> None:
    _, _, source = rtx_source(repo)
    error = code_of(select_interface, source, "alpha._rtx.source.other.interface.run", None)
    assert error.code == "dispatcher.source_interface_invalid"


# --------------------------------------------------------------------------- #
# No discovery: repository size does not change what is opened


def resolve_all(config_path: Path) -> RecordingLoader:
    loader = RecordingLoader(load_config(config_path))
    loader.load_ancestry("alpha")
    terminal = loader.load_ancestry("alpha._rtx.leaf")[-2]
    _, source_id, source_interface = find_export(terminal, "alpha._rtx.interface.run")
    source = loader.load_source(terminal, source_id)
    select_interface(source, source_interface, 3)
    return loader


def test_five_hundred_unrelated_modules_do_not_change_the_opened_files(repo: RepoBuilder) -> None:
    before = resolve_all(repo.config_path).opened_paths
    for index in range(500):
        root = repo.roots["skills" if index % 2 else "extra"]
        (root / f"unrelated-{index}").mkdir()
        (root / f"unrelated-{index}" / "blueprint.yaml").write_text("[garbage")
        (repo.module_dir("alpha") / f"stray-{index}").mkdir()
    after = resolve_all(repo.config_path).opened_paths
    assert after == before
    assert len(before) == len(set(before))


def test_loading_never_lists_walks_or_globs(
    repo: RepoBuilder, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = resolve_all(repo.config_path).opened_paths

    def forbidden(*_args: object, **_kwargs: object) -> object:
        raise AssertionError("directory enumeration on the routing path")

    for owner, name in [
        (os, "listdir"),
        (os, "scandir"),
        (os, "walk"),
        (os, "fwalk"),
        (Path, "iterdir"),
        (Path, "glob"),
        (Path, "rglob"),
        (glob, "glob"),
        (glob, "iglob"),
    ]:
        monkeypatch.setattr(owner, name, forbidden)
    assert resolve_all(repo.config_path).opened_paths == expected


# --------------------------------------------------------------------------- #
# The real corpus


def corpus_module_ids() -> list[str]:
    # Enumerating is allowed here, in the test; the loader never does.
    config = load_config(CORPUS / "officina.toml")
    found: list[str] = []
    for root in config.module_roots:
        paths = sorted(root.rglob("blueprint.yaml"))
        found.extend(".".join(path.parent.relative_to(root).parts) for path in paths)
    return found


def test_every_corpus_module_and_every_exported_source_interface_loads() -> None:
    config = load_config(CORPUS / "officina.toml")
    module_ids = corpus_module_ids()
    exports = 0
    for module_id in module_ids:
        loader = ModuleLoader(config)
        module = loader.load(module_id)
        export_ids = module.data["exports"]
        assert isinstance(export_ids, dict)
        for export_id in export_ids:
            _, source_id, source_interface = find_export(module, export_id)
            source = loader.load_source(module, source_id)
            _, version = select_interface(source, source_interface, None)
            assert version >= 1
            exports += 1
    assert len(module_ids) == 74
    assert exports == 195


def test_a_corpus_route_opens_only_its_own_blueprints() -> None:
    loader = RecordingLoader(load_config(CORPUS / "officina.toml"))
    loader.load_ancestry("daily-plan")
    terminal = loader.load_ancestry("list-manager._rtx")[-1]
    _, source_id, source_interface = find_export(terminal, "list-manager._rtx.interface.read-list")
    select_interface(loader.load_source(terminal, source_id), source_interface, 1)
    skills, officina = CORPUS / "skills", CORPUS / "src" / "officina"
    assert loader.opened_paths == (
        skills / "daily-plan" / "blueprint.yaml",
        officina / "daily-plan" / "blueprint.yaml",
        skills / "list-manager" / "blueprint.yaml",
        officina / "list-manager" / "blueprint.yaml",
        skills / "list-manager" / "_rtx" / "blueprint.yaml",
        skills / "list-manager" / "_rtx" / "blueprints" / "rtx-yaml-store.yaml",
        skills / "list-manager" / "_rtx" / "_yaml_store.py",
    )


def _corpus_text(module_id: str) -> str:
    path = CORPUS / "skills" / module_id.replace(".", "/") / "blueprint.yaml"
    return path.read_text(encoding="utf-8")


LIST_MANAGER = reference_load(_corpus_text("list-manager"))
LIST_MANAGER_RTX = _corpus_text("list-manager._rtx")


@given(blueprint_data_mutations(LIST_MANAGER if isinstance(LIST_MANAGER, dict) else {}))
def test_mutated_real_module_data_raises_only_route_errors(
    tmp_path_factory: pytest.TempPathFactory, data: dict[str, object]
) -> None:
    repo = make_repo(tmp_path_factory.mktemp("mutated"))
    repo.write("list-manager", dump(data))
    repo.write("list-manager._rtx", LIST_MANAGER_RTX)
    try:
        records = repo.loader().load_ancestry("list-manager._rtx")
    except RouteError as error:
        event(error.code)
        return
    event("loaded")
    assert records[0].data == data
