"""No repository data survives between requests (issue 15): nothing is cached on the routing path.

Two families. (1) After a request, resolved or refused, no loaded record,
parsed blueprint, loader or descriptor tree of it is alive anywhere in the
process (a scan of every object the garbage collector tracks), and no file
descriptor is left open. (2) A blueprint edited on disk between two
requests of one warm :class:`Repository` is seen by the second request, at
every level: the configuration, an ancestor, the terminal module and the
source.
"""

from __future__ import annotations

import gc
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from boring_dispatch import Repository, RouteRequest
from boring_dispatch.errors import RouteError
from boring_dispatch.records import ModuleRecord, Route, SourceRecord
from boring_dispatch.repository.load.files import DirectoryTree
from boring_dispatch.repository.load.lookup import ModuleLoader
from boring_dispatch.repository.pipeline import Target
from kits.blueprints import RepoBuilder, make_repo

REQUEST = RouteRequest("host", "host.lib.interface.run")
_ANY_ARGV = {"min_positionals": 0, "allow_extra_positionals": True}


def build(tmp_path: Path, marker: str) -> RepoBuilder:
    """``host`` (a skill) calls ``host.lib.interface.run``; every blueprint carries ``marker``."""
    repo = make_repo(tmp_path)
    repo.module("host", discovery={"mechanism": "skill"}, description=marker)
    repo.module("host.lib", description=marker)
    binding = {"kind": "process", "entry": "Run", "args_prefix": ["a"], "patterns": [_ANY_ARGV]}
    repo.source(
        "host.lib",
        "main",
        description=marker,
        interfaces={"run": {"process_binding": binding}},
    )
    repo.export("host.lib", "run", source="main")
    return repo


def survivors(repo: RepoBuilder, marker: str) -> list[object]:
    """Every live object holding data read from ``repo``: records, parsed blueprints, loaders."""
    gc.collect()
    written = {id(document) for document in repo.modules.values()}  # the builder's own dicts
    return [
        item for item in gc.get_objects() if _from(repo, item, marker) and id(item) not in written
    ]


def _from(repo: RepoBuilder, item: object, marker: str) -> bool:
    if isinstance(item, ModuleRecord):
        return repo.root in item.root.parents
    if isinstance(item, SourceRecord):
        return repo.root in item.module.root.parents
    if isinstance(item, DirectoryTree):
        return item.base == repo.root
    if type(item) is dict:
        return bool(item.get("description") == marker)
    return isinstance(item, (Target, ModuleLoader))


def open_descriptors() -> int:
    return len(list(Path("/proc/self/fd").iterdir()))


def _resolved(repo: RepoBuilder) -> None:
    """Nothing to change: the request succeeds."""


def _refused_by_access(repo: RepoBuilder) -> None:
    exports = repo.modules["host.lib"]["exports"]
    assert isinstance(exports, dict)
    exports["host.lib.interface.run"]["access"] = {
        "allow_all_modules": False,
        "allowed_callers": ["someone-else"],
    }
    repo.rewrite("host.lib")


def _refused_by_symlinked_gateway(repo: RepoBuilder) -> None:
    gateway = repo.module_dir("host.lib") / "gateway.py"
    gateway.rename(gateway.with_name("real.py"))
    gateway.symlink_to(gateway.with_name("real.py"))


def _refused_by_malformed_source(repo: RepoBuilder) -> None:
    source = repo.module_dir("host.lib") / "blueprints" / "main.yaml"
    source.write_text(source.read_text(encoding="utf-8") + "id: again\n", encoding="utf-8")


def _refused_by_unregistered_child(repo: RepoBuilder) -> None:
    repo.modules["host"]["children"] = {}
    repo.rewrite("host")


OUTCOMES: dict[str, Callable[[RepoBuilder], None]] = {
    "resolved": _resolved,
    "access": _refused_by_access,
    "symlinked gateway": _refused_by_symlinked_gateway,
    "malformed source": _refused_by_malformed_source,
    "unregistered child": _refused_by_unregistered_child,
}


@pytest.mark.parametrize("outcome", OUTCOMES)
def test_nothing_read_for_a_request_survives_it(tmp_path: Path, outcome: str) -> None:
    marker = f"marker-{uuid.uuid4()}"
    repo = build(tmp_path, marker)
    repository = Repository.open(repo.config_path)
    # The scan sees what a request holds while it runs (so its silence below means something).
    loader = ModuleLoader(repo.config())
    loader.load_source(loader.load("host.lib"), "host.lib.source.main")
    assert len(survivors(repo, marker)) >= 4
    del loader
    assert survivors(repo, marker) == []

    OUTCOMES[outcome](repo)
    before = open_descriptors()
    route: Route | None = None
    for _ in range(3):
        try:
            route = repository.resolve(REQUEST)
        except RouteError:
            route = None
    assert (route is not None) == (outcome == "resolved")
    assert survivors(repo, marker) == []
    assert open_descriptors() == before


# --------------------------------------------------------------------------- #
# edits between two requests, at every level


def _observe(repository: Repository) -> object:
    try:
        route = repository.resolve(REQUEST)
    except RouteError as error:
        return error.code
    return (
        route.module_roots,
        route.binding.command,
        route.binding.entry,
        [policy.admitted_by for policy in route.policies],
    )


def _edit_config(repo: RepoBuilder) -> Callable[[], object]:
    (repo.root / "more").mkdir(exist_ok=True)
    original = repo.config_path.read_text(encoding="utf-8")
    repo.config_path.write_text(original.replace('"skills"', '"skills", "more"'), encoding="utf-8")
    return lambda: repo.config_path.write_text(original, encoding="utf-8")


def _edit_ancestor(repo: RepoBuilder) -> Callable[[], object]:
    repo.modules["host"]["children"] = {}
    repo.rewrite("host")

    def undo() -> None:
        repo.modules["host"]["children"] = {"lib": {}}
        repo.rewrite("host")

    return undo


def _edit_terminal(repo: RepoBuilder) -> Callable[[], object]:
    exports = repo.modules["host.lib"]["exports"]
    assert isinstance(exports, dict)
    export = exports["host.lib.interface.run"]
    original = export["access"]
    export["access"] = {"allow_all_modules": False, "allowed_callers": ["host"]}
    repo.rewrite("host.lib")

    def undo() -> None:
        export["access"] = original
        repo.rewrite("host.lib")

    return undo


def _edit_source(repo: RepoBuilder) -> Callable[[], object]:
    source = repo.module_dir("host.lib") / "blueprints" / "main.yaml"
    original = source.read_text(encoding="utf-8")
    edited = original.replace("- a\n", "- b\n").replace("entry: Run", "entry: Walk")
    assert edited != original
    source.write_text(edited, encoding="utf-8")
    return lambda: source.write_text(original, encoding="utf-8")


EDITS: dict[str, Callable[[RepoBuilder], Callable[[], object]]] = {
    "config": _edit_config,
    "ancestor": _edit_ancestor,
    "terminal": _edit_terminal,
    "source": _edit_source,
}


@pytest.mark.parametrize("level", EDITS)
def test_an_edit_between_two_requests_is_seen_by_the_second(tmp_path: Path, level: str) -> None:
    repo = build(tmp_path, "edited")
    repository = Repository.open(repo.config_path)
    original = _observe(repository)
    assert isinstance(original, tuple), original
    undo = EDITS[level](repo)
    edited = _observe(repository)
    assert edited != original
    undo()
    assert _observe(repository) == original
