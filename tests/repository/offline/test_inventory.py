"""The offline inventory (``dispatcher names --config``) reads blueprints like the routing path.

It is the one module that walks the roots; every blueprint it finds is read
with the no-follow, regular-file-only, capped reader, so a planted symlink,
FIFO or oversized file is an error, never a followed link or a hang.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from boring_dispatch.errors import BlueprintMalformed
from boring_dispatch.repository.load.files import MAX_BLUEPRINT_BYTES
from boring_dispatch.repository.offline.inventory import exported_interfaces
from kits.blueprints import RepoBuilder, make_repo


@pytest.fixture
def repo(tmp_path: Path) -> RepoBuilder:
    built = make_repo(tmp_path)
    built.module("alpha")
    built.module("beta")
    return built


def test_a_clean_repository_lists_nothing_but_declared_exports(repo: RepoBuilder) -> None:
    assert exported_interfaces(repo.config()) == ()


def _symlink_to_outside(path: Path) -> None:
    outside = path.parent.parent.parent / "outside.yaml"
    outside.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(outside)


def _fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _world_writable(path: Path) -> None:
    path.chmod(0o666)


def _oversized(path: Path) -> None:
    path.write_bytes(b"#" * (MAX_BLUEPRINT_BYTES + 1))


def _dangling(path: Path) -> None:
    path.unlink()
    path.symlink_to(path.parent / "nowhere.yaml")


@pytest.mark.parametrize(
    "plant",
    [_symlink_to_outside, _fifo, _world_writable, _oversized, _dangling],
    ids=["symlink", "fifo", "world-writable", "oversized", "dangling-symlink"],
)
def test_an_unsafe_blueprint_file_is_an_error_never_followed_or_waited_on(
    repo: RepoBuilder, plant: Callable[[Path], None]
) -> None:
    plant(repo.module_dir("beta") / "blueprint.yaml")
    with pytest.raises(BlueprintMalformed):
        exported_interfaces(repo.config())
