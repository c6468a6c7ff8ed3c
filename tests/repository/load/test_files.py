""":class:`DirectoryTree`, one request's descriptors: the same answers as the full walk from ``/``.

Every path is checked against :func:`read_regular`, :func:`stat_regular` and
:func:`directory_identity` (which walk from ``/`` for each path): same bytes
or same refusal reason, whatever the order and the repetitions of the paths one
tree is asked for. A symlink at any depth, the base's own ancestors
included, is refused; a component swapped for a symlink between two trees
(two requests) is caught by the second one.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boring_dispatch.repository.load import files as _fs
from boring_dispatch.repository.load.files import (
    DirectoryTree,
    FsRefused,
    directory_identity,
    read_regular,
    stat_regular,
)

CAP = 64


def open_descriptors() -> int:
    return len(list(Path("/proc/self/fd").iterdir()))


def outcome(call: Callable[[], object]) -> object:
    """What a call returned, or the reason it was refused."""
    try:
        result = call()
    except FsRefused as refusal:
        return ("refused", refusal.reason)
    if isinstance(result, os.stat_result):
        return ("stat", result.st_dev, result.st_ino, stat.S_IFMT(result.st_mode))
    return result


def _write(path: Path, data: bytes = b"a: 1\n", mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    path.chmod(mode)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository-like tree with one of every kind of entry the reader must refuse."""
    top = tmp_path_factory.mktemp("tree").resolve()
    base = top / "repo"
    _write(base / "officina.toml", b"x = 1\n")
    _write(base / "d" / "f.yaml", b"f: 1\n")
    _write(base / "d" / "sub" / "g.yaml", b"g: 2\n")
    _write(base / "d" / "sub" / "deeper" / "h.yaml", b"h: 3\n")
    _write(base / "d" / "ww.yaml", mode=0o666)
    _write(base / "d" / "gw.yaml", b"gw: 1\n", mode=0o664)
    _write(base / "d" / "big.yaml", b"x" * (CAP + 1))
    _write(base / "d" / "file")
    (base / "d" / "link.yaml").symlink_to(base / "d" / "f.yaml")
    (base / "d" / "dangling.yaml").symlink_to(base / "nowhere")
    (base / "d" / "dlink").symlink_to(base / "d" / "sub")
    (base / "alias").symlink_to(base / "d")
    (base / "d" / "dir.yaml").mkdir()
    os.mkfifo(base / "d" / "fifo.yaml")
    _write(top / "outside" / "o.yaml", b"o: 1\n")
    return base


def _paths(base: Path) -> list[Path]:
    d = base / "d"
    return [
        base / "officina.toml",
        base,
        d,
        d / "f.yaml",
        d / "sub",
        d / "sub" / "g.yaml",
        d / "sub" / "deeper" / "h.yaml",
        d / "sub" / "deeper",
        d / "ww.yaml",
        d / "gw.yaml",
        d / "big.yaml",
        d / "file",
        d / "file" / "x.yaml",
        d / "link.yaml",
        d / "dangling.yaml",
        d / "dlink",
        d / "dlink" / "g.yaml",
        base / "alias" / "f.yaml",
        base / "alias",
        d / "dir.yaml",
        d / "fifo.yaml",
        d / "missing.yaml",
        base / "missing" / "f.yaml",
        d / ("x" * 300),
        base.parent / "outside" / "o.yaml",
        base.parent / "outside",
        Path("/dev/null"),
        Path("/"),
    ]


_OPERATIONS = ("read", "stat", "identity")


def _full_walk(operation: str, path: Path) -> object:
    if operation == "read":
        return outcome(lambda: read_regular(path, CAP))
    if operation == "stat":
        return outcome(lambda: stat_regular(path))
    return outcome(lambda: directory_identity(path))


def _through(tree: DirectoryTree, operation: str, path: Path) -> object:
    if operation == "read":
        return outcome(lambda: tree.read(path, CAP))
    if operation == "stat":
        return outcome(lambda: tree.stat(path))
    return outcome(lambda: tree.identity(path))


def test_every_path_and_operation_answers_as_the_full_walk(hostile: Path) -> None:
    expected = {(op, p): _full_walk(op, p) for op in _OPERATIONS for p in _paths(hostile)}
    # The family covers every reason (and plain successes), so the comparison is not vacuous.
    reasons = {answer[1] for answer in expected.values() if isinstance(answer, tuple)}
    assert {"missing", "symlink", "not_directory", "not_regular", "unsafe_mode"} <= reasons
    assert "too_large" in reasons
    with DirectoryTree(hostile) as tree:
        for (operation, path), answer in expected.items():
            assert _through(tree, operation, path) == answer, (operation, path)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_any_order_and_repetition_of_requests_in_one_tree_answers_as_the_full_walk(
    hostile: Path, data: st.DataObject
) -> None:
    requests = data.draw(
        st.lists(
            st.tuples(st.sampled_from(_OPERATIONS), st.sampled_from(_paths(hostile))), max_size=25
        )
    )
    before = open_descriptors()
    with DirectoryTree(hostile) as tree:
        for operation, path in requests:
            assert _through(tree, operation, path) == _full_walk(operation, path)
    assert open_descriptors() == before


def test_a_fifo_is_refused_through_the_tree_without_blocking(hostile: Path) -> None:
    # Reaching this line at all is the proof: open(O_NONBLOCK) is never attempted on the FIFO.
    with DirectoryTree(hostile) as tree:
        assert _through(tree, "read", hostile / "d" / "fifo.yaml") == ("refused", "not_regular")


def test_a_device_below_the_base_is_not_regular() -> None:
    with DirectoryTree(Path("/dev")) as tree:
        assert _through(tree, "read", Path("/dev/null")) == ("refused", "not_regular")
        assert _through(tree, "stat", Path("/dev/zero")) == ("refused", "not_regular")


@pytest.mark.parametrize("text", ["relative", "/a/../b", "/a/./b"])
def test_an_unclean_base_walks_every_path_from_the_root(text: str) -> None:
    class Raw:
        def __init__(self, raw: str) -> None:
            self.raw = raw
            self.name = raw.rpartition("/")[2]

        def __str__(self) -> str:
            return self.raw

    base = Raw(text)
    inside = Raw(text + "/f.yaml")
    with DirectoryTree(base) as tree:  # type: ignore[arg-type]
        assert _through(tree, "read", inside) == ("refused", "invalid_path")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- #
# symlinks at every depth, the base's ancestors included


_CHAIN = ("r0", "r1", "r2", "repo", "d1", "d2")


def _chain(top: Path) -> tuple[Path, Path]:
    """``top/r0/r1/r2/repo/d1/d2/f.yaml``; returns (base = .../repo, the file)."""
    base = top.joinpath(*_CHAIN[:4])
    file = top.joinpath(*_CHAIN, "f.yaml")
    _write(file, b"real: 1\n")
    return base, file


def _swap_for_symlink(directory: Path) -> Path:
    """Rename ``directory`` and put a symlink to it in its place; returns the real one."""
    real = directory.with_name(directory.name + ".real")
    directory.rename(real)
    directory.symlink_to(real, target_is_directory=True)
    return real


@pytest.mark.parametrize("depth", range(len(_CHAIN)))
def test_a_symlink_at_any_depth_is_refused(tmp_path: Path, depth: int) -> None:
    base, file = _chain(tmp_path.resolve())
    _swap_for_symlink(tmp_path.resolve().joinpath(*_CHAIN[: depth + 1]))
    with DirectoryTree(base) as tree:
        assert _through(tree, "read", file) == ("refused", "symlink")
        assert _through(tree, "stat", file) == ("refused", "symlink")
        assert _through(tree, "identity", file.parent) == ("refused", "symlink")
    assert _full_walk("read", file) == ("refused", "symlink")


@pytest.mark.parametrize("depth", range(len(_CHAIN)))
def test_a_directory_swapped_for_a_symlink_between_two_trees_is_caught(
    tmp_path: Path, depth: int
) -> None:
    base, file = _chain(tmp_path.resolve())
    with DirectoryTree(base) as first:
        assert first.read(file, CAP) == b"real: 1\n"
    _swap_for_symlink(tmp_path.resolve().joinpath(*_CHAIN[: depth + 1]))
    with DirectoryTree(base) as second:
        assert _through(second, "read", file) == ("refused", "symlink")


def test_a_swap_during_a_request_never_reaches_the_symlink_target_and_the_next_one_refuses(
    tmp_path: Path,
) -> None:
    base, file = _chain(tmp_path.resolve())
    evil = tmp_path.resolve() / "evil" / "d2" / "f.yaml"
    _write(evil, b"evil: 1\n")
    d1 = base / "d1"
    tree = DirectoryTree(base)
    try:
        assert tree.read(file, CAP) == b"real: 1\n"  # d1 and d2 are now open in this tree
        d1.rename(d1.with_name("d1.moved"))
        d1.symlink_to(evil.parent.parent, target_is_directory=True)
        # Read through the descriptors opened before the swap: the real files, never "evil".
        assert tree.read(file, CAP) == b"real: 1\n"
    finally:
        tree.close()
    # A closed tree walks from / again (as the next request does), and sees the symlink.
    assert _through(tree, "read", file) == ("refused", "symlink")
    tree.close()


# --------------------------------------------------------------------------- #
# descriptors


def test_descriptors_are_bounded_while_open_and_all_closed_at_the_end(tmp_path: Path) -> None:
    top = tmp_path.resolve()
    deep = top.joinpath(*(f"n{i}" for i in range(_fs._MAX_TREE_DIRECTORIES + 20)))
    deep.mkdir(parents=True)
    files = [deep.parents[i] / "f.yaml" for i in range(0, 90, 7)]
    for index, file in enumerate(files):
        _write(file, f"i: {index}\n".encode())
    before = open_descriptors()
    with DirectoryTree(top) as tree:
        for _ in range(2):
            for index, file in enumerate(files):
                assert tree.read(file, CAP) == f"i: {index}\n".encode()
                assert open_descriptors() <= before + _fs._MAX_TREE_DIRECTORIES
        assert tree.identity(deep) == directory_identity(deep)
        assert _through(tree, "read", deep / "nope" / "f.yaml") == ("refused", "missing")
    assert open_descriptors() == before


def test_no_descriptor_survives_refusals(hostile: Path) -> None:
    before = open_descriptors()
    for _ in range(20):
        with DirectoryTree(hostile) as tree:
            for path in _paths(hostile):
                for operation in _OPERATIONS:
                    _through(tree, operation, path)
    assert open_descriptors() == before


def _spellings(base: Path) -> list[Path]:
    """The hostile paths, then the same texts rooted at ``//`` and with odd names."""
    paths = _paths(base)
    odd = [base / "d" / "\udcff.yaml", base / "d" / "\udcc3\udca9", base / "d" / "f.yaml\x00x"]
    return [*paths, *(Path("/" + str(path)) for path in paths), *odd]


@pytest.mark.parametrize(
    "spelling", ["repo", "//repo", "symlinked", "under-alias", "relative", "dotdot", "root"]
)
def test_every_spelling_of_the_base_answers_as_the_full_walk(hostile: Path, spelling: str) -> None:
    """A base that is or sits below a symlink, relative, unclean, `//`-rooted: no shortcut."""
    link = hostile.parent / "repo-link"
    if not link.is_symlink():
        link.symlink_to(hostile)
    base = {
        "repo": hostile,
        "//repo": Path("/" + str(hostile)),
        "symlinked": link,
        "under-alias": hostile / "alias",
        "relative": Path("repo"),
        "dotdot": hostile / "d" / ".." / "d",
        "root": Path("/"),
    }[spelling]
    paths = [*_spellings(hostile), *_spellings(link), *_spellings(hostile / "alias")]
    before = open_descriptors()
    with DirectoryTree(base) as tree:
        for operation in _OPERATIONS:
            for path in paths:
                assert _through(tree, operation, path) == _full_walk(operation, path), path
    assert open_descriptors() == before
