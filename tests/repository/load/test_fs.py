"""The descriptor-based reader: what it reads, what it refuses and why (real files, real links)."""

from __future__ import annotations

import os
import socket
import stat
import threading
from pathlib import Path

import pytest

from boring_dispatch.repository.load import files as _fs
from boring_dispatch.repository.load.files import (
    FsRefused,
    directory_identity,
    read_regular,
    relative_parts,
    stat_regular,
)

CAP = 1024


def refusal(call: object, *args: object) -> str:
    assert callable(call)
    with pytest.raises(FsRefused) as info:
        call(*args)
    return info.value.reason


def write(path: Path, text: str = "a: 1\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def open_descriptors() -> int:
    return len(list(Path("/proc/self/fd").iterdir()))


def test_a_regular_file_is_read_whole(tmp_path: Path) -> None:
    path = write(tmp_path / "d" / "f.yaml", "hello: world\n")
    assert read_regular(path, CAP) == b"hello: world\n"
    assert stat.S_ISREG(stat_regular(path).st_mode)


def test_a_file_of_exactly_the_cap_is_read_and_one_byte_more_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * CAP)
    assert len(read_regular(path, CAP)) == CAP
    path.write_bytes(b"x" * (CAP + 1))
    assert refusal(read_regular, path, CAP) == "too_large"


def test_a_file_that_grows_past_the_cap_while_read_is_cut_at_cap_plus_one() -> None:
    # _read_capped never reads more than cap + 1 bytes, whatever fstat said.
    reader, writer = os.pipe()
    try:
        os.write(writer, b"y" * 200)
        assert _fs._read_capped(reader, 1, 10, Path("/pipe")) == b"y" * 11
    finally:
        os.close(reader)
        os.close(writer)


def test_a_symlinked_leaf_is_refused_even_when_it_points_at_a_regular_file(
    tmp_path: Path,
) -> None:
    target = write(tmp_path / "real.yaml")
    (tmp_path / "link.yaml").symlink_to(target)
    (tmp_path / "dangling.yaml").symlink_to(tmp_path / "nowhere")
    assert refusal(read_regular, tmp_path / "link.yaml", CAP) == "symlink"
    assert refusal(read_regular, tmp_path / "dangling.yaml", CAP) == "symlink"
    assert refusal(stat_regular, tmp_path / "link.yaml") == "symlink"


def test_a_symlinked_directory_anywhere_in_the_path_is_refused(tmp_path: Path) -> None:
    write(tmp_path / "real" / "deep" / "f.yaml")
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    (tmp_path / "real" / "deeplink").symlink_to(tmp_path / "real" / "deep")
    assert refusal(read_regular, tmp_path / "alias" / "deep" / "f.yaml", CAP) == "symlink"
    assert refusal(read_regular, tmp_path / "real" / "deeplink" / "f.yaml", CAP) == "symlink"
    assert refusal(directory_identity, tmp_path / "alias" / "deep") == "symlink"


def test_missing_components_and_impossible_names_are_missing(tmp_path: Path) -> None:
    write(tmp_path / "d" / "f.yaml")
    assert refusal(read_regular, tmp_path / "d" / "nope.yaml", CAP) == "missing"
    assert refusal(read_regular, tmp_path / "nope" / "f.yaml", CAP) == "missing"
    assert refusal(read_regular, tmp_path / ("x" * 300) / "f.yaml", CAP) == "missing"
    assert refusal(read_regular, tmp_path / "d" / ("x" * 300), CAP) == "missing"


def test_a_file_where_a_directory_is_expected_is_not_a_directory(tmp_path: Path) -> None:
    write(tmp_path / "file")
    assert refusal(read_regular, tmp_path / "file" / "f.yaml", CAP) == "not_directory"


def test_directories_devices_and_sockets_are_not_regular(tmp_path: Path) -> None:
    (tmp_path / "dir.yaml").mkdir()
    assert refusal(read_regular, tmp_path / "dir.yaml", CAP) == "not_regular"
    assert refusal(read_regular, Path("/dev/null"), CAP) == "not_regular"
    sock_path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(sock_path))
        assert refusal(read_regular, sock_path, CAP) == "not_regular"


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    reasons: list[str] = []

    def attempt() -> None:
        reasons.append(refusal(read_regular, fifo, CAP))
        reasons.append(refusal(stat_regular, fifo))

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(timeout=10)
    assert not worker.is_alive(), "reading a FIFO blocked"
    assert reasons == ["not_regular", "not_regular"]


def test_a_world_writable_file_is_refused_and_a_group_writable_one_is_read(
    tmp_path: Path,
) -> None:
    path = write(tmp_path / "f.yaml")
    path.chmod(0o664)
    assert read_regular(path, CAP) == b"a: 1\n"
    path.chmod(0o666)
    assert refusal(read_regular, path, CAP) == "unsafe_mode"
    assert refusal(stat_regular, path) == "unsafe_mode"


class _Raw:
    """A path-like whose text ``Path()`` would normalise before the reader saw it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.name = text.rpartition("/")[2]

    def __str__(self) -> str:
        return self.text


@pytest.mark.parametrize(
    "text", ["relative/f.yaml", "/tmp/../etc/passwd", "/tmp/./x", "/a/b\x00c", ""]
)
def test_paths_that_are_not_clean_and_absolute_are_refused(text: str) -> None:
    assert refusal(read_regular, _Raw(text), CAP) == "invalid_path"


def test_the_root_directory_itself_is_not_a_regular_file() -> None:
    assert refusal(read_regular, Path("/"), CAP) == "not_regular"


def test_directory_identity_is_the_inode_of_the_directory(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    info = (tmp_path / "d").stat()
    assert directory_identity(tmp_path / "d") == (info.st_dev, info.st_ino)
    write(tmp_path / "f")
    assert refusal(directory_identity, tmp_path / "f") == "not_directory"
    assert refusal(directory_identity, tmp_path / "missing") == "missing"


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("a.yaml", ("a.yaml",)),
        ("blueprints/a.yaml", ("blueprints", "a.yaml")),
        ("~/x", ("~", "x")),
        ("C:foo", ("C:foo",)),
        ("a b/c", ("a b", "c")),
    ],
)
def test_relative_parts_splits_clean_relative_paths(text: str, parts: tuple[str, ...]) -> None:
    assert relative_parts(text) == parts


@pytest.mark.parametrize(
    "text",
    [
        "",
        "/abs",
        "../x",
        "a/../b",
        "a/..",
        "./a",
        "a/./b",
        "a//b",
        "a/",
        "a\\b",
        "\\\\host\\share",
        "C:\\x",
        "a\x00b",
        None,
        3,
        ["a"],
    ],
)
def test_relative_parts_refuses_everything_else(text: object) -> None:
    assert relative_parts(text) is None


def test_no_descriptor_leaks_on_success_or_refusal(tmp_path: Path) -> None:
    good = write(tmp_path / "d" / "f.yaml")
    (tmp_path / "link").symlink_to(tmp_path / "d")
    big = tmp_path / "big"
    big.write_bytes(b"x" * (CAP + 5))
    os.mkfifo(tmp_path / "fifo")
    before = open_descriptors()
    for _ in range(50):
        read_regular(good, CAP)
        stat_regular(good)
        directory_identity(tmp_path / "d")
        for bad in (tmp_path / "link" / "f.yaml", big, tmp_path / "fifo", tmp_path / "nope" / "x"):
            with pytest.raises(FsRefused):
                read_regular(bad, CAP)
    assert open_descriptors() == before


# --------------------------------------------------------------------------- #
# Directories on the way: a world-writable one without the sticky bit lets any
# local user rename its entries away and put their own in (a blueprint, the
# configuration, a whole module directory), so the file checks below it mean
# nothing. Every depth, every entry point, the tree and the full walk alike.

_DEPTHS = 4


def _nested(tmp_path: Path) -> tuple[Path, list[Path]]:
    """``tmp/d0/d1/d2/d3/f.yaml`` and the directories on its way, outermost first."""
    top = tmp_path.resolve()
    directories = [top.joinpath(*[f"d{i}" for i in range(depth + 1)]) for depth in range(_DEPTHS)]
    leaf = write(directories[-1] / "f.yaml")
    return leaf, directories


def _answers(leaf: Path, base: Path) -> list[object]:
    """What every entry point makes of ``leaf`` and its directory: a reason or the data."""

    def outcome(call: object, *args: object) -> object:
        assert callable(call)
        try:
            result = call(*args)
        except FsRefused as refused:
            return refused.reason
        return "ok" if not isinstance(result, bytes) else result

    with _fs.DirectoryTree(base) as tree:
        through_tree = [
            outcome(tree.read, leaf, CAP),
            outcome(tree.stat, leaf),
            outcome(tree.identity, leaf.parent),
        ]
    return [
        outcome(read_regular, leaf, CAP),
        outcome(stat_regular, leaf),
        outcome(directory_identity, leaf.parent),
        *through_tree,
    ]


@pytest.mark.parametrize("depth", range(_DEPTHS))
@pytest.mark.parametrize("base_depth", [0, 2])
def test_a_world_writable_directory_without_the_sticky_bit_is_refused_at_any_depth(
    tmp_path: Path, depth: int, base_depth: int
) -> None:
    leaf, directories = _nested(tmp_path)
    base = directories[base_depth]
    try:
        for mode, expected in ((0o777, "unsafe_directory"), (0o1777, None), (0o775, None)):
            directories[depth].chmod(mode)
            answers = _answers(leaf, base)
            if expected is None:
                assert answers == [b"a: 1\n", "ok", "ok"] * 2, oct(mode)
            else:
                assert answers == [expected] * 6, oct(mode)
    finally:
        directories[depth].chmod(0o755)


# Owners: a file, or a directory on its way, that belongs to another local user
# is that user's to rewrite or swap; only root and the dispatcher's own user
# are trusted (the gateway child trusts the same two for code). Every depth,
# every entry point, the tree and the full walk alike.

_NOBODY = 65534


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
@pytest.mark.parametrize("depth", [*range(_DEPTHS), "leaf"])
@pytest.mark.parametrize("base_depth", [0, 2])
def test_a_file_or_directory_another_user_owns_is_refused_at_any_depth(
    tmp_path: Path, depth: int | str, base_depth: int
) -> None:
    leaf, directories = _nested(tmp_path)
    base = directories[base_depth]
    target = leaf if depth == "leaf" else directories[int(depth)]
    for uid, gid in ((_NOBODY, _NOBODY), (os.geteuid(), _NOBODY), (0, 0)):
        os.chown(target, uid, gid)
        answers = _answers(leaf, base)
        if uid not in (0, os.geteuid()):
            # The leaf's own owner does not matter to its directory's identity.
            expected = ["unsafe_owner", "unsafe_owner", "ok" if depth == "leaf" else "unsafe_owner"]
            assert answers == expected * 2, uid
        else:
            assert answers == [b"a: 1\n", "ok", "ok"] * 2, (uid, gid)
