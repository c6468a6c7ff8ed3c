"""Every module the confined importer serves is held to the gateway file's safety rule.

A world-writable gateway file was refused, but a world-writable ``__init__.py``
or helper module beside it ran. The confined importer now checks every node
it serves, from the module root down, on the descriptor it reads from: a
symlink, a node that is not a regular file or directory, a world-writable
file or directory, and one owned by a uid other than root and the
dispatcher's are refused before any of its code runs. Group-writable files
and directories are accepted, as the gateway rule accepts them.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from boring_dispatch.process.launch import run_captured
from boring_dispatch.records import ExecLimits, ExecutionResult
from kits.gateways import Repo, make_repo, make_route

LIMITS = ExecLimits(timeout_s=30.0)
STRANGER = 4242  # a uid that is neither root nor the dispatcher's

#: target name -> (file or directory under the module root, gateway body that reaches it)
TARGETS: dict[str, tuple[str, str]] = {
    "gateway": ("gateway.py", ""),
    "root-init": ("__init__.py", ""),
    "helper": ("helper.py", "from . import helper"),
    "sub-init": ("sub/__init__.py", "from . import sub"),
    "sub-module": ("sub/mod.py", "from .sub import mod"),
    "deep-module": ("sub/deeper/leaf.py", "from .sub.deeper import leaf"),
}
DIRECTORIES: dict[str, tuple[str, str]] = {
    "sub-dir": ("sub", "from .sub import mod"),
    "deep-dir": ("sub/deeper", "from .sub.deeper import leaf"),
    "module-root": (".", ""),
}


def _gateway(importing: str) -> str:
    return f"""
from boring_dispatch.gateway import ArgvInterface
{importing}


class Echo(ArgvInterface):
    def run(self, argv):
        print("GATEWAY-RAN")
        return 0
"""


def _hostile(marker: Path, name: str) -> str:
    return f"from pathlib import Path\nPath({str(marker)!r}).write_text({name!r})\n"


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Repo, Path]:
    """A module whose every file leaves a marker when it runs; the markers' directory."""
    repo = make_repo(tmp_path)
    markers = tmp_path / "markers"
    markers.mkdir()
    for relative in ("__init__.py", "helper.py", "sub/__init__.py", "sub/mod.py"):
        repo.write(relative, _hostile(markers / relative.replace("/", "_"), relative))
    for relative in ("sub/deeper/__init__.py", "sub/deeper/leaf.py"):
        repo.write(relative, _hostile(markers / relative.replace("/", "_"), relative))
    return repo, markers


def _run(repo: Repo, importing: str) -> ExecutionResult:
    gateway = repo.module_root / "gateway.py"
    mode = gateway.stat().st_mode if gateway.exists() else None
    gateway.write_text(_gateway(importing), encoding="utf-8")
    if mode is not None:
        gateway.chmod(mode)
    return run_captured(make_route(repo), stdin=None, limits=LIMITS, trace_id=None)


def _ran(markers: Path, relative: str) -> bool:
    return (markers / relative.replace("/", "_")).exists()


def _world_writable(path: Path) -> None:
    path.chmod(path.stat().st_mode | 0o002)


def _other_owner(path: Path) -> None:
    os.chown(path, STRANGER, -1, follow_symlinks=False)


def _symlink(path: Path) -> None:
    # The same content, elsewhere, reached through a symlink at the same name.
    elsewhere = path.parent.parent / f"elsewhere-{path.name}"
    if path.is_dir():
        shutil.copytree(path, elsewhere)
        shutil.rmtree(path)
    else:
        shutil.copy2(path, elsewhere)
        path.unlink()
    path.symlink_to(elsewhere)


def _fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


FILE_DEFECTS: dict[str, tuple[Callable[[Path], None], str]] = {
    "world-writable": (lambda p: p.chmod(0o646), "world-writable"),
    "other-owner": (_other_owner, "untrusted owner"),
    "symlink": (_symlink, "symlink"),
    "fifo": (_fifo, ""),
}
DIRECTORY_DEFECTS: dict[str, tuple[Callable[[Path], None], str]] = {
    "world-writable": (_world_writable, "world-writable"),
    "world-writable-sticky": (lambda p: p.chmod(0o1777), "world-writable"),
    "other-owner": (_other_owner, "untrusted owner"),
}


def _assert_refused(result: ExecutionResult, markers: Path, below: str, reason: str) -> None:
    """Refused, and nothing at or below ``below`` (relative to the module root) ran."""
    assert not result.ok
    assert result.exit_code not in (0, None)
    assert "GATEWAY-RAN" not in result.stdout
    prefix = "" if below == "." else below.replace("/", "_")
    ran = [m.name for m in markers.iterdir() if m.name.startswith(prefix)]
    assert not ran, f"refused code ran: {ran}"
    assert reason in result.stderr, result.stderr


@pytest.mark.parametrize("defect", FILE_DEFECTS)
@pytest.mark.parametrize("target", TARGETS)
def test_an_unsafe_module_file_is_refused_before_it_runs(
    layout: tuple[Repo, Path], target: str, defect: str
) -> None:
    repo, markers = layout
    relative, importing = TARGETS[target]
    path = repo.module_root / relative
    if target == "gateway":
        path.write_text(_gateway(importing), encoding="utf-8")
    change, reason = FILE_DEFECTS[defect]
    change(path)
    if target == "gateway":
        result = run_captured(make_route(repo), stdin=None, limits=LIMITS, trace_id=None)
    else:
        result = _run(repo, importing)
    _assert_refused(result, markers, relative, reason)


@pytest.mark.parametrize(
    ("target", "defect"),
    [
        *((target, defect) for target in DIRECTORIES for defect in DIRECTORY_DEFECTS),
        # (The module root's own path is walked without following symlinks by the resolver.)
        *((target, "symlink") for target in DIRECTORIES if target != "module-root"),
    ],
)
def test_an_unsafe_package_directory_is_refused_before_anything_below_it_runs(
    layout: tuple[Repo, Path], target: str, defect: str
) -> None:
    repo, markers = layout
    relative, importing = DIRECTORIES[target]
    path = repo.module_root / relative
    change, reason = (_symlink, "symlink") if defect == "symlink" else DIRECTORY_DEFECTS[defect]
    _run(repo, importing)  # write the gateway before the directory changes
    for marker in markers.iterdir():
        marker.unlink()
    change(path)
    result = run_captured(make_route(repo), stdin=None, limits=LIMITS, trace_id=None)
    _assert_refused(result, markers, relative, reason)


@pytest.mark.parametrize("target", [t for t in TARGETS if t != "gateway"])
@pytest.mark.parametrize("mode", [0o664, 0o620])
def test_group_writable_modules_run_as_a_group_writable_gateway_does(
    layout: tuple[Repo, Path], target: str, mode: int
) -> None:
    repo, markers = layout
    relative, importing = TARGETS[target]
    (repo.module_root / relative).chmod(mode)
    (repo.module_root / relative).parent.chmod(0o775)
    result = _run(repo, importing)
    assert result.ok, result.stderr
    assert "GATEWAY-RAN" in result.stdout
    assert _ran(markers, relative)


def test_a_clean_module_tree_runs_every_module(layout: tuple[Repo, Path]) -> None:
    repo, markers = layout
    result = _run(repo, "from .sub.deeper import leaf\nfrom . import helper\nfrom .sub import mod")
    assert result.ok, result.stderr
    assert {m.name for m in markers.iterdir()} == {
        "__init__.py",
        "helper.py",
        "sub___init__.py",
        "sub_mod.py",
        "sub_deeper___init__.py",
        "sub_deeper_leaf.py",
    }
