"""A fast, strict parser for the plain block YAML that blueprints are written in.

PyYAML spends most of a load building node objects (several milliseconds for
the corpus's 69 KB source blueprint, where libyaml's own scan is a fraction of
that). Blueprints use a small part of YAML, the part ``yaml.safe_dump``
writes; this module reads that part in one pass over the lines, straight into
plain data.

It never disagrees with the libyaml path of :mod:`.load`: for any input it
returns exactly what that path returns, or it declines (returns ``None``) and
the libyaml path decides. It refuses nothing itself, so every
``dispatcher.blueprint_malformed`` (and its line number) comes from one place.

The subset it reads:

* block mappings and sequences, including a sequence at its key's own
  column, compact ``- key: value`` mappings and ``- - item`` sequences; keys
  are one-line plain or quoted scalars that type as strings;
* plain scalars, one line or folded over more-indented lines, typed by
  :func:`._yaml_rules.plain_value`;
* single- and double-quoted scalars with YAML's escapes, one line or folded;
* block scalars ``|``, ``|-``, ``>``, ``>-`` whose lines share one indentation
  (a literal one may indent further);
* one-line flow collections (``{}``, ``[]``, ``{a: 1, b: [x, 'y']}``) whose
  plain scalars hold no ``:`` or ``#``;
* comments, blank lines, a missing final newline.

It declines everything else, among it: tabs, carriage returns and every
character libyaml refuses or reads as a line break; ``---``, ``...`` and
``%`` lines; anchors, aliases, tags and ``?`` keys; flow collections over
several lines; duplicate and non-string keys; plain scalars ``plain_value``
refuses; indentation that does not line up; nesting deeper than
``MAX_DEPTH``; an empty document or a top level that is not a block mapping
at column 0.
"""

from __future__ import annotations

from boring_dispatch.repository.strict_yaml._rules import ALL_WORDS, MAX_DEPTH, NUMERIC_STARTS
from boring_dispatch.repository.strict_yaml._scalars import (
    MAX_KEY,
    Declined,
    block_scalar,
    flow_collection,
    line_end,
    one_line_quoted,
    quoted,
    typed,
)

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import Final, TypeAlias

__all__ = ["parse_block_yaml"]

_Collection: TypeAlias = dict[str, object] | list[object]

# First characters of every token but a plain scalar ("- " is handled apart).
_INDICATORS: Final = frozenset("?:,[]{}#&*!|>'\"%@`")
# First characters of plain scalars that may be something other than a string.
_SLOW_FIRST: Final = _INDICATORS | NUMERIC_STARTS | {"-"}
_MARKERS: Final = ("---", "...", "%")  # at column 0: document markers, directives
_ASCII_TEXT: Final = b"\n" + bytes(range(0x20, 0x7F))
# Plain values _simple_key_line types itself (as plain_value does), and a bound
# on the integers it reads (the rest, "0" and numbers with signs go the long way).
_SIMPLE_WORDS: Final[dict[str, object]] = {"true": True, "false": False, "null": None}
_NOT_SIMPLE: Final = object()
_SIMPLE_DIGITS: Final = 10


def parse_block_yaml(text: str) -> dict[str, object] | None:
    """Read ``text`` if it is in this module's subset.

    Args:
        text: A decoded document (``load_yaml`` has checked size, UTF-8, BOM).

    Returns:
        The top-level mapping, exactly as the libyaml path would return it, or
        ``None`` when declined (anything the module docstring lists).
    """
    if not _plain_text(text):
        return None
    try:
        return _parse(text.split("\n"))
    except Declined:
        return None


def _plain_text(text: str) -> bool:
    """Whether every character is ``\\n`` or one libyaml reads as ordinary text."""
    # Deleting printable ASCII bytes leaves whole non-ASCII characters and controls.
    rest = text.encode("utf-8", "surrogatepass").translate(None, _ASCII_TEXT)
    return not rest or all(map(_text_character, set(rest.decode("utf-8", "surrogatepass"))))


def _text_character(character: str) -> bool:
    """Whether libyaml reads a non-ASCII ``character`` as plain text.

    Not a C1 control, a line break (U+0085, U+2028, U+2029), U+FEFF, U+FFFE,
    U+FFFF or a surrogate. ASCII controls (the only ASCII characters asked
    about) are not text either.
    """
    point = ord(character)
    if point < 0xE000:
        return 0xA0 <= point < 0xD800 and point not in (0x2028, 0x2029)
    return (point <= 0xFFFD and point != 0xFEFF) or point >= 0x10000


def _parse(lines: list[str]) -> dict[str, object]:  # noqa: C901, PLR0912, PLR0915 - the one loop
    """The top-level mapping of ``lines``, read with a stack of open block collections.

    A content line at the innermost collection's column adds a key or an
    entry to it; a line further left first closes collections. A line further
    right is the value of the key or entry just before it if that had nothing
    after it (the "slot"), or else continues the one-line plain scalar just
    before it; anything else is declined. A slot's value may also be a
    sequence at its key's own column.
    """
    root: dict[str, object] = {}
    stack: list[tuple[int, _Collection]] = []  # the enclosing (column, collection) pairs
    col = 0  # the innermost open collection: its column and itself
    top: _Collection = root
    slot: _Collection | None = None  # holds a key (or last entry) still without a value
    slot_key = ""
    plain_row, plain_text = -1, ""  # a one-line plain scalar the next line may continue
    row, end = 0, len(lines)
    while row < end:
        line = lines[row]
        text = line.lstrip(" ")
        if not text or text[0] == "#":
            row += 1
            continue
        indent = len(line) - len(text)
        if indent == 0 and text.startswith(_MARKERS):
            raise Declined
        foldable, plain_row = plain_row, -1
        simple = _simple_key_line(text) if text[0] not in _SLOW_FIRST else None
        if simple is not None and (indent <= col or slot is not None):
            # A plain "key:" or "key: value" line, the most common kind, taken
            # through the same steps as the general loop below, minus the tests
            # whose outcome the line's shape already decides.
            key, value, rest = simple
            if slot is not None and indent > col:  # a mapping that is the slot's value
                if len(stack) + 1 >= MAX_DEPTH:
                    raise Declined
                new_map: dict[str, object] = {}
                _store(slot, slot_key, new_map)
                stack.append((col, top))
                col, top = indent, new_map
            slot = None
            while indent < col:
                col, top = stack.pop()
            if indent != col:
                raise Declined
            if isinstance(top, list):
                col, top = stack.pop()  # a sequence at its key's column ends
                if col != indent or isinstance(top, list):
                    raise Declined
            if key in top:
                raise Declined
            top[key] = value
            if not rest:
                slot, slot_key = top, key
            else:
                plain_row, plain_text = row, rest
            row += 1
            continue
        split: tuple[str, str] | None = None
        while True:  # once per node opening on this line ("- - k: v" opens three)
            entry = text[0] == "-" and (len(text) == 1 or text[1] == " ")
            new: _Collection | None = None
            if indent > col:
                if slot is None:
                    if foldable < 0:
                        raise Declined
                    row = _continue_plain(lines, foldable, plain_text, col, top)
                    break
                if not entry:
                    split = _key_line(text)
                    if split is None:  # a scalar alone on its line
                        value, row, plain_text = _value(lines, row, text, col, len(stack) + 2)
                        _store(slot, slot_key, value)
                        slot = None
                        plain_row = row if plain_text else -1
                        break
                new = [] if entry else {}
            elif slot is not None:
                if entry and indent == col and isinstance(slot, dict):
                    new = []  # a sequence at its key's column
                else:
                    slot = None
            if new is not None and slot is not None:  # (only a slot opens a collection)
                if len(stack) + 1 >= MAX_DEPTH:
                    raise Declined
                _store(slot, slot_key, new)
                stack.append((col, top))
                col, top, slot = indent, new, None
            while indent < col:
                col, top = stack.pop()
            if indent != col:
                raise Declined
            if isinstance(top, list):
                if entry:
                    top.append(None)
                    slot = top
                    rest = text[1:].lstrip(" ")
                    if rest and rest[0] != "#":
                        indent += len(text) - len(rest)  # the entry's value opens here
                        text = rest
                        continue
                    break
                col, top = stack.pop()  # a sequence at its key's column ends
                if col != indent or isinstance(top, list):
                    raise Declined
            if split is None:
                split = _key_line(text)
                if split is None:
                    raise Declined
            key, rest = split
            if key in top:
                raise Declined
            if not rest:
                top[key] = None
                slot, slot_key = top, key
            elif (  # the most common value, a one-line string, is read inline
                rest[0] not in _SLOW_FIRST
                and rest[-1] not in ": "
                and " #" not in rest
                and ": " not in rest
                and rest not in ALL_WORDS
            ):
                top[key] = rest
                plain_row, plain_text = row, rest
            else:
                top[key], row, plain_text = _value(lines, row, rest, col, len(stack) + 2)
                plain_row = row if plain_text else -1
            break
        row += 1
    if not root:
        raise Declined
    return root


def _value(
    lines: list[str], row: int, text: str, parent: int, depth: int
) -> tuple[object, int, str]:
    """The scalar or flow collection that ``text`` (on ``row``) starts.

    ``parent`` is the column of the collection holding it, ``depth`` the depth
    a flow collection here has. Returns the value, its last row, and the text
    of a one-line plain scalar that more-indented lines may continue (``""``
    for anything else, including a plain scalar ended by a comment).
    """
    first = text[0]
    if first in "'\"":
        string, row = quoted(lines, row, text, parent)
        return string, row, ""
    if first in "[{":
        collection, end = flow_collection(text, 0, depth)
        line_end(text[end:])
        return collection, row, ""
    if first in "|>":
        string, row = block_scalar(lines, row, text, parent)
        return string, row, ""
    if first in _INDICATORS or _is_entry(text):
        raise Declined
    cut = text.find(" #")
    plain = (text if cut < 0 else text[:cut]).rstrip(" ")
    if plain[-1] == ":" or ": " in plain:
        raise Declined  # a key where none can be
    if plain[0] in NUMERIC_STARTS or plain in ALL_WORDS:
        return typed(plain), row, (plain if cut < 0 else "")
    return plain, row, (plain if cut < 0 else "")


def _continue_plain(lines: list[str], row: int, text: str, parent: int, owner: _Collection) -> int:
    """Fold the lines after ``row`` indented past ``parent`` into its plain scalar ``text``.

    The scalar is the last value stored in ``owner``; it gets the folded
    value. Returns the last row folded in. A comment line ends the scalar; a
    line holding ``": "`` or ``" #"``, or ending in ``:``, is declined.
    """
    parts = [text]
    breaks = 0
    for index in range(row + 1, len(lines)):
        line = lines[index]
        body = line.lstrip(" ")
        if not body:
            breaks += 1
            continue
        if len(line) - len(body) <= parent or body[0] == "#":
            break
        body = body.rstrip(" ")
        if " #" in body or ": " in body or body[-1] == ":":
            raise Declined
        parts.append("\n" * breaks if breaks else " ")
        parts.append(body)
        breaks = 0
        row = index
    value = typed("".join(parts))
    if isinstance(owner, list):
        owner[-1] = value
    else:
        owner[next(reversed(owner))] = value
    return row


def _simple_key_line(text: str) -> tuple[str, object, str] | None:  # noqa: PLR0911
    """``(key, value, rest)`` of a plain ``key:`` or ``key: value`` line, or ``None``.

    Only for ``text`` not starting with a character of ``_SLOW_FIRST``.
    Exactly what :func:`_key_line` and :func:`_value` make of such a line,
    for the shapes read here: no value (``value`` ``None``, ``rest`` ``""``),
    a one-line plain string the general loop reads inline, ``true``,
    ``false``, ``null`` or a short decimal integer (``rest`` is the text a
    more-indented line may continue). ``None`` for every other line: the
    general loop then reads it (or declines it) as before.
    """
    key, colon, rest = text.partition(": ")
    if not colon:
        if text[-1] != ":":
            return None
        key, rest = text[:-1], ""
    if key[-1] == " " or len(key) > MAX_KEY or " #" in key or key in ALL_WORDS:
        return None
    if not rest:
        return key, None, ""
    if rest[0] == " " or rest[-1] in ": " or " #" in rest or ": " in rest:
        return None
    if rest[0] not in _SLOW_FIRST and rest not in ALL_WORDS:
        return key, rest, rest
    word = _SIMPLE_WORDS.get(rest, _NOT_SIMPLE)
    if word is not _NOT_SIMPLE:
        return key, word, rest
    if rest.isascii() and rest.isdigit() and len(rest) < _SIMPLE_DIGITS and rest[0] != "0":
        return key, int(rest), rest
    return None


def _key_line(text: str) -> tuple[str, str] | None:
    """``(key, rest)`` when ``text`` is a ``key: rest`` line, ``None`` when it is a value.

    Declines keys starting with an indicator, longer than ``MAX_KEY``,
    holding a comment, ending in a space, or typing as anything but a string.
    ``rest`` is ``""`` when nothing or only a comment follows.
    """
    first = text[0]
    if first in _SLOW_FIRST:
        if first in "'\"":
            return _quoted_key(text)
        if first in "[{|>":
            return None
        if first in _INDICATORS or (first == "-" and (len(text) == 1 or text[1] == " ")):
            raise Declined  # "-" alone or followed by a space is a sequence entry
    key, colon, rest = text.partition(": ")
    if not colon:
        if text[-1] != ":":
            return None
        key = text[:-1]
    if key[-1] == " " or len(key) > MAX_KEY or " #" in key:
        raise Declined
    if (first in NUMERIC_STARTS or key in ALL_WORDS) and not isinstance(typed(key), str):
        raise Declined
    if rest and rest[0] != " " and rest[0] != "#":
        return key, rest
    rest = rest.lstrip(" ")
    return key, ("" if rest[:1] == "#" else rest)


def _quoted_key(text: str) -> tuple[str, str] | None:
    """``(key, rest)`` for a one-line quoted key; ``None`` if the quoted scalar is a value."""
    closed = one_line_quoted(text, 0)
    if closed is None:
        return None
    key, end = closed
    if not text.startswith(":", end) or text[end + 1 : end + 2] not in ("", " "):
        return None
    if end > MAX_KEY:
        raise Declined
    rest = text[end + 1 :].lstrip(" ")
    return key, ("" if rest[:1] == "#" else rest)


def _is_entry(text: str) -> bool:
    """Whether ``text`` starts with the block sequence indicator ``-``."""
    return text[0] == "-" and (len(text) == 1 or text[1] == " ")


def _store(owner: _Collection, key: str, value: object) -> None:
    """Give the slot ``key`` of ``owner`` (a sequence's last entry) its value."""
    if isinstance(owner, list):
        owner[-1] = value
    else:
        owner[key] = value
