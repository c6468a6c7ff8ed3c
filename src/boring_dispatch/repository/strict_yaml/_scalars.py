"""Scalars and flow collections for :mod:`._fast` (the strict fast YAML path).

The readers of scalars that may span lines take the document's lines, the
row the scalar starts on and the column of the block collection holding it,
and return the value with the last row they used; flow collections fit on
one line. Every reader raises :class:`Declined` for anything outside the
subset :mod:`._fast` documents; none refuses anything itself.

Folding follows libyaml: inside a quoted scalar, a line break between two
lines becomes a space and ``n`` blank lines become ``n`` line breaks; spaces
around a break are dropped; ``\\`` ending a double-quoted line joins the
lines with nothing in between.
"""

from __future__ import annotations

import functools
import re

from boring_dispatch.repository.strict_yaml._rules import (
    ALL_WORDS,
    MAX_DEPTH,
    NUMERIC_STARTS,
    ScalarRefused,
    plain_value,
)

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import Final

__all__ = [
    "MAX_KEY",
    "Declined",
    "block_scalar",
    "flow_collection",
    "line_end",
    "one_line_quoted",
    "quoted",
    "typed",
]

#: Longest key read, in characters up to its ``:`` (libyaml refuses keys over 1024).
MAX_KEY: Final = 1000
_HEX_DIGITS: Final = "0123456789abcdefABCDEF"
# Plain scalars inside flow collections: no ":" or "#" at all, no indicator first.
_FLOW_PLAIN: Final = r"(?:[^ \-?:,\[\]{}#&*!|>'\"%@`]|-[^ ,\[\]{}#:])[^:,\[\]{}#]*"
_ESCAPES: Final = {
    "0": "\x00",
    "a": "\x07",
    "b": "\x08",
    "t": "\x09",
    "n": "\x0a",
    "v": "\x0b",
    "f": "\x0c",
    "r": "\x0d",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
_HEX_ESCAPES: Final = {"x": 2, "u": 4, "U": 8}
# Block scalar headers read: (literal, strip the final line break).
_BLOCK_HEADERS: Final = {
    "|": (True, False),
    "|-": (True, True),
    ">": (False, False),
    ">-": (False, True),
}
# What a quoted-scalar scanner returns when the line ends before the closing quote.
_FOLDED: Final = -1
_ESCAPED_BREAK: Final = -2


class Declined(Exception):
    """The document is outside the fast subset; the libyaml path decides."""


def typed(text: str) -> object:
    """A plain scalar's value (see :func:`._yaml_rules.plain_value`); declines what it refuses."""
    if text[0] not in NUMERIC_STARTS and text not in ALL_WORDS:
        return text
    try:
        return plain_value(text)
    except ScalarRefused:
        raise Declined from None


def line_end(rest: str) -> None:
    """Declines anything after a closed scalar or collection but spaces and a ``#`` comment."""
    body = rest.lstrip(" ")
    if body and (body[0] != "#" or len(body) == len(rest)):
        raise Declined


def quoted(lines: list[str], row: int, text: str, parent: int) -> tuple[str, int]:
    """The quoted scalar opening ``text`` (on ``row``), folded over lines until it closes.

    Declines continuation lines not indented past ``parent``, an unclosed
    scalar, and anything but a comment after the closing quote.
    """
    scan = _single_segment if text[0] == "'" else _double_segment
    pieces: list[str] = []
    end = scan(text, 1, pieces)
    while end < 0:
        joint = "" if end == _ESCAPED_BREAK else " "
        breaks = 0
        while True:
            row += 1
            if row >= len(lines):
                raise Declined
            text = lines[row].lstrip(" ")
            if text:
                break
            breaks += 1
        if len(lines[row]) - len(text) <= parent:
            raise Declined
        pieces.append("\n" * breaks if breaks else joint)  # blank lines replace the joint
        end = scan(text, 0, pieces)
    line_end(text[end:])
    return "".join(pieces), row


def one_line_quoted(text: str, start: int) -> tuple[str, int] | None:
    """The quoted scalar opening at ``text[start]`` and the index after it.

    ``None`` if it does not close on this line (declines bad escapes).
    """
    pieces: list[str] = []
    end = (_single_segment if text[start] == "'" else _double_segment)(text, start + 1, pieces)
    return ("".join(pieces), end) if end >= 0 else None


def block_scalar(lines: list[str], row: int, header: str, parent: int) -> tuple[str, int]:
    """The ``|``, ``|-``, ``>`` or ``>-`` block scalar whose header (on ``row``) is ``header``.

    Declines other headers (indentation indicators, ``+``, comments), a first
    line that is blank or not indented past ``parent``, whitespace-only lines
    longer than the indentation, more-indented or space-ended lines in a
    folded scalar, and a last line without a line break.
    """
    mode = _BLOCK_HEADERS.get(header.rstrip(" "))
    start = row + 1
    if mode is None or start >= len(lines):
        raise Declined
    literal, strip = mode
    indent = len(lines[start]) - len(lines[start].lstrip(" "))
    if indent <= parent or indent == len(lines[start]):
        raise Declined
    kept: list[str] = []
    last = start
    for index in range(start, len(lines)):
        line = lines[index]
        spaces = len(line) - len(line.lstrip(" "))
        if spaces == len(line):
            if spaces > indent:
                raise Declined  # the spaces past the indentation would be content
            kept.append("")
            continue
        if spaces < indent:
            break
        if not literal and (spaces > indent or line[-1] == " "):
            raise Declined  # folding keeps breaks around these
        kept.append(line[indent:])
        last = index
    if last == len(lines) - 1:
        raise Declined  # no line break after the last line
    del kept[last - start + 1 :]  # trailing blank lines are chomped
    value = "\n".join(kept) if literal else _fold(kept)
    return (value if strip else value + "\n"), last


def flow_collection(text: str, start: int, depth: int) -> tuple[object, int]:
    """The flow collection opening at ``text[start]``; it must close on this line.

    Returns the value and the index after the closing bracket. Declines
    trailing commas, mapping entries without ``": "``, keys that are not
    strings, duplicate or longer than ``MAX_KEY``, and nesting over ``MAX_DEPTH``.
    """
    if depth > MAX_DEPTH:
        raise Declined
    is_map = text[start] == "{"
    close = "}" if is_map else "]"
    mapping: dict[str, object] = {}
    items: list[object] = []
    at = _skip_spaces(text, start + 1)
    while not text.startswith(close, at):
        if is_map:
            key, end = _flow_scalar(text, at)
            if not isinstance(key, str) or key in mapping or end - at > MAX_KEY:
                raise Declined
            at = end
            if not text.startswith(": ", at):
                raise Declined
            mapping[key], at = _flow_node(text, _skip_spaces(text, at + 2), depth)
        else:
            item, at = _flow_node(text, at, depth)
            items.append(item)
        at = _skip_spaces(text, at)
        if text.startswith(",", at):
            at = _skip_spaces(text, at + 1)
            if text[at : at + 1] in ("", "]", "}"):
                raise Declined
        elif not text.startswith(close, at):
            raise Declined
    return (mapping if is_map else items), at + 1


def _flow_node(text: str, at: int, depth: int) -> tuple[object, int]:
    if text[at : at + 1] in ("[", "{"):
        return flow_collection(text, at, depth + 1)
    return _flow_scalar(text, at)


def _flow_scalar(text: str, at: int) -> tuple[object, int]:
    """A one-line quoted or plain scalar inside a flow collection, and the index after it."""
    if text[at : at + 1] in ("'", '"'):
        closed = one_line_quoted(text, at)
        if closed is None:
            raise Declined
        return closed
    plain = _flow_plain().match(text, at)
    if plain is None:
        raise Declined
    return typed(plain.group().rstrip(" ")), plain.end()


@functools.cache
def _flow_plain() -> re.Pattern[str]:
    """Compiled on first use: most documents hold no flow scalar (and the CLI starts cold)."""
    return re.compile(_FLOW_PLAIN)


def _skip_spaces(text: str, at: int) -> int:
    while text.startswith(" ", at):  # (no slicing: a long flow line stays linear)
        at += 1
    return at


def _fold(lines: list[str]) -> str:
    """Folded block scalar lines: one break becomes a space, blank lines stay breaks."""
    parts = [lines[0]]
    breaks = 0
    for line in lines[1:]:
        if not line:
            breaks += 1
            continue
        parts.append("\n" * breaks if breaks else " ")
        parts.append(line)
        breaks = 0
    return "".join(parts)


def _single_segment(line: str, start: int, pieces: list[str]) -> int:
    """Scan a single-quoted scalar from ``line[start]``, appending its text to ``pieces``.

    Returns the index after the closing quote, or ``_FOLDED`` if the line ends
    first (its trailing spaces, which folding drops, are left out).
    """
    while True:
        quote = line.find("'", start)
        if quote < 0:
            pieces.append(line[start:].rstrip(" "))
            return _FOLDED
        if line.startswith("'", quote + 1):  # '' is one quote
            pieces.append(line[start : quote + 1])
            start = quote + 2
            continue
        pieces.append(line[start:quote])
        return quote + 1


def _double_segment(line: str, start: int, pieces: list[str]) -> int:
    """Scan a double-quoted scalar like :func:`_single_segment`, decoding escapes.

    Returns ``_ESCAPED_BREAK`` when ``\\`` ends the line. Declines escapes
    beyond YAML 1.1's and code points libyaml refuses (surrogates).
    """
    quote = line.find('"', start)
    while True:
        if 0 <= quote < start:  # an escaped quote was passed; searches stay linear
            quote = line.find('"', start)
        slash = line.find("\\", start, len(line) if quote < 0 else quote)
        at = quote if slash < 0 else slash
        if at < 0:
            pieces.append(line[start:].rstrip(" "))
            return _FOLDED
        pieces.append(line[start:at])
        if line[at] == '"':
            return at + 1
        if at + 1 == len(line):
            return _ESCAPED_BREAK
        code = line[at + 1]
        escaped = _ESCAPES.get(code)
        if escaped is not None:
            pieces.append(escaped)
            start = at + 2
            continue
        size = _HEX_ESCAPES.get(code, 0)
        digits = line[at + 2 : at + 2 + size]
        if not size or len(digits) != size or digits.strip(_HEX_DIGITS):
            raise Declined
        point = int(digits, 16)
        if 0xD800 <= point <= 0xDFFF or point > 0x10FFFF:
            raise Declined
        pieces.append(chr(point))
        start = at + 2 + size
