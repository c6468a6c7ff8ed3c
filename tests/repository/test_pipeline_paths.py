"""``resolve_route`` and its per-request descriptor tree: what the configuration path decides.

Whatever is passed as the configuration path (no path at all, bytes, relative,
unclean, missing, behind a symlink), the request fails exactly as
``load_config`` of that path does, and leaves no descriptor open.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from boring_dispatch.errors import RouteError
from boring_dispatch.records import RouteRequest
from boring_dispatch.repository.load.config import load_config
from boring_dispatch.repository.pipeline import resolve_route
from kits.blueprints import make_repo

REQUEST = RouteRequest("host", "host.interface.run")


def open_descriptors() -> int:
    return len(list(Path("/proc/self/fd").iterdir()))


def _failure(call: Callable[[], object]) -> tuple[str, str]:
    with pytest.raises(RouteError) as caught:
        call()
    return caught.value.code, caught.value.message


def _paths(tmp_path: Path) -> list[object]:
    repo = make_repo(tmp_path / "real")
    alias = tmp_path.resolve() / "alias"
    alias.symlink_to(repo.root, target_is_directory=True)
    return [
        None,
        7,
        object(),
        b"/x/officina.toml",
        "",
        "/",
        "relative/officina.toml",
        Path("relative/officina.toml"),
        "/a/../officina.toml",
        str(repo.root / "other.toml"),
        str(tmp_path.resolve() / "missing" / "officina.toml"),
        alias / "officina.toml",
        str(alias / "officina.toml"),
        repo.root / "skills" / ".." / "officina.toml",
    ]


def test_every_unusable_configuration_path_fails_as_load_config_does(tmp_path: Path) -> None:
    paths = _paths(tmp_path)
    before = open_descriptors()
    for path in paths:
        expected = _failure(lambda path=path: load_config(path))  # type: ignore[misc]
        assert expected[0] == "dispatcher.runtime_misconfigured"
        assert _failure(lambda path=path: resolve_route(path, REQUEST)) == expected, path  # type: ignore[misc]
    assert open_descriptors() == before


# --------------------------------------------------------------------------- #
# A world-writable directory (no sticky bit) anywhere on the way to what a
# request reads: any local user can rename a blueprint or the configuration
# away and put their own in its place (an open namespace route, another
# binding), so the request is refused, whichever directory it is.

_ROUTE = RouteRequest(
    "list-manager", "list-manager._rtx.interface.read-list", argv=("/tmp/x.yaml",)
)
# Below the copied repository: every directory the route's reads pass through.
_ROUTE_DIRECTORIES = (
    ".",
    "skills",
    "skills/list-manager",
    "skills/list-manager/_rtx",
    "skills/list-manager/_rtx/blueprints",
)


@pytest.fixture(scope="module")
def corpus_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import shutil

    from kits.blueprints import corpus_dir

    outer = tmp_path_factory.mktemp("outer").resolve()
    shutil.copytree(corpus_dir(), outer / "repo", symlinks=True)
    return outer / "repo"


@pytest.mark.parametrize("relative", [*_ROUTE_DIRECTORIES, ".."])
def test_a_world_writable_directory_on_the_route_is_refused(
    corpus_copy: Path, relative: str
) -> None:
    config = corpus_copy / "officina.toml"
    directory = (corpus_copy / relative).resolve()
    assert resolve_route(config, _ROUTE).binding.command == ("read", "/tmp/x.yaml")
    before = open_descriptors()
    try:
        directory.chmod(0o777)
        code, message = _failure(lambda: resolve_route(config, _ROUTE))
        assert code in {"dispatcher.unsafe_blueprint_path", "dispatcher.runtime_misconfigured"}
        assert "world-writable" in message
        directory.chmod(0o1777)  # the sticky bit: nobody renames what is not theirs
        assert resolve_route(config, _ROUTE).binding.command == ("read", "/tmp/x.yaml")
    finally:
        directory.chmod(0o755)
    assert open_descriptors() == before


_ROUTE_FILES = (
    "officina.toml",
    "skills/list-manager/blueprint.yaml",
    "skills/list-manager/_rtx/blueprint.yaml",
    "skills/list-manager/_rtx/blueprints/rtx-yaml-store.yaml",
)
_NOBODY = 65534


@pytest.mark.parametrize(
    "relative",
    [*_ROUTE_FILES, "skills/list-manager/_rtx/_yaml_store.py", *_ROUTE_DIRECTORIES, ".."],
)
def test_a_file_on_the_route_owned_by_another_user_is_refused(
    corpus_copy: Path, relative: str
) -> None:
    import os

    if os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    config = corpus_copy / "officina.toml"
    path = corpus_copy / relative
    owner = path.stat()
    assert resolve_route(config, _ROUTE).binding.command == ("read", "/tmp/x.yaml")
    try:
        os.chown(path, _NOBODY, _NOBODY)
        code, message = _failure(lambda: resolve_route(config, _ROUTE))
        assert code in {"dispatcher.unsafe_blueprint_path", "dispatcher.runtime_misconfigured"}
        assert "untrusted" in message
    finally:
        os.chown(path, owner.st_uid, owner.st_gid)
