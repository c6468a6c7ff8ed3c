"""Symlink-free, descriptor-based file access for the routing path (SECURITY.md A, section 3).

Every path is walked one component at a time from ``/``: each directory is
opened with ``O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC`` relative to the
descriptor of its parent (``dir_fd``), so a symlink anywhere in the path,
including system-level ones, is refused instead of followed. A file is first
``lstat``-ed through its directory descriptor (so FIFOs and devices are never
opened), then opened with ``O_NOFOLLOW | O_NONBLOCK``, checked again with
``fstat`` (still the same inode, a regular file, not world-writable, within
the size cap) and read from that descriptor only: it is never re-opened by
path, so swapping a component for a symlink between checks cannot redirect
the read.

Every directory on the way, from ``/`` down, is ``fstat``-ed on its
descriptor as it is opened: a world-writable one without the sticky bit is
refused, since any local user could rename its entries away and put their
own in (the file checks below it would then mean nothing). ``/tmp`` and other
sticky directories are accepted: nobody renames there what is not theirs.

Every directory on the way and every file read or probed must also belong to
root or to the dispatcher's effective user (the owners the gateway child
trusts for code): another user could rewrite or swap it.

What this does not protect against: a writer who can modify the real files
(hard links and group-writable files and directories are accepted, so that
ordinary checkouts under ``umask 002`` work).

Nothing here lists a directory. Refusals are :class:`FsRefused`, which every
caller translates into its own ``dispatcher.*`` error at once; it never
escapes the blueprints package.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from boring_dispatch.repository.load._fs_checks import (
    FsRefused,
    check_directory,
    check_opened,
    classify,
)

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import Final, Self


__all__ = [
    "MAX_BLUEPRINT_BYTES",
    "MAX_CONFIG_BYTES",
    "DirectoryTree",
    "FsRefused",
    "directory_identity",
    "read_regular",
    "relative_parts",
    "stat_regular",
]

#: Cap on a module or source blueprint. The largest in the famulus corpus is
#: about 69 KB, so this leaves more than tenfold room while bounding the work
#: an oversized (or endlessly growing) file can cause.
MAX_BLUEPRINT_BYTES: Final = 1 << 20
#: Cap on ``officina.toml``; the real one is a few hundred bytes.
MAX_CONFIG_BYTES: Final = 64 << 10

_DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
_READ_CHUNK: Final = 1 << 16
#: How many directory descriptors one :class:`DirectoryTree` keeps open.
_MAX_TREE_DIRECTORIES: Final = 64
_UNCLEAN_NAMES: Final = frozenset({"", ".", ".."})


def relative_parts(text: object) -> tuple[str, ...] | None:
    """Split an authored relative POSIX path, or ``None`` when it is unsafe.

    Refused: anything but a non-empty string, an absolute path, a backslash,
    a NUL, and empty, ``.`` or ``..`` segments (so also ``//`` and a trailing
    slash). ``~`` and ``C:`` have no special meaning here: they are ordinary
    names below the base directory.
    """
    if not isinstance(text, str) or not text or text.startswith("/"):
        return None
    if "\\" in text or "\x00" in text:
        return None
    parts = tuple(text.split("/"))
    if any(part in ("", ".", "..") for part in parts):
        return None
    return parts


def read_regular(path: Path, cap: int) -> bytes:
    """Read a regular file reached without following any symlink.

    Args:
        path: An absolute, lexically clean path.
        cap: The largest accepted size in bytes.

    Returns:
        The file's bytes (at most ``cap``).

    Raises:
        FsRefused: see :data:`._fs_checks.Reason`.
    """
    return _read_opened(*_open_file(path), cap, path)


def stat_regular(path: Path) -> os.stat_result:
    """Check, without reading it, that ``path`` is a symlink-free regular file.

    This is a point-in-time check (whoever executes the file later must not
    trust it beyond that): it walks the directories by descriptor and
    ``fstat``s the opened file.

    Raises:
        FsRefused: see :data:`._fs_checks.Reason` (never ``too_large``).
    """
    return _close_opened(*_open_file(path))


def directory_identity(path: Path) -> tuple[int, int]:
    """``(st_dev, st_ino)`` of a directory reached without following any symlink.

    Raises:
        FsRefused: a component is missing, a symlink or not a directory.
    """
    fd = _walk(path, _parts(path))
    try:
        info = os.fstat(fd)
    finally:
        os.close(fd)
    return info.st_dev, info.st_ino


class DirectoryTree:
    """One request's descriptors below ``base``: the same checks, fewer ``open`` calls.

    ``base`` is walked from ``/`` once, on first use; each directory below it is
    then opened once, relative to its parent (``O_DIRECTORY | O_NOFOLLOW``), and
    kept until :meth:`close`. Files are checked and read as :func:`read_regular`
    does; a path not below ``base`` takes the full walk from ``/``. It holds
    descriptors, never content or decisions: one per request, closed (``with``)
    at its end, so the next request walks from ``/`` again and sees a component
    swapped for a symlink in between. At most :data:`_MAX_TREE_DIRECTORIES` are
    kept; further walks close their own.
    """

    __slots__ = ("_base_names", "_directories", "_prefix", "base")

    def __init__(self, base: Path) -> None:
        #: The directory below which paths are reached by descriptor.
        self.base: Final = base
        text = str(base)
        self._prefix: Final = text if text.endswith("/") else text + "/"
        try:
            names: tuple[str, ...] | None = _parts(base)
        except FsRefused:
            names = None  # every path then takes the full walk, which refuses it
        self._base_names: Final = names
        self._directories: dict[str, int] = {}

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: object, exc: object, traceback: object) -> None:
        self.close()

    def close(self) -> None:
        """Close every descriptor; a later call walks from ``/`` again."""
        directories = self._directories
        while directories:
            os.close(directories.popitem()[1])

    def read(self, path: Path, cap: int) -> bytes:
        """:func:`read_regular` of ``path``."""
        names = self._relative(path)
        if names is None:
            return read_regular(path, cap)
        return _read_opened(*self._open_file(names, path), cap, path)

    def stat(self, path: Path) -> os.stat_result:
        """:func:`stat_regular` of ``path``."""
        names = self._relative(path)
        if names is None:
            return stat_regular(path)
        return _close_opened(*self._open_file(names, path))

    def identity(self, path: Path) -> tuple[int, int]:
        """:func:`directory_identity` of ``path``."""
        names = self._relative(path)
        if names is None:
            return directory_identity(path)
        fd, owned = self._directory(names, path)
        try:
            info = os.fstat(fd)
        finally:
            if owned is not None:
                os.close(owned)
        return info.st_dev, info.st_ino

    def _relative(self, path: Path) -> list[str] | None:
        """The names of ``path`` below the base, or ``None`` to take the full walk."""
        text = str(path)
        if self._base_names is None or not text.startswith(self._prefix):
            return None
        names = text[len(self._prefix) :].split("/")
        if "\x00" in text or not _UNCLEAN_NAMES.isdisjoint(names):
            return None  # the full walk refuses it with the usual reason
        return names

    def _open_file(self, names: list[str], path: Path) -> tuple[int, os.stat_result]:
        fd, owned = self._directory(names[:-1], path)
        try:
            return _open_leaf(fd, names[-1], path)
        finally:
            if owned is not None:
                os.close(owned)

    def _directory(self, names: list[str], path: Path) -> tuple[int, int | None]:
        """The descriptor of base/names, and the one the caller must close (not kept), if any."""
        directories = self._directories
        fd = directories.get("")
        if fd is None:
            assert self._base_names is not None  # noqa: S101 - _relative checked it
            fd = directories[""] = _walk(path, self._base_names)
        key = ""
        owned: int | None = None
        try:
            for name in names:
                key = f"{key}/{name}" if key else name
                child = directories.get(key) if owned is None else None
                if child is None:
                    try:
                        child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                    except OSError as exc:
                        raise classify(exc, fd, name, path, directory=True) from None
                    try:
                        check_directory(child, path)
                    except FsRefused:
                        os.close(child)
                        raise
                    if owned is None and len(directories) < _MAX_TREE_DIRECTORIES:
                        directories[key] = child
                    else:
                        if owned is not None:
                            os.close(owned)
                        owned = child
                fd = child
        except BaseException:
            if owned is not None:
                os.close(owned)
            raise
        return fd, owned


# --------------------------------------------------------------------------- #


def _parts(path: Path) -> tuple[str, ...]:
    text = str(path)
    if not text.startswith("/") or "\x00" in text:
        raise FsRefused("invalid_path", path)
    parts = tuple(part for part in text.split("/") if part)
    if any(part in (".", "..") for part in parts):
        raise FsRefused("invalid_path", path)
    return parts


def _open_file(path: Path) -> tuple[int, os.stat_result]:
    """The leaf of ``path`` opened no-follow by descriptor walk, with its ``fstat``."""
    directory = _open_parent(path)
    try:
        return _open_leaf(directory, path.name, path)
    finally:
        os.close(directory)


def _read_opened(fd: int, info: os.stat_result, cap: int, path: Path) -> bytes:
    """Read the file :func:`_open_leaf` opened (at most ``cap`` bytes), then close it."""
    try:
        if info.st_size > cap:
            raise FsRefused("too_large", path)
        data = _read_capped(fd, min(info.st_size, cap) + 1, cap, path)
    finally:
        os.close(fd)
    if len(data) > cap:  # the file grew after fstat
        raise FsRefused("too_large", path)
    return data


def _close_opened(fd: int, info: os.stat_result) -> os.stat_result:
    os.close(fd)  # its fstat was taken as it was opened
    return info


def _open_parent(path: Path) -> int:
    parts = _parts(path)
    if not parts:
        raise FsRefused("not_regular", path)
    return _walk(path, parts[:-1])


def _walk(path: Path, names: tuple[str, ...]) -> int:
    """Open ``/`` then each name below it as a directory; return the last descriptor."""
    fd = os.open("/", _DIR_FLAGS)
    try:
        check_directory(fd, path)
        for name in names:
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                raise classify(exc, fd, name, path, directory=True) from None
            os.close(fd)
            fd = child
            check_directory(fd, path)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_leaf(directory: int, name: str, path: Path) -> tuple[int, os.stat_result]:
    """Open ``name`` in ``directory`` if it is a regular file; return it and its ``fstat``."""
    try:
        before = os.stat(name, dir_fd=directory, follow_symlinks=False)
    except OSError as exc:
        raise classify(exc, directory, name, path, directory=False) from None
    if stat.S_ISLNK(before.st_mode):
        raise FsRefused("symlink", path)
    if not stat.S_ISREG(before.st_mode):
        raise FsRefused("not_regular", path)
    try:
        fd = os.open(name, _FILE_FLAGS, dir_fd=directory)
    except OSError as exc:
        raise classify(exc, directory, name, path, directory=False) from None
    try:
        after = os.fstat(fd)
        check_opened(after, before, path)
    except BaseException:
        os.close(fd)
        raise
    return fd, after


def _read_capped(fd: int, first: int, cap: int, path: Path) -> bytes:
    chunks: list[bytes] = []
    total = 0
    want = first
    while total <= cap:
        try:
            chunk = os.read(fd, min(want, cap + 1 - total))
        except OSError:
            raise FsRefused("unreadable", path) from None
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        want = _READ_CHUNK
    return b"".join(chunks)
