"""The golden file: the allowlist you can audit at 3 a.m.

A golden file holds one name per line, sorted. Blank lines and lines starting
with ``#`` are ignored; surrounding whitespace is stripped. CI compares the
printed names of a table to it: a surprise name fails the build, and so does
a missing one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import final

__all__ = ["GoldenDifference", "compare", "compare_names", "format_difference", "read_golden"]


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
        OSError: the file cannot be read.
        UnicodeDecodeError: the file is not UTF-8.
    """
    text = Path(path).read_text(encoding="utf-8")
    stripped = (line.strip() for line in text.splitlines())
    return tuple(line for line in stripped if line and not line.startswith("#"))


def compare_names(names: Iterable[str], expected: Iterable[str]) -> GoldenDifference:
    """Compare two name lists (order and repetition do not matter)."""
    actual, wanted = set(names), set(expected)
    return GoldenDifference(tuple(sorted(actual - wanted)), tuple(sorted(wanted - actual)))


def compare(names: Iterable[str], golden: str | Path) -> GoldenDifference:
    """Compare ``names`` to the golden file at ``golden``.

    Raises:
        OSError: the golden file cannot be read.
        UnicodeDecodeError: the golden file is not UTF-8.
    """
    difference = compare_names(names, read_golden(golden))
    return GoldenDifference(difference.surprise, difference.missing, Path(golden))


def format_difference(difference: GoldenDifference) -> str:
    """A short report, one name per line, for a terminal or a failed test (no trailing newline)."""
    where = f" {difference.golden_path}" if difference.golden_path is not None else ""
    if difference.ok:
        return f"names match the golden file{where}"
    lines = [f"names differ from the golden file{where}:"]
    lines.extend(f"  surprise (not in the golden file): {name}" for name in difference.surprise)
    lines.extend(f"  missing (in the golden file only): {name}" for name in difference.missing)
    return "\n".join(lines)
