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
from boring_dispatch.repository.strict_yaml._scan import KEY, scan_units

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
    parts: list[str] = []
    starts = [match.start() for match in _top_keys().finditer(text)]
    for start, end in zip(starts, [*starts[1:], len(text)], strict=True):
        block = text[start:end]
        name = block[: block.index(":")]
        if name == section:
            parts.append(_one_entry(block, section, entry))
        elif name in keep:
            parts.append(block if block.endswith("\n") else block + "\n")
    selected = parse_block_yaml("".join(parts)) if parts else {}
    return selected


def _one_entry(block: str, section: str, entry: str) -> str:
    """The text of ``section``'s top-level ``block`` reduced to its ``entry``."""
    whole = block if block.endswith("\n") else block + "\n"
    line_end = block.find("\n")
    rest = block[len(section) + 1 : line_end].lstrip(" ")
    first = _content_line().search(block, line_end + 1) if line_end >= 0 else None
    if (rest and rest[0] != "#") or first is None:
        return whole  # a value on the key's line, or no value at all
    column = len(first.group(1))
    if column == 0 or block[first.end(1) : first.end(1) + 2] in ("-", "- ", "-\n"):
        return whole  # a sequence
    if _key().fullmatch(entry) is None:
        return f"{section}: {{}}\n"  # every key of a scanned document matches KEY
    head = "\n" + " " * column + entry + ":"
    at = block.find(head)
    while at >= 0 and block[at + len(head) : at + len(head) + 1] not in ("", " ", "\n"):
        at = block.find(head, at + 1)
    if at < 0:
        return f"{section}: {{}}\n"
    after = _line_at(column).search(block, at + len(head))
    body = block[at + 1 : len(block) if after is None else after.start()]
    return f"{section}:\n{body}" + ("" if body.endswith("\n") else "\n")


@functools.cache
def _top_keys() -> re.Pattern[str]:
    return re.compile(rf"^{KEY}:", re.MULTILINE)


@functools.cache
def _key() -> re.Pattern[str]:
    return re.compile(KEY)


@functools.cache
def _content_line() -> re.Pattern[str]:
    return re.compile(r"^( *)[^ \n#]", re.MULTILINE)


@functools.lru_cache(maxsize=64)
def _line_at(column: int) -> re.Pattern[str]:
    """Lines that start at ``column`` or left of it (a pure function of the number)."""
    return re.compile(rf"^ {{0,{column}}}[^ \n#]", re.MULTILINE)
