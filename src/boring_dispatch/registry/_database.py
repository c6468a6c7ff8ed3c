"""One small connection over SQLite (stdlib) or PostgreSQL (psycopg 3), by URL.

``sqlite:///absolute/path.db`` (``sqlite:////absolute/path.db`` too) or
``postgresql://user@host:port/db`` (also ``postgres://``). SQL is written
once with ``?`` placeholders; PostgreSQL gets ``%s``. A URL is operator
configuration: it never appears in a message (it may hold a password).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Final, Protocol, final
from urllib.parse import quote, urlsplit

from boring_dispatch.errors import RegistryInvalid

__all__ = ["Connection", "DatabaseUnavailable", "connect"]

_CONNECT_TIMEOUT_S: Final = 5
_SQLITE_BUSY_S: Final = 5.0


class DatabaseUnavailable(RegistryInvalid):
    """The database cannot be reached, opened or read (the message names no URL)."""


class _Cursor(Protocol):
    def execute(self, sql: str, params: Sequence[object] = ...) -> object: ...
    def fetchall(self) -> list[tuple[object, ...]]: ...


@final
class Connection:
    """A connection with explicit transactions and one ``execute``."""

    def __init__(self, raw: object, *, postgres: bool) -> None:
        self._raw = raw
        self._postgres = postgres

    def execute(self, sql: str, params: Sequence[object] = ()) -> list[tuple[object, ...]]:
        """Run one statement; the rows it returns (``[]`` for none)."""
        text = sql.replace("?", "%s") if self._postgres else sql
        cursor: _Cursor = self._raw.cursor()  # type: ignore[attr-defined]
        cursor.execute(text, tuple(params))
        if self._postgres:
            description = getattr(cursor, "description", None)
            return list(cursor.fetchall()) if description is not None else []
        return list(cursor.fetchall())

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All statements inside, or none of them."""
        if self._postgres:
            with self._raw.transaction():  # type: ignore[attr-defined]
                yield
            return
        self.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.execute("ROLLBACK")
            raise
        self.execute("COMMIT")

    def close(self) -> None:
        """Close the connection."""
        self._raw.close()  # type: ignore[attr-defined]

    def errors(self) -> tuple[type[Exception], ...]:
        """The driver's own error base classes (what a failed statement raises)."""
        if self._postgres:
            import psycopg

            return (psycopg.Error,)
        return (sqlite3.Error,)


def connect(url: str, *, write: bool) -> Connection:
    """Open the database at ``url`` (``write``: SQLite may create the file).

    Raises:
        RegistryInvalid: not a ``sqlite:///`` or ``postgresql://`` URL.
        DatabaseUnavailable: the database cannot be opened or reached, or the
            PostgreSQL driver is not installed (``boring-dispatch[postgres]``).
    """
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        return _sqlite(parts.netloc, parts.path, write=write)
    if parts.scheme in ("postgresql", "postgres"):
        return _postgres(url)
    raise RegistryInvalid("a database URL is sqlite:///ABSOLUTE/PATH or postgresql://...")


def _sqlite(netloc: str, path: str, *, write: bool) -> Connection:
    if netloc or not path.startswith("/"):
        raise RegistryInvalid("a SQLite URL is sqlite:///ABSOLUTE/PATH (three slashes)")
    path = "/" + path.lstrip("/")  # sqlite:////abs (SQLAlchemy's spelling) is the same file
    if not write and not Path(path).is_file():
        raise DatabaseUnavailable("cannot open the SQLite database: no such file")
    mode = "rwc" if write else "ro"
    try:
        raw = sqlite3.connect(
            f"file:{quote(path)}?mode={mode}",
            uri=True,
            isolation_level=None,
            timeout=_SQLITE_BUSY_S,
        )
        raw.execute("PRAGMA foreign_keys = ON")
    except sqlite3.Error as error:
        raise DatabaseUnavailable(
            f"cannot open the SQLite database: {type(error).__name__}"
        ) from None
    return Connection(raw, postgres=False)


def _postgres(url: str) -> Connection:
    try:
        import psycopg
    except ImportError:
        raise DatabaseUnavailable(
            "a postgresql:// URL needs psycopg 3: pip install 'boring-dispatch[postgres]'"
        ) from None
    try:
        raw = psycopg.connect(url, connect_timeout=_CONNECT_TIMEOUT_S, autocommit=True)
    except psycopg.Error as error:
        raise DatabaseUnavailable(
            f"cannot reach the PostgreSQL database: {type(error).__name__}"
        ) from None
    return Connection(raw, postgres=True)
