"""Reading one entry of one section of a blueprint without building the rest.

A source blueprint holds every interface of its source; a request needs one.
:func:`select_block_yaml` returns what :func:`project` makes of the full
strict load, after building only the top-level fields asked for and the one
entry: it first proves with :func:`._scan.scan_units` that ``_fast`` reads
the whole document (so the strict load accepts it, with the values ``_fast``
gives), then cuts the needed top-level entries and the one section entry out
of the text and reads that smaller document with ``_fast``. A block entry's
value depends only on its own lines, so the smaller document gives exactly
those values. Whenever anything is outside the scanned subset it returns
``None``, and the caller loads the whole document strictly (every refusal
comes from there).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Mapping

from boring_dispatch.repository.strict_yaml._fast import parse_block_yaml
from boring_dispatch.repository.strict_yaml._scan import KEY, key_text, scan_units

__all__ = ["project", "select_block_yaml"]


def project(
    full: Mapping[str, object], keep: Collection[str], section: str, entry: str
) -> dict[str, object]:
    """The fields ``keep`` of ``full`` and its ``section``, whose mapping keeps only ``entry``.

    A ``section`` that is not a mapping is kept as it is.
    """
    selected: dict[str, object] = {}
    for name, value in full.items():
        if name == section:
            if isinstance(value, dict):
                selected[name] = {entry: value[entry]} if entry in value else {}
            else:
                selected[name] = value
        elif name in keep:
            selected[name] = value
    return selected


def select_block_yaml(
    text: str, keep: Collection[str], section: str, entry: str
) -> dict[str, object] | None:
    """``project(load_yaml(text), keep, section, entry)``, or ``None`` to load it all.

    Args:
        text: A decoded document (``load_yaml``'s checks of size, UTF-8 and BOM done).
        keep: Top-level keys whose values are wanted whole.
        section: A top-level key whose mapping is wanted for one entry only.
        entry: That entry's key.
    """
    if not scan_units(text):
        return None
    lined = "\n" + text  # every line, the first included, starts after a "\n"
    parts: list[str] = []
    for key, start, end in _keys(lined, 0, 0, len(lined)):
        if key == section:
            parts.append(_one_entry(lined, start, end, section, entry))
        elif key in keep:
            parts.append(lined[start + 1 : end] + "\n")
    return parse_block_yaml("".join(parts)) if parts else {}


def _keys(lined: str, column: int, start: int, end: int) -> list[tuple[str, int, int]]:
    """``(key, start, end)`` of the key lines at ``column`` in ``lined[start:end]``.

    In a scanned document these are the keys of one mapping; each one's text
    runs from its line break (``start``) to the next one's (``end``).
    """
    found = []
    for line in _lines_at(column).finditer(lined, start, end):
        key = _key().match(lined, line.end())
        if key is not None:  # (not an entry "- ", which starts a sequence)
            found.append((key_text(key.group(1)), line.start()))
    return [
        (key, begin, after)
        for (key, begin), after in zip(
            found, [*(begin for _, begin in found[1:]), end], strict=True
        )
    ]


def _one_entry(lined: str, start: int, end: int, section: str, entry: str) -> str:
    """The text of ``section``'s top-level entry ``lined[start:end]`` reduced to ``entry``."""
    whole = lined[start + 1 : end] + "\n"
    line_end = lined.find("\n", start + 1, end)
    colon = _key().match(lined, start + 1)
    if colon is None or line_end < 0:
        return whole
    rest = lined[colon.end() : line_end].lstrip(" ")
    first = _content().search(lined, line_end, end)
    if (rest and rest[0] != "#") or first is None:
        return whole  # a value on the key's line, or no value at all
    column = len(first.group(1))
    if column == 0 or lined[first.end(1) : first.end(1) + 2] in ("-", "- ", "-\n"):
        return whole  # a sequence
    for key, begin, after in _keys(lined, column, line_end, end):
        if key == entry:
            return f"{section}:{lined[begin:after]}\n"
    return f"{section}: {{}}\n"


@functools.cache
def _key() -> re.Pattern[str]:
    """A key and its colon at the start of a line's text; group 1 is the key."""
    return re.compile(rf"({KEY}):")


@functools.cache
def _content() -> re.Pattern[str]:
    """The next content line (not blank, not a comment); group 1 is its indentation."""
    return re.compile(r"\n( *)[^ \n#]")


@functools.lru_cache(maxsize=64)
def _lines_at(column: int) -> re.Pattern[str]:
    """Content lines that start at ``column`` (a pure function of the number).

    Patterns start with a literal line break: the search then jumps from line
    to line at C speed.
    """
    return re.compile(rf"\n {{{column}}}(?=[^ \n#])")
