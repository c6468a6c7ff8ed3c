"""The embedded backend: one SQLite file, WAL, ``synchronous=FULL``, ``BEGIN IMMEDIATE``."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Final, cast

from boring_dispatch.setup.ledger._schema import STATEMENTS_SQLITE
from boring_dispatch.setup.ledger.store import Cursor, Ledger

__all__ = ["BUSY_TIMEOUT_MS", "SqliteBackend", "open_sqlite"]

#: How long a writer waits for the lock before the call fails closed.
BUSY_TIMEOUT_MS: Final = 10_000


class SqliteBackend:
    """A ledger file, created with mode 0600 (its directory 0700) on first use."""

    name = "sqlite"

    def __init__(self, path: Path) -> None:
        self.path: Final = path

    def connect(self) -> object:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        # Create the file ourselves, 0600 and never through a symlink, before SQLite opens it.
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        os.close(fd)
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

    def close(self, connection: object) -> None:
        cast("sqlite3.Connection", connection).close()


def open_sqlite(path: Path) -> Ledger:
    """A ledger on the SQLite file ``path`` (opened on its first transaction)."""
    return Ledger(SqliteBackend(path))
