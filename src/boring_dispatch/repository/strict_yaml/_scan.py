"""A whole-document strictness scan for the plain block YAML most blueprints are written in.

:func:`scan_units` proves, without building any value, that :mod:`._fast`
would read a whole document, so that :mod:`._select` may then parse only the
parts a request needs. Like :mod:`._fast` it refuses nothing: it either
proves the document (returns its top-level entries) or gives up (``None``),
and the caller then parses the whole document strictly. Giving up is always
safe; proving is only allowed where ``_fast`` reads the document.

One regular expression (C speed) splits the text into *units*: a key line or
a sequence-entry line together with the continuation lines of its scalar;
every other content line is a *bad* unit, which gives up. A short loop over
the units then checks the block structure exactly as ``_fast._parse`` does
(columns that line up, a nested block only after a key or entry with no
value, a sequence at its key's own column) and that no mapping repeats a key.

The scanned subset is smaller than ``_fast``'s, so that every check is local:

* keys are plain words ``[A-Za-z_][A-Za-z0-9_./-]*``, or such a word after
  ``-``, ``--`` or ``+`` (at most ``MAX_KEY`` long), none of the words YAML
  reads as null or a boolean;
* values are plain strings that start with a letter-like character (not an
  indicator, digit or sign) and hold no ``": "``, ``" #"`` or trailing ``:``,
  folded over more-indented lines; ``null``/``true``/``false`` words; decimal
  integers; ``{}`` and ``[]``; single- or double-quoted scalars (escapes
  ``\\x`` and the one-letter ones), one line or folded;
* an entry ``- `` holds one of those values, one ``key: value`` or nothing;
* comment lines, blank lines; no tab, carriage return or other character
  ``_fast`` declines (its own character check runs first).

Anything else (block scalars, flow collections with content, anchors, tags,
``? `` keys, quoted keys, ``- - `` entries, numbers other than decimal
integers, comments after a plain string, deep nesting) gives up.
"""

from __future__ import annotations

import functools
import re
from typing import Final

from boring_dispatch.repository.strict_yaml._fast import _plain_text
from boring_dispatch.repository.strict_yaml._rules import ALL_WORDS, MAX_DEPTH
from boring_dispatch.repository.strict_yaml._scalars import MAX_KEY

__all__ = ["KEY", "scan_units"]

# Nesting the scan proves; deeper documents give up (``_fast`` declines at MAX_DEPTH).
_MAX_STACK: Final = MAX_DEPTH - 16
_WORDS: Final = "|".join(sorted(ALL_WORDS, key=len, reverse=True)).replace("~", r"\~")
#: A key of the subset: a plain word that types as a string, at most ``MAX_KEY`` long.
KEY: Final = (
    rf"(?!(?:{_WORDS}):)(?:[A-Za-z_]|--?(?=[A-Za-z_])|\+(?=[A-Za-z_]))[A-Za-z0-9_./\-]{{0,{MAX_KEY - 3}}}"
)
# A plain string's start: not an indicator, a digit, a space or "."; a sign or
# "<" only before a letter ("--date", "<path>": strings in both YAML versions).
_PLAIN_FIRST: Final = r"(?:[^\n ?:,\[\]{}#&*!|>'\"%@`0-9+\-.<=~]|[-+<](?=[A-Za-z_\-]))"
# The rest of a plain line: no ": ", no " #", no trailing ":" (the first line: nor space).
# (Each is an unrolled loop: a run of ordinary characters between the special ones.)
_PLAIN_REST: Final = r"[^\n:#]*(?:(?::(?=[^\n ])|(?<! )#)[^\n:#]*)*"
_SINGLE: Final = r"[^'\n]*(?:''[^'\n]*)*"
_DOUBLE: Final = r"[^\"\\\n]*(?:\\(?:[0abtnvfre \"\\N_LP]|x[0-9a-fA-F]{2})[^\"\\\n]*)*"
_LINE_END: Final = r"(?: *| +#[^\n]*)$"
_COMMENT: Final = r"(?: +#[^\n]*)?$"


def _value(more: str) -> str:
    """A value and its continuation lines, which start with ``more`` (one column past the parent).

    Every part matches in one way only, and the quoted bodies are atomic
    groups, so a failed match never backtracks over lines.
    """
    plain_line = rf"(?:[^\n #:]|:(?=[^\n ])){_PLAIN_REST}$"
    plain = (
        rf"(?!(?:{_WORDS})$){_PLAIN_FIRST}{_PLAIN_REST}(?<! )"
        rf"(?:(?:\n *(?=\n))*\n{more} *{plain_line})*$"
    )
    single = rf"'(?>{_SINGLE}(?:\n(?:{more}{_SINGLE}| *(?=\n)))*)'{_LINE_END}"
    double = rf"\"(?>{_DOUBLE}(?:\n(?:{more}{_DOUBLE}| *(?=\n)))*)\"{_LINE_END}"
    word = r"(?:null|Null|NULL|true|True|TRUE|false|False|FALSE)" + _LINE_END
    number = r"(?:0|-?[1-9][0-9]{0,17})" + _LINE_END
    return rf"(?:{plain}|{single}|{double}|{word}|{number}|(?:\{{\}}|\[\]){_LINE_END})"


@functools.cache
def _units() -> re.Pattern[str]:
    """Compiled on first use (a pure function of constant text).

    Four groups per unit: the indentation, the entry's dash (``""`` for a key
    line), the spaces after the dash, and the key, which keeps its colon when
    no value follows on the line. A line that is no unit (nor a comment or
    blank line) has all four empty.
    """

    def key(group: str, more: str) -> str:
        return rf"(?P<{group}>{KEY}(?::(?={_LINE_END}))?)(?:(?<=:){_LINE_END}|: +{_value(more)})"

    key_unit = key("k", "(?P=i) ")
    entry_unit = (
        rf"(?P<d>-)(?:(?P<s> +)(?:{key('j', '(?P=i) (?P=s) ')}|{_value('(?P=i) ')})| *$)"
    )
    return re.compile(rf"^(?P<i> *)(?:{key_unit}|{entry_unit}|[^ \n#][^\n]*)", re.MULTILINE)


def scan_units(text: str) -> bool:
    """Whether ``text`` is in the scanned subset, which proves that ``_fast`` reads it.

    Args:
        text: A decoded document (size, UTF-8 and BOM already checked).

    Returns:
        ``True`` only if ``_fast.parse_block_yaml(text)`` returns a mapping
        (so the strict load accepts ``text``); ``False`` gives up.
    """
    if not _plain_text(text):
        return False
    return _structure(_units().findall(text))


def _structure(units: list[tuple[str, ...]]) -> bool:  # noqa: C901, PLR0912 - one loop
    """The block structure check of ``_fast._parse``, on units instead of lines.

    Each mapping is the set of its keys (a repeated key gives up); a sequence
    is ``None``. ``slot`` is the collection whose last key or entry has no
    value yet (``None`` when there is none).
    """
    root: set[str] = set()
    stack: list[tuple[int, set[str] | None]] = []
    col = 0
    top: set[str] | None = root
    slot: set[str] | None | bool = False  # False: no open key or entry
    for spaces, key_key, dash, after, entry_key in units:
        if dash:  # "- ...": the entry, then what follows its dash
            entry, key = True, entry_key
        elif key_key:
            entry, key = False, key_key
        else:
            return False  # a line that is no unit
        indent = len(spaces)
        opens = key[-1:] == ":"
        if opens:
            key = key[:-1]
        while True:
            new = False
            if indent > col:
                if slot is False:
                    return False  # (a continuation line would have been in the unit)
                new = True
            elif slot is not False:
                if entry and indent == col and slot is not None:
                    new = True  # a sequence at its key's column
                else:
                    slot = False
            if new:
                if len(stack) >= _MAX_STACK:
                    return False
                stack.append((col, top))
                col, top, slot = indent, (None if entry else set()), False
            while indent < col:
                col, top = stack.pop()
            if indent != col:
                return False
            if top is None:
                if entry:
                    slot = None  # the sequence's new entry
                    if not after:
                        break  # a dash alone on its line
                    if not key:
                        slot = False  # "- value"
                        break
                    entry, indent = False, indent + 1 + len(after)
                    continue  # its "key: value" opens a mapping
                col, top = stack.pop()  # a sequence at its key's column ends
                if col != indent or top is None:
                    return False
            elif entry:
                return False
            if key in top:
                return False
            top.add(key)
            slot = top if opens else False
            break
    return bool(root)
