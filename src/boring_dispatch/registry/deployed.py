"""Deployed tables: the enabled set of a surface as database rows; handlers stay in code.

::

    deploy(SUPPORT, read_golden("support.golden"), surface="support",
           database="sqlite:////srv/dispatch.db", deployed_by="alice")
    table = load_deployed(SUPPORT, surface="support", database="sqlite:////srv/dispatch.db")

One row per enabled tool: ``(surface, name, schema_hash, deployed_at,
deployed_by)``. The code's :class:`~boring_dispatch.registry.registry.Registry`
is the typed dict of every handler; the rows choose which of them a surface
enables. :func:`load_deployed` reads the rows once and builds the table
(``code.restrict(names)``, so the same limits, sinks and policy bits):

- a row naming a tool the code does not have fails the load;
- a row whose schema hash is not the code's fails the load (the reviewed
  schema is not the one that would run);
- a tool without a row is not enabled;
- a surface with no row fails the load (a misspelt surface is not an empty table).

Nothing half-built: the load returns a table or raises. Nothing at run time
writes a row: the dispatch path never touches the database, the set is read
once when the table is built, and ``restrict`` still only shrinks it.
:func:`deploy` replaces a surface's rows in one transaction, after refusing
every name the code lacks.

SQLite (stdlib) by default, PostgreSQL through psycopg 3 with the same code:
``sqlite:///ABSOLUTE/PATH`` or ``postgresql://...``. The database records its
schema version; a newer one is refused, never guessed at.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final

from boring_dispatch._files import bad_character
from boring_dispatch._quote import shown
from boring_dispatch.errors import RegistryInvalid
from boring_dispatch.registry._canonical import canonical_text
from boring_dispatch.registry._database import Connection, DatabaseUnavailable, connect

if TYPE_CHECKING:
    from boring_dispatch.registry.registry import Registry

__all__ = ["SCHEMA_VERSION", "DatabaseUnavailable", "deploy", "load_deployed", "schema_hash"]

#: The version of the tables this dispatcher writes and reads.
SCHEMA_VERSION: Final = 1
_NAME: Final = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_WHO: Final = re.compile(r"[^\x00-\x1f\x7f]{1,128}")
_CREATE: Final = (
    "CREATE TABLE IF NOT EXISTS boring_dispatch_schema (version INTEGER NOT NULL)",
    (
        "CREATE TABLE IF NOT EXISTS boring_dispatch_deployed ("
        " surface TEXT NOT NULL, name TEXT NOT NULL, schema_hash TEXT NOT NULL,"
        " deployed_at TEXT NOT NULL, deployed_by TEXT NOT NULL, PRIMARY KEY (surface, name))"
    ),
)


def schema_hash(registry: Registry, name: str) -> str:
    """``sha256:<hex>`` of the tool's published argument schema (canonical JSON).

    Raises:
        KeyError: the table has no tool ``name``.
    """
    schema = next(s for s in registry.tool_schemas("mcp") if s["name"] == name)
    digest = hashlib.sha256(canonical_text(schema["inputSchema"]).encode("utf-8"))
    return f"sha256:{digest.hexdigest()}"


def deploy(
    code: Registry, names: Iterable[str], *, surface: str, database: str, deployed_by: str
) -> int:
    """Make ``names`` the enabled set of ``surface``, in one transaction; the number of rows.

    Raises:
        RegistryInvalid: a name the code lacks (nothing is written), a bad
            surface or ``deployed_by``, a database of a newer schema.
        DatabaseUnavailable: the database cannot be opened or written.
    """
    _check_surface(surface)
    if (
        type(deployed_by) is not str
        or _WHO.fullmatch(deployed_by) is None
        or bad_character(deployed_by) is not None  # C1, bidi, zero-width, separators
    ):
        raise RegistryInvalid(
            "deployed_by must be 1 to 128 characters, no control, format or separator character"
        )
    chosen = sorted(set(names))
    lacking = [name for name in chosen if name not in code.tools]
    if lacking:
        raise RegistryInvalid(
            f"the code has no enabled tool {', '.join(shown(n, 64) for n in lacking[:20])}: "
            "nothing deployed"
        )
    now = datetime.now(UTC).isoformat(timespec="seconds")
    rows = [(surface, name, schema_hash(code, name), now, deployed_by) for name in chosen]
    connection = connect(database, write=True)
    try:
        with _failures(connection, "write"), connection.transaction():
            for statement in _CREATE:
                connection.execute(statement)
            _check_version(connection, create=True)
            connection.execute("DELETE FROM boring_dispatch_deployed WHERE surface = ?", (surface,))
            for row in rows:
                connection.execute(
                    "INSERT INTO boring_dispatch_deployed"
                    " (surface, name, schema_hash, deployed_at, deployed_by)"
                    " VALUES (?, ?, ?, ?, ?)",
                    row,
                )
    finally:
        connection.close()
    return len(rows)


def load_deployed(code: Registry, *, surface: str, database: str) -> Registry:
    """The table of ``surface``: the code's tools that have a row, checked against it.

    Raises:
        RegistryInvalid: no row for the surface, a row naming a tool the code
            lacks, a schema-hash mismatch, a database of a newer schema or none.
        DatabaseUnavailable: the database cannot be opened or read.
    """
    _check_surface(surface)
    connection = connect(database, write=False)
    try:
        with _failures(connection, "read"):
            _check_version(connection, create=False)
            rows = connection.execute(
                "SELECT name, schema_hash FROM boring_dispatch_deployed WHERE surface = ?"
                " ORDER BY name",
                (surface,),
            )
    finally:
        connection.close()
    if not rows:
        raise RegistryInvalid(f"no deployed tool for surface {shown(surface)}")
    names = []
    for name, digest in rows:
        if type(name) is not str or name not in code.tools:
            raise RegistryInvalid(
                f"surface {shown(surface)}: a row names tool {shown(name, 64)}, "
                "which the code does not have"
            )
        if digest != schema_hash(code, name):
            raise RegistryInvalid(
                f"surface {shown(surface)}: tool {shown(name, 64)} was deployed with another "
                "argument schema; review and deploy again"
            )
        names.append(name)
    return code.restrict(names)


def _check_surface(surface: object) -> None:
    if type(surface) is not str or _NAME.fullmatch(surface) is None:
        raise RegistryInvalid("a surface name must match [A-Za-z0-9_.-]{1,64}")


def _check_version(connection: Connection, *, create: bool) -> None:
    try:
        found = connection.execute("SELECT version FROM boring_dispatch_schema")
    except connection.errors():
        if create:
            raise
        raise RegistryInvalid("not a deployed-table database (no schema version)") from None
    versions = [row[0] for row in found]
    if not versions and create:
        connection.execute("INSERT INTO boring_dispatch_schema (version) VALUES (?)", (1,))
        return
    if len(versions) != 1 or type(versions[0]) is not int or versions[0] < 1:
        raise RegistryInvalid("the database's schema version is not one positive integer")
    if versions[0] > SCHEMA_VERSION:
        raise RegistryInvalid(
            f"the database has schema version {versions[0]}, newer than this "
            f"dispatcher reads ({SCHEMA_VERSION})"
        )


@contextmanager
def _failures(connection: Connection, action: str) -> Iterator[None]:
    """Turn a driver error into :class:`DatabaseUnavailable` naming its type only."""
    try:
        yield
    except connection.errors() as error:
        raise DatabaseUnavailable(
            f"cannot {action} the deployed tables: {type(error).__name__}"
        ) from None
