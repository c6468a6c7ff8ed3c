"""SECURITY.md checklist A: blueprint files on disk.

The invariant of every test: nothing outside the repository is ever read.
Outside files hold a valid blueprint with a sentinel (``version: 99`` or a
sentinel interface), so following a link would *succeed* with visible
sentinel data; the tests assert a refusal (or real content) instead, and
``opened_paths`` shows which files the loader touched.
"""

from __future__ import annotations

import ctypes
import os
import socket
import sys
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from boring_dispatch.errors import RouteError
from boring_dispatch.records import SourceRecord
from boring_dispatch.repository.load.config import load_config
from boring_dispatch.repository.load.exports import find_export
from boring_dispatch.repository.load.lookup import ModuleLoader
from kits.blueprints import PUBLIC, RecordingLoader, RepoBuilder, dump, make_repo

SENTINEL_VERSION = 99


def module_blueprint(module_id: str, version: int = 1) -> str:
    return dump(
        {
            "schema_version": 6,
            "node_type": "module",
            "id": module_id,
            "version": version,
            "children": {},
            "namespace_exports": {},
            "sources": {},
            "exports": {},
        }
    )


def source_blueprint(source_id: str, version: int = 1) -> str:
    return dump(
        {
            "schema_version": 6,
            "node_type": "behavioral_source",
            "id": source_id,
            "version": version,
            "gateway": {"path": "gateway.py"},
            "interfaces": {f"{source_id}.interface.run": {"version": 1}},
        }
    )


def error_of(call: Callable[[], object]) -> RouteError:
    with pytest.raises(RouteError) as info:
        call()
    return info.value


@pytest.fixture
def repo(tmp_path: Path) -> RepoBuilder:
    repo = make_repo(tmp_path)
    repo.module("mod", discovery={"mechanism": "skill"})
    repo.module("mod._rtx")
    repo.source("mod._rtx", "main", interfaces={"run": {}})
    repo.export("mod._rtx", "run", source="main", access=PUBLIC)
    return repo


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A tree beside the repository whose blueprints carry the sentinel version."""
    base = tmp_path / "outside"
    for module_id in ("mod", "mod._rtx"):
        path = base.joinpath(*module_id.split(".")) / "blueprint.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(module_blueprint(module_id, SENTINEL_VERSION), encoding="utf-8")
    source = base / "mod" / "_rtx" / "blueprints" / "main.yaml"
    source.parent.mkdir(parents=True)
    source.write_text(source_blueprint("mod._rtx.source.main", SENTINEL_VERSION), encoding="utf-8")
    (base / "mod" / "_rtx" / "gateway.py").write_text("", encoding="utf-8")
    return base


def load_source(repo: RepoBuilder) -> tuple[RecordingLoader, SourceRecord]:
    loader = repo.loader()
    module = loader.load("mod._rtx")
    _, source_id, _ = find_export(module, "mod._rtx.interface.run")
    return loader, loader.load_source(module, source_id)


def set_source_path(repo: RepoBuilder, path: object) -> None:
    sources = repo.modules["mod._rtx"]["sources"]
    assert isinstance(sources, dict)
    sources["mod._rtx.source.main"] = {"blueprint": {"base": "module-root", "path": path}}
    repo.rewrite("mod._rtx")


# --------------------------------------------------------------------------- #
# A1, A2, A5: escapes, absolute and foreign path forms, sibling prefixes


@pytest.mark.parametrize(
    "path",
    [
        "../../../outside/mod/_rtx/blueprints/main.yaml",
        "blueprints/../../../../outside/mod/_rtx/blueprints/main.yaml",
        "OUTSIDE",  # replaced by the absolute sentinel path
        "\\\\host\\share\\main.yaml",
        "C:\\main.yaml",
        "..\\..\\outside\\main.yaml",
    ],
)
def test_escaping_and_absolute_source_paths_are_refused_before_any_open(
    repo: RepoBuilder, outside: Path, path: str
) -> None:
    if path == "OUTSIDE":
        path = str(outside / "mod" / "_rtx" / "blueprints" / "main.yaml")
    set_source_path(repo, path)
    loader = repo.loader()
    module = loader.load("mod._rtx")
    opened = loader.opened_paths
    error = error_of(lambda: loader.load_source(module, "mod._rtx.source.main"))
    assert error.code == "dispatcher.unsafe_blueprint_path"
    assert loader.opened_paths == opened


@pytest.mark.parametrize("path", ["~/main.yaml", "C:main.yaml", "$HOME/main.yaml"])
def test_home_drive_and_variable_forms_are_plain_names_below_the_module(
    repo: RepoBuilder, path: str
) -> None:
    set_source_path(repo, path)
    loader = repo.loader()
    assert error_of(lambda: load_source(repo)).code == "dispatcher.source_not_found"
    module = loader.load("mod._rtx")
    error_of(lambda: loader.load_source(module, "mod._rtx.source.main"))
    assert loader.opened_paths[-1] == module.root / path


def test_a_sibling_directory_sharing_the_root_prefix_is_unreachable(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, roots=("bp",))
    repo.module("mod")
    evil = repo.root / "bp_evil" / "evil" / "blueprint.yaml"
    evil.parent.mkdir(parents=True)
    evil.write_text(module_blueprint("evil", SENTINEL_VERSION), encoding="utf-8")
    (repo.root / "bp-evil" / "evil").mkdir(parents=True)
    (repo.root / "bp-evil" / "evil" / "blueprint.yaml").write_text(module_blueprint("evil"))
    assert error_of(lambda: repo.loader().load("evil")).code == "dispatcher.module_not_found"
    assert error_of(lambda: repo.loader().load("bp_evil")).code == "dispatcher.invalid_module_id"


# --------------------------------------------------------------------------- #
# A3: symlinks at the leaf or any component


def test_a_symlinked_module_directory_is_refused(repo: RepoBuilder, outside: Path) -> None:
    (repo.roots["skills"] / "other").symlink_to(outside / "mod")
    repo.modules["mod"]["children"] = {"_rtx": {}}
    # a top-level module that is a link
    assert error_of(lambda: repo.loader().load("other")).code == (
        "dispatcher.unsafe_blueprint_path"
    )


def test_a_symlinked_child_directory_is_refused(repo: RepoBuilder, outside: Path) -> None:
    rtx = repo.module_dir("mod._rtx")
    rtx.rename(rtx.with_name("_rtx.real"))
    rtx.symlink_to(outside / "mod" / "_rtx")
    assert error_of(lambda: repo.loader().load("mod._rtx")).code == (
        "dispatcher.unsafe_blueprint_path"
    )


@pytest.mark.parametrize("target", ["/etc/passwd", "OUTSIDE"])
def test_a_symlinked_blueprint_file_is_refused(
    repo: RepoBuilder, outside: Path, target: str
) -> None:
    leaf = repo.module_dir("mod._rtx") / "blueprint.yaml"
    leaf.unlink()
    leaf.symlink_to(outside / "mod" / "_rtx" / "blueprint.yaml" if target == "OUTSIDE" else target)
    error = error_of(lambda: repo.loader().load("mod._rtx"))
    assert error.code == "dispatcher.unsafe_blueprint_path"
    assert "root:" not in error.message


def test_a_symlinked_source_blueprint_or_its_directory_is_refused(
    repo: RepoBuilder, outside: Path
) -> None:
    blueprints = repo.module_dir("mod._rtx") / "blueprints"
    (blueprints / "main.yaml").unlink()
    (blueprints / "main.yaml").symlink_to(outside / "mod" / "_rtx" / "blueprints" / "main.yaml")
    assert error_of(lambda: load_source(repo)).code == "dispatcher.unsafe_blueprint_path"
    (blueprints / "main.yaml").unlink()
    blueprints.rmdir()
    blueprints.symlink_to(outside / "mod" / "_rtx" / "blueprints")
    assert error_of(lambda: load_source(repo)).code == "dispatcher.unsafe_blueprint_path"


def test_a_symlinked_gateway_is_refused(repo: RepoBuilder, outside: Path) -> None:
    gateway = repo.module_dir("mod._rtx") / "gateway.py"
    gateway.unlink()
    gateway.symlink_to(outside / "mod" / "_rtx" / "gateway.py")
    assert error_of(lambda: load_source(repo)).code == "dispatcher.unsafe_blueprint_path"


def test_a_configured_root_swapped_for_a_symlink_after_configuration_is_refused(
    repo: RepoBuilder, outside: Path
) -> None:
    config = repo.config()
    skills = repo.roots["skills"]
    skills.rename(skills.with_name("skills.real"))
    skills.symlink_to(outside)
    error = error_of(lambda: ModuleLoader(config).load("mod"))
    assert error.code == "dispatcher.unsafe_blueprint_path"


def test_a_symlink_above_the_repository_is_refused(repo: RepoBuilder, tmp_path: Path) -> None:
    (tmp_path.parent / (tmp_path.name + "-alias")).symlink_to(tmp_path)
    aliased = tmp_path.parent / (tmp_path.name + "-alias") / "repo" / "officina.toml"
    try:
        assert error_of(lambda: load_config(aliased)).code == "dispatcher.runtime_misconfigured"
    finally:
        (tmp_path.parent / (tmp_path.name + "-alias")).unlink()


# --------------------------------------------------------------------------- #
# A4: a directory swapped for a symlink while the loader runs


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange() -> Callable[[Path, Path], bool] | None:
    """``renameat2(RENAME_EXCHANGE)``: swaps two names atomically (Linux, glibc >= 2.28)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return None

    def swap(a: Path, b: Path) -> bool:
        return bool(renameat2(_AT_FDCWD, bytes(a), _AT_FDCWD, bytes(b), _RENAME_EXCHANGE) == 0)

    return swap


def _flip(real: Path, link_target: Path, stop: threading.Event) -> None:
    """Make ``real`` alternate between the real directory and a symlink to ``link_target``."""
    spare = real.with_name(real.name + ".spare")
    spare.symlink_to(link_target)
    swap = _exchange()
    if swap is not None and swap(real, spare) and swap(real, spare):
        while not stop.is_set():  # atomic: always a directory or a symlink, never missing
            swap(real, spare)
        if real.is_symlink():
            swap(real, spare)
        spare.unlink()
        return
    spare.unlink()
    parked = real.with_name(real.name + ".parked")
    while not stop.is_set():
        real.rename(parked)  # now missing
        real.symlink_to(link_target)  # now a symlink to the sentinel tree
        real.unlink()  # missing again
        parked.rename(real)  # real again


@pytest.mark.parametrize("component", ["module directory", "configured root", "source directory"])
def test_a_directory_flipping_to_a_symlink_never_lets_outside_content_in(
    repo: RepoBuilder, outside: Path, component: str
) -> None:
    config = repo.config()
    real, target = {
        "module directory": (repo.module_dir("mod._rtx"), outside / "mod" / "_rtx"),
        "configured root": (repo.roots["skills"], outside),
        "source directory": (
            repo.module_dir("mod._rtx") / "blueprints",
            outside / "mod" / "_rtx" / "blueprints",
        ),
    }[component]
    allowed = {
        "dispatcher.unsafe_blueprint_path",
        "dispatcher.module_not_found",
        "dispatcher.child_unregistered",
        "dispatcher.source_not_found",
    }
    outcomes: Counter[str] = Counter()
    stop = threading.Event()
    flipper = threading.Thread(target=_flip, args=(real, target, stop), daemon=True)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # interleave the two threads finely
    flipper.start()
    try:
        for _ in range(300):
            loader = ModuleLoader(config)
            try:
                module = loader.load("mod._rtx")
                _, source_id, _ = find_export(module, "mod._rtx.interface.run")
                source = loader.load_source(module, source_id)
            except RouteError as error:
                outcomes[error.code] += 1
                continue
            assert module.version == 1
            assert source.version == 1
            assert all(record.version == 1 for record in loader.load_ancestry("mod._rtx"))
            outcomes["ok"] += 1
    finally:
        stop.set()
        flipper.join(timeout=10)
        sys.setswitchinterval(interval)
    assert not flipper.is_alive()
    assert set(outcomes) <= {*allowed, "ok"}, outcomes
    assert sum(outcomes.values()) == 300
    # The tree is whole again: the same loader code reads the real content.
    assert ModuleLoader(config).load("mod._rtx").version == 1


def test_the_flipping_harness_does_expose_outside_content_to_a_naive_reader(
    repo: RepoBuilder, outside: Path
) -> None:
    # Control for the test above: reading by path (following links) sees the sentinel.
    real = repo.module_dir("mod._rtx")
    stop = threading.Event()
    flipper = threading.Thread(target=_flip, args=(real, outside / "mod" / "_rtx", stop))
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    flipper.start()
    seen = False
    try:
        for _ in range(5000):
            try:
                text = (real / "blueprint.yaml").read_text(encoding="utf-8")
            except OSError:
                continue
            if f"version: {SENTINEL_VERSION}" in text:
                seen = True
                break
    finally:
        stop.set()
        flipper.join(timeout=10)
        sys.setswitchinterval(interval)
    assert not flipper.is_alive()
    assert seen


# --------------------------------------------------------------------------- #
# A6: non-regular leaves, without blocking


def _without_blocking(call: Callable[[], object]) -> RouteError:
    errors: list[RouteError] = []

    def attempt() -> None:
        errors.append(error_of(call))

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(timeout=10)
    assert not worker.is_alive(), "the loader blocked"
    return errors[0]


def test_a_fifo_as_module_source_or_gateway_file_is_refused_without_blocking(
    repo: RepoBuilder,
) -> None:
    rtx = repo.module_dir("mod._rtx")
    for leaf in (rtx / "gateway.py", rtx / "blueprints" / "main.yaml", rtx / "blueprint.yaml"):
        text = leaf.read_bytes()
        leaf.unlink()
        os.mkfifo(leaf)
        assert _without_blocking(lambda: load_source(repo)).code == (
            "dispatcher.unsafe_blueprint_path"
        )
        leaf.unlink()
        leaf.write_bytes(text)
    assert load_source(repo)[1].version == 1


def test_a_socket_or_a_directory_named_like_a_blueprint_is_refused(repo: RepoBuilder) -> None:
    leaf = repo.module_dir("mod._rtx") / "blueprint.yaml"
    leaf.unlink()
    leaf.mkdir()
    assert error_of(lambda: repo.loader().load("mod._rtx")).code == (
        "dispatcher.unsafe_blueprint_path"
    )
    leaf.rmdir()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(leaf))
        assert error_of(lambda: repo.loader().load("mod._rtx")).code == (
            "dispatcher.unsafe_blueprint_path"
        )


def test_a_non_regular_top_level_probe_fails_closed_instead_of_being_skipped(
    tmp_path: Path,
) -> None:
    # A FIFO in the first root must not let a module of the same name in a later root win.
    repo = make_repo(tmp_path, roots=("first", "second"))
    repo.module("mod", root="second")
    (repo.roots["first"] / "mod").mkdir()
    os.mkfifo(repo.roots["first"] / "mod" / "blueprint.yaml")
    assert _without_blocking(lambda: repo.loader().load("mod")).code == (
        "dispatcher.unsafe_blueprint_path"
    )


# --------------------------------------------------------------------------- #
# A7, A8: size and permissions


def test_an_oversized_blueprint_is_malformed_and_not_parsed(repo: RepoBuilder) -> None:
    leaf = repo.module_dir("mod._rtx") / "blueprint.yaml"
    with leaf.open("a", encoding="utf-8") as handle:
        handle.write("#" * (1 << 20) + "\n")
    assert error_of(lambda: repo.loader().load("mod._rtx")).code == (
        "dispatcher.blueprint_malformed"
    )


def test_world_writable_blueprints_and_gateways_are_refused(repo: RepoBuilder) -> None:
    rtx = repo.module_dir("mod._rtx")
    for leaf in (rtx / "blueprint.yaml", rtx / "blueprints" / "main.yaml", rtx / "gateway.py"):
        leaf.chmod(0o666)
        assert error_of(lambda: load_source(repo)).code == "dispatcher.unsafe_blueprint_path"
        leaf.chmod(0o644)
    assert load_source(repo)[1].version == 1


def test_group_writable_files_and_hard_links_are_accepted_by_design(repo: RepoBuilder) -> None:
    # Documented limits: umask 002 checkouts and hard-linked trees must keep working.
    leaf = repo.module_dir("mod._rtx") / "blueprint.yaml"
    leaf.chmod(0o664)
    os.link(leaf, leaf.with_name("copy.yaml"))
    assert repo.loader().load("mod._rtx").version == 1


# --------------------------------------------------------------------------- #
# A9: odd names and vanishing files


def test_a_segment_longer_than_name_max_is_not_found_not_a_traceback(repo: RepoBuilder) -> None:
    assert error_of(lambda: repo.loader().load("a" * 300)).code == "dispatcher.module_not_found"


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("blue\x00prints/main.yaml", "dispatcher.unsafe_blueprint_path"),
        ("blue\nprints/main.yaml", "dispatcher.source_not_found"),
        ("bl\u00fceprints/main.yaml", "dispatcher.source_not_found"),
        ("x" * 300 + "/main.yaml", "dispatcher.source_not_found"),
    ],
)
def test_odd_source_path_names_give_typed_errors(repo: RepoBuilder, path: str, code: str) -> None:
    sources = repo.modules["mod._rtx"]["sources"]
    assert isinstance(sources, dict)
    sources["mod._rtx.source.main"] = {"blueprint": {"base": "module-root", "path": path}}
    repo.rewrite("mod._rtx")
    assert error_of(lambda: load_source(repo)).code == code


def test_a_blueprint_that_vanishes_between_requests_is_not_found(repo: RepoBuilder) -> None:
    config = repo.config()
    assert ModuleLoader(config).load("mod._rtx").version == 1
    (repo.module_dir("mod._rtx") / "blueprint.yaml").unlink()
    assert error_of(lambda: ModuleLoader(config).load("mod._rtx")).code == (
        "dispatcher.module_not_found"
    )


def test_no_descriptor_is_left_open_after_refusals(repo: RepoBuilder, outside: Path) -> None:
    config = repo.config()
    leaf = repo.module_dir("mod._rtx") / "blueprint.yaml"
    leaf.unlink()
    leaf.symlink_to(outside / "mod" / "_rtx" / "blueprint.yaml")
    before = len(list(Path("/proc/self/fd").iterdir()))
    for _ in range(100):
        error_of(lambda: ModuleLoader(config).load("mod._rtx"))
        ModuleLoader(config).load("mod")
    assert len(list(Path("/proc/self/fd").iterdir())) == before
