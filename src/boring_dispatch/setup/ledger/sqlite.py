"""The embedded backend: one SQLite file, WAL, ``synchronous=FULL``, ``BEGIN IMMEDIATE``."""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from pathlib import Path
from typing import Final, cast

from boring_dispatch.setup.ledger._schema import STATEMENTS_SQLITE
from boring_dispatch.setup.ledger.store import Cursor, Ledger

__all__ = ["BUSY_TIMEOUT_MS", "SqliteBackend", "open_sqlite"]

#: How long a writer waits for the lock before the call fails closed.
BUSY_TIMEOUT_MS: Final = 10_000


class SqliteBackend:
    """A ledger file, created with mode 0600 (its directory 0700) on first use.

    An existing file or directory is held to the same privacy (``_private_file``).
    """

    name = "sqlite"

    def __init__(self, path: Path) -> None:
        self.path: Final = path

    def connect(self) -> object:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        _private_file(self.path)
        connection = sqlite3.connect(
            self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
        )
        connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = FULL")
        connection.execute("PRAGMA foreign_keys = ON")
        return connection

    def cursor(self, connection: object) -> Cursor:
        return cast("Cursor", cast("sqlite3.Connection", connection).cursor())

    def begin(self, cursor: Cursor) -> None:
        cursor.execute("BEGIN IMMEDIATE")

    def end(self, connection: object, cursor: Cursor, *, commit: bool) -> None:  # noqa: ARG002
        cursor.execute("COMMIT" if commit else "ROLLBACK")

    def statements(self) -> tuple[str, ...]:
        return STATEMENTS_SQLITE

    def placeholder(self, sql: str) -> str:
        return sql

    def is_database_error(self, error: BaseException) -> bool:
        return isinstance(error, sqlite3.Error)

    def is_unique_violation(self, error: BaseException) -> bool:
        return isinstance(error, sqlite3.IntegrityError) and "UNIQUE" in str(error)

    def now(self, cursor: Cursor) -> float:  # noqa: ARG002 - one host: its own clock
        return time.time()

    def close(self, connection: object) -> None:
        cast("sqlite3.Connection", connection).close()


def _private_file(path: Path) -> None:
    """Create or check the ledger file: ours, in a directory of ours no one else can write.

    The directory and the file are opened without following a symlink and
    checked on their descriptors: the directory must be the effective user's
    and writable by no one else (SQLite then opens the file and its ``-wal``
    and ``-shm`` companions by path, where nobody else can swap them), the
    file a regular file of ours with one link; group and other bits are taken
    off it. Anything else raises ``OSError`` (the ledger is then unavailable).
    """
    uid = os.geteuid()
    directory = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        info = os.fstat(directory)
        if info.st_uid != uid or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise PermissionError("the ledger directory is not private to this user")
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        fd = os.open(path.name, flags, 0o600, dir_fd=directory)
    finally:
        os.close(directory)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1 or info.st_uid != uid:
            raise PermissionError("the ledger file is not a private regular file")
        if stat.S_IMODE(info.st_mode) & 0o077:
            os.fchmod(fd, stat.S_IMODE(info.st_mode) & 0o700)
    finally:
        os.close(fd)


def open_sqlite(path: Path) -> Ledger:
    """A ledger on the SQLite file ``path`` (opened on its first transaction)."""
    return Ledger(SqliteBackend(path))
