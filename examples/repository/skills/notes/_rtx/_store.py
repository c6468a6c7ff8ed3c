"""Where the notes live, and how one is read without following symlinks.

Imported by ``reader.py`` with a relative import (``from ._store import ...``):
the confined importer serves every file under this module's root as one
package, and refuses imports of other modules' files.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["NOTES_DIR", "note_names", "read_note"]

NOTES_DIR = Path(__file__).parent / "notes"
_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_MAX_BYTES = 64 * 1024


def note_names() -> list[str]:
    """The names of the notes, sorted."""
    return sorted(p.stem for p in NOTES_DIR.glob("*.txt") if _NAME.fullmatch(p.stem))


def read_note(name: str) -> str:
    """Return the text of note ``name``.

    Raises:
        ValueError: the name is not a note name.
        OSError: the note is missing, is a symlink or cannot be read.
    """
    # The binding's pattern already checked the name; a gateway checks again.
    if not _NAME.fullmatch(name):
        raise ValueError("not a note name")
    fd = os.open(NOTES_DIR / f"{name}.txt", os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as handle:
        return handle.read(_MAX_BYTES).decode("utf-8")
