"""The checks and refusals of :mod:`.files`: what a path, a directory or an opened file must be."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import Final, Literal

__all__ = ["FsRefused", "Reason", "check_directory", "check_opened", "classify"]

if TYPE_CHECKING:
    #: Why a path was refused.
    #: ``missing``: a component does not exist (or its name is too long to exist);
    #: ``symlink``: a component is a symbolic link;
    #: ``not_directory``: a non-final component is not a directory;
    #: ``not_regular``: the final object is not a regular file (FIFO, socket,
    #: device, directory), or changed between ``lstat`` and ``open``;
    #: ``unsafe_mode``: the file is world-writable;
    #: ``unsafe_directory``: a directory on the way is world-writable without the sticky bit;
    #: ``unsafe_owner``: the file, or a directory on the way, belongs to a user other than
    #: root and the dispatcher's own (effective) user;
    #: ``too_large``: more bytes than the cap;
    #: ``io``: any other operating-system failure while opening (permissions...);
    #: ``unreadable``: reading the opened file failed;
    #: ``invalid_path``: the path text itself is not acceptable (relative, NUL...).
    Reason = Literal[
        "missing",
        "symlink",
        "not_directory",
        "not_regular",
        "unsafe_mode",
        "unsafe_directory",
        "unsafe_owner",
        "too_large",
        "io",
        "unreadable",
        "invalid_path",
    ]


class FsRefused(Exception):
    """A path failed one of the checks; ``reason`` says which. Internal only."""

    def __init__(self, reason: Reason, path: Path) -> None:
        super().__init__(reason, path)
        self.reason: Final = reason
        self.path: Final = path

    def __str__(self) -> str:
        return f"{self.reason}: {self.path}"


def _trusted(uid: int) -> bool:
    """Root and the dispatcher's effective user: the owners the gateway child trusts too."""
    return uid == 0 or uid == os.geteuid()


def check_directory(fd: int, path: Path) -> None:
    """Refuse an opened directory another user owns, or world-writable without the sticky bit."""
    info = os.fstat(fd)
    mode = info.st_mode
    if mode & stat.S_IWOTH and not mode & stat.S_ISVTX:
        raise FsRefused("unsafe_directory", path)
    if not _trusted(info.st_uid):
        raise FsRefused("unsafe_owner", path)


def check_opened(after: os.stat_result, before: os.stat_result, path: Path) -> None:
    """The opened file is the one ``lstat`` saw, still regular, ours and not world-writable."""
    same = (after.st_dev, after.st_ino) == (before.st_dev, before.st_ino)
    if not stat.S_ISREG(after.st_mode) or not same:
        raise FsRefused("not_regular", path)
    if after.st_mode & stat.S_IWOTH:
        raise FsRefused("unsafe_mode", path)
    if not _trusted(after.st_uid):
        raise FsRefused("unsafe_owner", path)


def classify(exc: OSError, parent: int, name: str, path: Path, *, directory: bool) -> FsRefused:
    """Name the failure of an ``open``/``lstat``; the request fails whatever the answer."""
    if exc.errno in (errno.ENOENT, errno.ENAMETOOLONG):
        return FsRefused("missing", path)
    if exc.errno == errno.ELOOP:
        return FsRefused("symlink", path)
    if exc.errno == errno.ENOTDIR and directory:
        # O_DIRECTORY|O_NOFOLLOW reports a symlink as ENOTDIR: look (without following).
        try:
            info = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except OSError:
            return FsRefused("io", path)
        if stat.S_ISLNK(info.st_mode):
            return FsRefused("symlink", path)
        return FsRefused("not_directory", path)
    return FsRefused("io", path)
