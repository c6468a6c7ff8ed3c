"""Which ledger a repository uses: ``--ledger``, ``BORING_DISPATCH_LEDGER``, or the default file.

A URL ``postgresql://...`` (or ``postgres://...``) selects PostgreSQL; an
absolute path selects that SQLite file; nothing selects the embedded default
under the XDG state directory. Never read from ``officina.toml``.
"""

from __future__ import annotations

import os
from pathlib import Path

from boring_dispatch.errors import RuntimeMisconfigured
from boring_dispatch.setup.ledger.paths import LEDGER_ENV, default_ledger_path
from boring_dispatch.setup.ledger.store import Ledger

__all__ = ["is_postgres_url", "open_ledger"]


def is_postgres_url(text: str) -> bool:
    return text.startswith(("postgresql://", "postgres://"))


def open_ledger(config_path: Path, ledger: str | None = None) -> Ledger:
    """The ledger for ``config_path`` (not connected yet: the first transaction connects).

    Raises:
        RuntimeMisconfigured: a ledger that is neither a PostgreSQL URL nor an absolute path.
    """
    chosen = ledger if ledger is not None else os.environ.get(LEDGER_ENV, "")
    if is_postgres_url(chosen):
        from boring_dispatch.setup.ledger.postgres import open_postgres

        return open_postgres(chosen)
    from boring_dispatch.setup.ledger.sqlite import open_sqlite

    if not chosen:
        return open_sqlite(default_ledger_path(config_path))
    if not Path(chosen).is_absolute() or "\x00" in chosen:
        raise RuntimeMisconfigured(
            "the setup ledger must be a postgresql:// URL or an absolute SQLite file path"
        )
    return open_sqlite(Path(chosen))
