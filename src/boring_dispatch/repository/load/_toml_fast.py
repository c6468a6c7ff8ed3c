"""A fast, strict reader for the small TOML that ``officina.toml`` is written in.

``tomllib`` costs a CLI start more than the whole routing of a request: its
import compiles a dozen regular expressions and loads ``datetime`` and
``typing``. A repository configuration is a few lines; this module reads
the part of TOML such a file uses, in one pass, with string methods only.

It never disagrees with ``tomllib``: for any text it returns exactly what
``tomllib.loads`` returns (types included), or it declines (returns
``None``) and ``tomllib``, imported only then, decides. It refuses nothing
itself, so every "not valid TOML" comes from one place. The differential
tests in ``tests/repository/load/test_toml_fast.py`` pin that.

The subset it reads:

* blank lines, comments (``#`` to the end of the line), a missing final newline;
* ``[name]`` table headers whose name is a bare key, each table once;
* ``key = value`` pairs whose key is a bare key, each key once per table;
* values: a one-line basic string without escapes (``"..."``), a one-line
  literal string (``'...'``), a decimal integer of at most 18 digits without
  ``+`` or ``_``, ``true``, ``false``, and arrays of those (over several
  lines, with comments and a trailing comma).

It declines everything else, among it: any character outside printable
ASCII and ``\\n`` (tabs, carriage returns, control characters, non-ASCII
text); escapes; multi-line strings; floats, dates, times, hexadecimal and
underscored numbers; dotted and quoted keys; inline tables; arrays of
tables; nested arrays; a second definition of a key or a table.
"""

from __future__ import annotations

__all__ = ["parse_small_toml"]

_BARE = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
_DIGITS = "0123456789"
_MAX_DIGITS = 18  # every such integer is exact and far below any digit limit


def parse_small_toml(text: str) -> dict[str, object] | None:
    """Return ``tomllib.loads(text)``, or ``None`` when ``text`` is outside the subset."""
    if not text.isascii() or not text.replace("\n", "").isprintable():
        return None
    root: dict[str, object] = {}
    table = root
    end = len(text)
    pos = 0
    while pos < end:
        pos = _skip_spaces(text, pos)
        char = text[pos : pos + 1]
        if char in ("\n", "#", ""):
            pos = _line_end(text, pos)
            continue
        if char == "[":
            close = text.find("]", pos)
            name = text[pos + 1 : close] if close > 0 else ""
            if not _is_bare(name) or name in root:
                return None
            table = {}
            root[name] = table
            pos = close + 1
        else:
            equals = text.find("=", pos)
            key = text[pos:equals].rstrip(" ") if equals > 0 else ""
            if not _is_bare(key) or key in table:
                return None
            got = _value(text, _skip_spaces(text, equals + 1))
            if got is None:
                return None
            table[key], pos = got
        pos = _line_end(text, pos)
        if pos < 0:
            return None
    return root


def _is_bare(name: str) -> bool:
    return name != "" and name.strip(_BARE) == ""


def _skip_spaces(text: str, pos: int) -> int:
    while text.startswith(" ", pos):
        pos += 1
    return pos


def _line_end(text: str, pos: int) -> int:
    """The index after the end of this line (spaces and a comment allowed), or -1."""
    pos = _skip_spaces(text, pos)
    if pos == len(text):
        return pos
    char = text[pos]
    if char not in ("\n", "#"):
        return -1
    newline = text.find("\n", pos)
    return len(text) if newline < 0 else newline + 1


def _value(text: str, pos: int) -> tuple[object, int] | None:
    if text.startswith("[", pos):
        return _array(text, pos + 1)
    return _scalar(text, pos)


def _array(text: str, pos: int) -> tuple[object, int] | None:
    items: list[object] = []
    pos = _skip_array_space(text, pos)
    while not text.startswith("]", pos):
        got = _scalar(text, pos)
        if got is None:
            return None
        item, pos = got
        items.append(item)
        pos = _skip_array_space(text, pos)
        if text.startswith(",", pos):
            pos = _skip_array_space(text, pos + 1)
        elif not text.startswith("]", pos):
            return None
    return items, pos + 1


def _skip_array_space(text: str, pos: int) -> int:
    """Skip spaces, newlines and comments between an array's items."""
    end = len(text)
    while pos < end:
        char = text[pos]
        if char in (" ", "\n"):
            pos += 1
        elif char == "#":
            newline = text.find("\n", pos)
            pos = end if newline < 0 else newline + 1
        else:
            break
    return pos


def _scalar(text: str, pos: int) -> tuple[object, int] | None:
    quote = text[pos : pos + 1]
    if quote in ('"', "'"):
        close = text.find(quote, pos + 1)
        body = text[pos + 1 : close] if close > 0 else "\n"
        if "\n" in body or (quote == '"' and "\\" in body):
            return None
        return body, close + 1
    if text.startswith("true", pos):
        return True, pos + 4
    if text.startswith("false", pos):
        return False, pos + 5
    start = pos + 1 if quote == "-" else pos
    stop = start
    while stop < len(text) and text[stop] in _DIGITS:
        stop += 1
    digits = text[start:stop]
    if not digits or len(digits) > _MAX_DIGITS or (digits[0] == "0" and len(digits) > 1):
        return None
    return int(text[pos:stop]), stop
