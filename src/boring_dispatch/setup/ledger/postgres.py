"""The shared backend: PostgreSQL through psycopg 3 (the ``ledger-postgres`` extra)."""

from __future__ import annotations

from typing import Final, cast

from boring_dispatch.errors import SetupUnavailable
from boring_dispatch.setup.ledger._schema import STATEMENTS_POSTGRES
from boring_dispatch.setup.ledger.store import Cursor, Ledger

__all__ = ["open_postgres"]

#: Every write transaction takes this advisory lock: writers serialize, as with SQLite.
_LOCK_KEY: Final = 0x5E7B_D15B
_CONNECT_TIMEOUT_S: Final = 5


class PostgresBackend:
    name = "postgresql"

    def __init__(self, url: str) -> None:
        self._url: Final = url

    def connect(self) -> object:
        try:
            import psycopg
        except ImportError:
            raise SetupUnavailable(
                "a PostgreSQL ledger needs psycopg: pip install 'boring-dispatch[ledger-postgres]'"
            ) from None
        return psycopg.connect(self._url, autocommit=True, connect_timeout=_CONNECT_TIMEOUT_S)

    def cursor(self, connection: object) -> Cursor:
        return cast("Cursor", connection.cursor())  # type: ignore[attr-defined]

    def begin(self, cursor: Cursor) -> None:
        cursor.execute("BEGIN")
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))

    def end(self, connection: object, cursor: Cursor, *, commit: bool) -> None:  # noqa: ARG002
        cursor.execute("COMMIT" if commit else "ROLLBACK")

    def statements(self) -> tuple[str, ...]:
        return STATEMENTS_POSTGRES

    def placeholder(self, sql: str) -> str:
        return sql.replace("?", "%s")

    def is_database_error(self, error: BaseException) -> bool:
        try:
            import psycopg
        except ImportError:
            return False
        return isinstance(error, psycopg.Error)

    def is_unique_violation(self, error: BaseException) -> bool:
        try:
            import psycopg
        except ImportError:
            return False
        return isinstance(error, psycopg.errors.UniqueViolation)

    def now(self, cursor: Cursor) -> float:
        # The server's clock: the hosts of one ledger compare leases by one clock.
        cursor.execute("SELECT EXTRACT(EPOCH FROM clock_timestamp())::float8")
        row = cursor.fetchone()
        if row is None:
            raise SetupUnavailable("the PostgreSQL ledger did not tell its time")
        return float(str(row[0]))

    def close(self, connection: object) -> None:
        connection.close()  # type: ignore[attr-defined]


def open_postgres(url: str) -> Ledger:
    return Ledger(PostgresBackend(url))
