"""Code point ranges for the RE2 translation: Python's own classes, as ``(low, high)`` pairs.

``\\d``, ``\\s`` and ``\\w`` are computed from this Python's ``re`` (or read from
the tables shipped in :mod:`._regex_tables` for known Unicode versions), so a
translated class matches exactly the code points ``re`` would.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import Final

__all__ = [
    "LAST_CODE_POINT",
    "Ranges",
    "category_ranges",
    "complement",
    "decode_ranges",
    "encode_ranges",
    "every_code_point",
    "merge",
]

#: The last Unicode code point.
LAST_CODE_POINT: Final = 0x10FFFF
_LAST: Final = LAST_CODE_POINT
Ranges = tuple[tuple[int, int], ...]


@cache
def category_ranges(name: str, *, ascii_only: bool) -> Ranges:
    """Code point ranges of ``\\d``, ``\\s`` or ``\\w`` as this Python's ``re`` matches them."""
    if ascii_only:
        return _runs("(?a)\\" + name + "+", "".join(map(chr, range(128))))
    import unicodedata

    from boring_dispatch.repository._regex_tables import TABLES

    shipped = TABLES.get(unicodedata.unidata_version, {}).get(name)
    if shipped is not None:
        return decode_ranges(shipped)
    return _runs("\\" + name + "+", every_code_point())


def every_code_point() -> str:
    """All of U+0000..U+10FFFF in order, surrogates included (about 4 MB)."""
    import array

    codes = array.array("I", range(_LAST + 1))
    if codes.itemsize != 4:  # pragma: no cover - no CPython platform has another size
        codes = array.array("L", range(_LAST + 1))
    return codes.tobytes().decode("utf-32-le" if _little() else "utf-32-be", "surrogatepass")


def _little() -> bool:
    import sys

    return sys.byteorder == "little"


def _runs(pattern: str, text: str) -> Ranges:
    base = ord(text[0])
    return tuple((base + m.start(), base + m.end() - 1) for m in re.finditer(pattern, text))


def encode_ranges(ranges: Iterable[tuple[int, int]]) -> str:
    return " ".join(f"{lo:x}" if lo == hi else f"{lo:x}-{hi:x}" for lo, hi in ranges)


def decode_ranges(text: str) -> Ranges:
    out: list[tuple[int, int]] = []
    for item in text.split():
        low, _, high = item.partition("-")
        out.append((int(low, 16), int(high or low, 16)))
    return tuple(out)


def merge(parts: Iterable[tuple[int, int]]) -> Ranges:
    out: list[tuple[int, int]] = []
    for low, high in sorted(parts):
        if low > high:
            continue
        if out and low <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], high))
        else:
            out.append((low, high))
    return tuple(out)


def complement(ranges: Ranges) -> Ranges:
    out: list[tuple[int, int]] = []
    start = 0
    for low, high in ranges:
        if low > start:
            out.append((start, low - 1))
        start = high + 1
    if start <= _LAST:
        out.append((start, _LAST))
    return tuple(out)
