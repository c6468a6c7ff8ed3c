"""The ledger: one write transaction per operation, over either backend.

:class:`Ledger` opens its connection lazily, creates or checks the schema
once, and runs every operation inside :meth:`Ledger.transaction` (SQLite:
``BEGIN IMMEDIATE``; PostgreSQL: a serializable transaction with the active
flow row locked). Any database failure becomes
:class:`~boring_dispatch.errors.SetupUnavailable`: the call fails closed.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from typing import NoReturn, Protocol

from boring_dispatch.errors import RouteError, RuntimeMisconfigured, SetupUnavailable
from boring_dispatch.setup.ledger._schema import SCHEMA_VERSION

__all__ = ["Backend", "Ledger", "Tx"]

Row = tuple[object, ...]


class Cursor(Protocol):
    def execute(self, sql: str, params: Sequence[object] = ...) -> object: ...
    def fetchone(self) -> Row | None: ...
    def fetchall(self) -> list[Row]: ...


class Backend(Protocol):
    """What differs between SQLite and PostgreSQL."""

    #: ``sqlite`` or ``postgresql`` (events and benchmarks name it).
    name: str

    def connect(self) -> object:
        """A new connection (autocommit: transactions are begun explicitly)."""
        ...

    def cursor(self, connection: object) -> Cursor: ...

    def begin(self, cursor: Cursor) -> None:
        """Start a write transaction that serializes with every other writer."""
        ...

    def end(self, connection: object, cursor: Cursor, *, commit: bool) -> None: ...

    def statements(self) -> tuple[str, ...]:
        """The schema's DDL for this backend."""
        ...

    def placeholder(self, sql: str) -> str:
        """``sql`` written with ``?`` placeholders, in this backend's style."""
        ...

    def is_database_error(self, error: BaseException) -> bool: ...

    def is_unique_violation(self, error: BaseException) -> bool: ...

    def now(self, cursor: Cursor) -> float:
        """The current time in seconds since the epoch, by the clock all writers share.

        Leases are written and compared by this clock: PostgreSQL's server
        clock (several hosts whose own clocks differ), the host's for SQLite.
        """
        ...

    def close(self, connection: object) -> None: ...


class Tx:
    """One open transaction: statements with ``?`` placeholders."""

    __slots__ = ("_backend", "_cursor")

    def __init__(self, backend: Backend, cursor: Cursor) -> None:
        self._backend = backend
        self._cursor = cursor

    def run(self, sql: str, *params: object) -> None:
        self._cursor.execute(self._backend.placeholder(sql), params)

    def one(self, sql: str, *params: object) -> Row | None:
        self._cursor.execute(self._backend.placeholder(sql), params)
        return self._cursor.fetchone()

    def all(self, sql: str, *params: object) -> list[Row]:
        self._cursor.execute(self._backend.placeholder(sql), params)
        return self._cursor.fetchall()

    def is_unique_violation(self, error: BaseException) -> bool:
        return self._backend.is_unique_violation(error)

    def now(self) -> float:
        """The ledger's clock (see :meth:`Backend.now`): leases never compare two hosts' clocks."""
        return self._backend.now(self._cursor)


class Ledger:
    """The durable state of setups and flows, reached only through :meth:`transaction`."""

    __slots__ = ("_backend", "_connection", "_lock")

    def __init__(self, backend: Backend) -> None:
        self._backend = backend
        self._connection: object | None = None
        # One connection per ledger: threads of one process take turns (other
        # processes and hosts are serialized by the database's own lock).
        self._lock = threading.RLock()

    @property
    def backend_name(self) -> str:
        return self._backend.name

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Tx]:
        """See :meth:`_transaction`; one thread at a time."""
        with self._lock, self._transaction() as tx:
            yield tx

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[Tx]:
        """One write transaction; committed when the block ends, rolled back on any error.

        Raises:
            SetupUnavailable: the database cannot be reached or refused a statement.
            RuntimeMisconfigured: the ledger's schema is newer than this dispatcher's.
        """
        backend = self._backend
        connection = self._connect()
        try:
            cursor = backend.cursor(connection)
            backend.begin(cursor)
        except Exception as error:  # noqa: BLE001 - classified by _fail, re-raised or closed
            self._fail(error)
        commit = False
        try:
            yield Tx(backend, cursor)
            commit = True
        except BaseException as error:
            with contextlib.suppress(BaseException):
                backend.end(connection, cursor, commit=False)
            if isinstance(error, RouteError) or not backend.is_database_error(error):
                raise
            self._fail(error)
        if commit:
            try:
                backend.end(connection, cursor, commit=True)
            except Exception as error:  # noqa: BLE001 - classified by _fail
                self._fail(error)

    def close(self) -> None:
        with self._lock:
            self._close()

    def _close(self) -> None:
        if self._connection is not None:
            with contextlib.suppress(BaseException):
                self._backend.close(self._connection)
            self._connection = None

    def _connect(self) -> object:
        if self._connection is not None:
            return self._connection
        backend = self._backend
        try:
            connection = backend.connect()
        except RouteError:
            raise
        except Exception as error:  # noqa: BLE001 - classified by _fail
            self._fail(error)
        self._connection = connection
        try:
            with self._transaction() as tx:
                _migrate(tx, backend)
        except BaseException:
            self._close()
            raise
        return connection

    def _fail(self, error: BaseException) -> NoReturn:
        if isinstance(error, RouteError):
            raise error
        if not self._backend.is_database_error(error) and not isinstance(error, OSError):
            raise error
        self._close()
        raise SetupUnavailable(
            f"the setup ledger is unavailable ({self._backend.name}: {type(error).__name__})"
        ) from None


def _migrate(tx: Tx, backend: Backend) -> None:
    """Create the schema when absent; refuse a newer one (forward-only migrations)."""
    tx.run("CREATE TABLE IF NOT EXISTS ledger_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    row = tx.one("SELECT value FROM ledger_meta WHERE key = 'schema_version'")
    found = None if row is None else str(row[0])
    if found is not None and (not found.isdigit() or int(found) > SCHEMA_VERSION):
        raise RuntimeMisconfigured(
            f"the setup ledger has schema version {found[:20]!r}, newer than "
            f"{SCHEMA_VERSION}: upgrade boring-dispatch"
        )
    for statement in backend.statements():
        tx.run(statement)
    if found is None:
        tx.run(
            "INSERT INTO ledger_meta (key, value) VALUES ('schema_version', ?)",
            str(SCHEMA_VERSION),
        )
