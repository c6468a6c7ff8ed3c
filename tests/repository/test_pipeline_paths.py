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
