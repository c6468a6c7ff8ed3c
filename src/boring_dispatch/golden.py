"""The golden file: the allowlist you can audit at 3 a.m.

A golden file holds one name per line, sorted. Blank lines and lines starting
with ``#`` are ignored; surrounding spaces and tabs are stripped. CI compares
the printed names of a table to it: a surprise name fails the build, and so
does a missing one.

The file is read as a reviewer sees it: lines end at ``\n`` only, and a line
or paragraph separator (U+2028, U+0085...), a control character, a format
character (bidi controls, zero-width characters, a BOM) anywhere in the file
refuses the whole file with its line number. It must be a regular file that
is not world-writable, of at most 1 MiB (a FIFO or ``/dev/zero`` is refused,
never read).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import final

from boring_dispatch._files import MAX_GOLDEN_BYTES, FileRefused, read_lines
from boring_dispatch._quote import shown_path

__all__ = [
    "FileRefused",
    "GoldenDifference",
    "compare",
    "compare_names",
    "format_difference",
    "read_golden",
]


@final
@dataclass(frozen=True, slots=True)
class GoldenDifference:
    """How a name list differs from its golden list. Both tuples are sorted."""

    #: Names the table has and the golden file does not: a tool nobody reviewed.
    surprise: tuple[str, ...]
    #: Names the golden file has and the table does not: a tool that went away.
    missing: tuple[str, ...]
    #: The golden file compared against, when there was one.
    golden_path: Path | None = None

    @property
    def ok(self) -> bool:
        """True when the lists are the same set of names."""
        return not self.surprise and not self.missing


def read_golden(path: str | Path) -> tuple[str, ...]:
    """The names listed in a golden file, in file order.

    Raises:
        OSError: the file cannot be opened (missing, permissions).
        FileRefused: not a regular file, world-writable, too large, a line that
            is not UTF-8 or holds a refused character (``line`` says which).
    """
    lines = read_lines(Path(path), MAX_GOLDEN_BYTES)
    stripped = (line.text.strip(" \t") for line in lines if line.text is not None)
    return tuple(line for line in stripped if line and not line.startswith("#"))


def compare_names(names: Iterable[str], expected: Iterable[str]) -> GoldenDifference:
    """Compare two name lists (order and repetition do not matter)."""
    actual, wanted = set(names), set(expected)
    return GoldenDifference(tuple(sorted(actual - wanted)), tuple(sorted(wanted - actual)))


def compare(names: Iterable[str], golden: str | Path) -> GoldenDifference:
    """Compare ``names`` to the golden file at ``golden``.

    Raises:
        OSError: the golden file cannot be opened.
        FileRefused: the golden file was refused (see :func:`read_golden`).
    """
    difference = compare_names(names, read_golden(golden))
    return GoldenDifference(difference.surprise, difference.missing, Path(golden))


def format_difference(difference: GoldenDifference) -> str:
    """A short report, one name per line, for a terminal or a failed test (no trailing newline)."""
    where = "" if difference.golden_path is None else f" {shown_path(difference.golden_path)}"
    if difference.ok:
        return f"names match the golden file{where}"
    lines = [f"names differ from the golden file{where}:"]
    lines.extend(f"  surprise (not in the golden file): {name}" for name in difference.surprise)
    lines.extend(f"  missing (in the golden file only): {name}" for name in difference.missing)
    return "\n".join(lines)
