"""The one versioned ledger schema, spelled for SQLite and for PostgreSQL.

Migrations go forward only; a ledger whose ``schema_version`` is newer than
:data:`SCHEMA_VERSION` is refused, never guessed at.
"""

from __future__ import annotations

from typing import Final

__all__ = ["SCHEMA_VERSION", "STATEMENTS_POSTGRES", "STATEMENTS_SQLITE"]

SCHEMA_VERSION: Final = 1

_COMMON: Final = (
    ("CREATE TABLE IF NOT EXISTS ledger_meta ( key TEXT PRIMARY KEY, value TEXT NOT NULL)"),
    (
        "CREATE TABLE IF NOT EXISTS setups ("
        " id TEXT PRIMARY KEY,"
        " version INTEGER NOT NULL,"
        " state TEXT NOT NULL CHECK (state IN ('ready', 'failed', 'invalidated', 'teardown')),"
        " fingerprint TEXT NOT NULL,"
        " flow_id TEXT,"
        " updated_at DOUBLE PRECISION NOT NULL)"
    ),
    (
        "CREATE TABLE IF NOT EXISTS flows ("
        " id TEXT PRIMARY KEY,"
        " root TEXT NOT NULL,"
        " state TEXT NOT NULL CHECK (state IN ('active', 'completed', 'failed', 'abandoned')),"
        " steps TEXT NOT NULL,"
        " current INTEGER NOT NULL,"
        " step_state TEXT NOT NULL CHECK (step_state IN ('pending', 'running')),"
        " resume TEXT NOT NULL,"
        " lease_owner TEXT,"
        " lease_expires_at DOUBLE PRECISION,"
        " created_at DOUBLE PRECISION NOT NULL,"
        " updated_at DOUBLE PRECISION NOT NULL)"
    ),
    # At most one active flow per ledger: the database enforces it, not the code alone.
    "CREATE UNIQUE INDEX IF NOT EXISTS flows_one_active ON flows (state) WHERE state = 'active'",
)

_EVENTS: Final = (
    " at DOUBLE PRECISION NOT NULL,"
    " flow TEXT,"
    " setup TEXT,"
    " kind TEXT NOT NULL,"
    " detail TEXT NOT NULL)"
)

STATEMENTS_SQLITE: Final = (
    *_COMMON,
    "CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY AUTOINCREMENT," + _EVENTS,
)
STATEMENTS_POSTGRES: Final = (
    *_COMMON,
    "CREATE TABLE IF NOT EXISTS events (seq BIGSERIAL PRIMARY KEY," + _EVENTS,
)
