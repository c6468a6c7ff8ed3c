"""Where the embedded ledger lives: one SQLite file per configuration path."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Final

__all__ = ["LEDGER_ENV", "default_ledger_path"]

#: The environment variable naming a ledger URL (``postgresql://...``) or SQLite path.
LEDGER_ENV: Final = "BORING_DISPATCH_LEDGER"


def default_ledger_path(config_path: Path) -> Path:
    """``$XDG_STATE_HOME/boring-dispatch/ledger-<hash of the clean configuration path>.sqlite3``.

    A relative or empty ``XDG_STATE_HOME`` is ignored (the XDG rule); the
    fallback is ``~/.local/state``.
    """
    state = os.environ.get("XDG_STATE_HOME", "")
    base = Path(state) if state and Path(state).is_absolute() else Path.home() / ".local" / "state"
    # Hashed as the configuration loader reads it: "//r", "/r//a" and "/r/./a" name one
    # file, so they share one ledger (two would keep two setup states for one repository).
    names = [name for name in os.fspath(config_path).split("/") if name not in ("", ".")]
    digest = hashlib.sha256(os.fsencode("/" + "/".join(names))).hexdigest()[:24]
    return base / "boring-dispatch" / f"ledger-{digest}.sqlite3"
