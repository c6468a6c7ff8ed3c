"""Which paths a ``direct_io`` regex or glob can name: a small, conservative model.

The level derivation (:mod:`~boring_dispatch.repository.facts.levels`) may call a
pattern "inside an owned subtree" only when *every* path it can match starts
with that subtree and has no ``.`` or ``..`` segment. The text of a pattern
proves neither: ``^data/[.][.]/x$`` and the glob ``data/.*/x`` start with
``data/`` and still name ``data/../x``.

A pattern is turned into a sequence of items (a set of characters repeated
``minimum`` to ``maximum`` times). Only a small subset is modelled; anything
else is ``None`` and the caller treats the pattern as outside:

* regex (Python ``re`` syntax): must start with ``^`` and end with an
  unescaped ``$``; literals, ``\\`` + ASCII punctuation, ``.``, ``\\d \\w \\s``
  and ``\\D \\W \\S``, classes ``[...]`` (literals, ranges, those escapes,
  ``^`` negation), each optionally quantified (``* + ? {m} {m,} {m,n} {,n}``,
  lazy or possessive). No groups, alternation, other anchors, flags, numeric
  or named escapes, nested sets or set operations.
* glob, read as a path glob: ``*``, ``?`` and ``[...]`` (``!``/``^``
  negation) stay inside one segment, ``**`` may span segments. No braces,
  no backslashes, no class that names ``/``.

Characters are then reduced to three symbols (``/``, ``.`` and any other) and
run through a five-state automaton that spots a ``.`` or ``..`` segment. Item
counts above four are widened (a larger language, so still sound): the
automaton cannot tell longer runs apart.
"""

from __future__ import annotations

from collections.abc import Sequence

from boring_dispatch._value import value

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import Final

__all__ = ["Item", "glob_items", "literal_text", "regex_items", "stays_under"]

_SLASH: Final = "/"
_DOT: Final = "."
_OTHER: Final = "o"
_ALL: Final = frozenset({_SLASH, _DOT, _OTHER})
_NO_SLASH: Final = frozenset({_DOT, _OTHER})
#: Escapes whose class has neither ``.`` nor ``/`` / has both (and others).
_NARROW_ESCAPES: Final = frozenset("dws")
_WIDE_ESCAPES: Final = frozenset("DWS")
_QUANTIFIER_START: Final = frozenset("*+?{")
_REGEX_SPECIAL: Final = frozenset("()|^$*+?{")
_MAX_COUNT_DIGITS: Final = 9
_WIDEN_ABOVE: Final = 4


@value
class Item:
    """``symbols`` (a subset of ``/``, ``.``, other) repeated ``minimum``..``maximum`` times."""

    symbols: frozenset[str]
    minimum: int = 1
    maximum: int | None = 1
    #: The one character this item stands for, when it is a plain literal.
    char: str | None = None


@value
class _ClassSet:
    """What a ``[...]`` set may contain, and which of ``.``/``/`` it surely contains."""

    may: frozenset[str]
    surely: frozenset[str]


def _symbol(char: str) -> str:
    return char if char in {_SLASH, _DOT} else _OTHER


def _literal(char: str) -> Item:
    return Item(frozenset({_symbol(char)}), char=char)


# --------------------------------------------------------------------------- #
# regex


def regex_items(pattern: str) -> list[Item] | None:
    """The items of an anchored regex, or ``None`` when it is not modelled."""
    if not pattern.startswith("^"):
        return None
    body = pattern[1:]
    items: list[Item] = []
    i = 0
    while i < len(body):
        if body[i] == "$":
            return items if i == len(body) - 1 else None
        atom = _regex_atom(body, i)
        quantified = None if atom is None else _quantifier(body, atom[1], atom[0])
        if quantified is None:
            return None
        item, i = quantified
        items.append(item)
    return None  # no closing `$`: a match may continue past the text


def _regex_atom(body: str, i: int) -> tuple[Item, int] | None:
    char = body[i]
    if char in _REGEX_SPECIAL:
        return None
    if char == "\\":
        return _regex_escape(body, i)
    if char == "[":
        found = _regex_class(body, i + 1)
        return None if found is None else (Item(found[0]), found[1])
    return (Item(_ALL) if char == "." else _literal(char)), i + 1


def _regex_escape(body: str, i: int) -> tuple[Item, int] | None:
    one = _class_char(body, i)
    if one is None:
        return None
    char, i = one
    if isinstance(char, _ClassSet):
        return Item(char.may), i
    return _literal(char), i


def _regex_class(body: str, i: int) -> tuple[frozenset[str], int] | None:
    """A ``[...]`` set starting after ``[``: its symbols and the index after ``]``."""
    negated = i < len(body) and body[i] == "^"
    i += negated
    may: set[str] = set()
    surely: set[str] = set()
    first = True
    while i < len(body) and (body[i] != "]" or first):
        member = _class_member(body, i)
        if member is None:
            return None
        found, i = member
        may |= found.may
        surely |= found.surely
        first = False
    if i >= len(body):
        return None
    if negated:
        return frozenset({_OTHER} | ({_SLASH, _DOT} - surely)), i + 1
    return frozenset(may), i + 1


def _class_member(body: str, i: int) -> tuple[_ClassSet, int] | None:
    """One member of a regex set: a character, an escape or a range."""
    if body[i] == "[" or body[i : i + 2] in {"&&", "||", "~~", "--"}:
        return None  # a nested set or a set operation (FutureWarning in re)
    one = _class_char(body, i)
    if one is None:
        return None
    low, i = one
    if isinstance(low, _ClassSet):
        return low, i
    if body[i : i + 1] != "-" or body[i + 1 : i + 2] in {"", "]"}:
        return _ClassSet(frozenset({_symbol(low)}), frozenset({low} & {_SLASH, _DOT})), i
    other = _class_char(body, i + 1)
    if other is None or isinstance(other[0], _ClassSet) or other[0] < low:
        return None  # `[a-\\d]` or a reversed range: an error in re
    high, i = other
    surely = frozenset(c for c in (_SLASH, _DOT) if low <= c <= str(high))
    return _ClassSet(_range_symbols(low, str(high)), surely), i


def _class_char(body: str, i: int) -> tuple[str | _ClassSet, int] | None:
    if body[i] != "\\":
        return body[i], i + 1
    if i + 1 >= len(body):
        return None
    char = body[i + 1]
    if char in _NARROW_ESCAPES:
        return _ClassSet(frozenset({_OTHER}), frozenset()), i + 2
    if char in _WIDE_ESCAPES:
        return _ClassSet(_ALL, frozenset({_SLASH, _DOT})), i + 2
    if not char.isascii() or char.isalnum():
        return None
    return char, i + 2


def _range_symbols(low: str, high: str) -> frozenset[str]:
    found = {c for c in (_SLASH, _DOT) if low <= c <= high}
    if not (low >= _DOT and high <= _SLASH):  # any character besides . and /
        found.add(_OTHER)
    return frozenset(found)


def _quantifier(body: str, i: int, item: Item) -> tuple[Item, int] | None:
    """Apply the quantifier at ``i`` (if any) to ``item``."""
    if i >= len(body) or body[i] not in _QUANTIFIER_START:
        return item, i
    if body[i] == "{":
        bounds = _braces(body, i)
        if bounds is None:
            return None
        (minimum, maximum), i = bounds
    else:
        minimum, maximum = {"*": (0, None), "+": (1, None), "?": (0, 1)}[body[i]]
        i += 1
    if i < len(body) and body[i] in {"?", "+"}:
        i += 1  # lazy or possessive: the same strings
    if i < len(body) and body[i] in _QUANTIFIER_START:
        return None  # "multiple repeat"
    return Item(item.symbols, minimum, maximum), i


def _braces(body: str, i: int) -> tuple[tuple[int, int | None], int] | None:
    end = body.find("}", i)
    if end < 0:
        return None
    low, comma, high = body[i + 1 : end].partition(",")
    if not all(part.isascii() and (part.isdigit() or not part) for part in (low, high)):
        return None
    if len(low) > _MAX_COUNT_DIGITS or len(high) > _MAX_COUNT_DIGITS or not (low or comma):
        return None
    minimum = int(low or "0")
    maximum = (int(high) if high else None) if comma else minimum
    if maximum is not None and maximum < minimum:
        return None
    return (minimum, maximum), end + 1


# --------------------------------------------------------------------------- #
# glob


def glob_items(pattern: str) -> list[Item] | None:
    """The items of a path glob, or ``None`` when it is not modelled."""
    if any(char in pattern for char in "{}\\"):
        return None
    items: list[Item] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "*":
            stars = len(pattern[i:]) - len(pattern[i:].lstrip("*"))
            items.append(Item(_ALL if stars > 1 else _NO_SLASH, 0, None))
            i += stars
        elif char == "?":
            items.append(Item(_NO_SLASH))
            i += 1
        elif char == "[":
            found = _glob_class(pattern, i + 1)
            if found is None:
                return None
            chars, i = found
            items.append(Item(chars))
        else:
            items.append(_literal(char))
            i += 1
    return items


def _glob_class(pattern: str, i: int) -> tuple[frozenset[str], int] | None:
    negated = i < len(pattern) and pattern[i] in {"!", "^"}
    i += negated
    end = pattern.find("]", i + 1)  # a `]` right after `[` or `[!` is a member
    if end < 0:
        return None
    members = pattern[i:end]
    if _SLASH in members:
        return None
    may: set[str] = set()
    j = 0
    while j < len(members):
        if j + 2 < len(members) and members[j + 1] == "-":
            may |= _range_symbols(members[j], members[j + 2])
            j += 3
        else:
            may.add(_symbol(members[j]))
            j += 1
    may.discard(_SLASH)  # a path glob's class never matches `/`
    if negated:  # `.` stays possible unless the set surely holds it (`may` is exact for `.`)
        return frozenset({_OTHER} | ({_DOT} - may)), end + 1
    return frozenset(may), end + 1


# --------------------------------------------------------------------------- #
# the decision


def literal_text(items: Sequence[Item]) -> str | None:
    """The one path the items match, when each is a single literal character."""
    chars = [item.char for item in items if item.minimum == item.maximum == 1]
    if len(chars) != len(items) or any(char is None for char in chars):
        return None
    return "".join(char for char in chars if char is not None)


def stays_under(items: Sequence[Item], subtrees: Sequence[str]) -> bool:
    """Every path the items match starts with one of ``subtrees`` and has no ``.``/``..`` segment.

    ``subtrees`` end with ``/``. The start is checked on the literal head (the
    leading single-character literal items), the segments by the automaton.
    """
    head: list[str] = []
    for item in items:
        if item.char is None or not item.minimum == item.maximum == 1:
            break
        head.append(item.char)
    text = "".join(head)
    if not any(text.startswith(prefix) for prefix in subtrees):
        return False
    return not _may_name_dot_segment(items)


_START, _ONE_DOT, _TWO_DOTS, _NAME, _BAD = range(5)
_NEXT: Final = {
    _START: {_SLASH: _START, _DOT: _ONE_DOT, _OTHER: _NAME},
    _ONE_DOT: {_SLASH: _BAD, _DOT: _TWO_DOTS, _OTHER: _NAME},
    _TWO_DOTS: {_SLASH: _BAD, _DOT: _NAME, _OTHER: _NAME},
    _NAME: {_SLASH: _START, _DOT: _NAME, _OTHER: _NAME},
    _BAD: {_SLASH: _BAD, _DOT: _BAD, _OTHER: _BAD},
}


def _may_name_dot_segment(items: Sequence[Item]) -> bool:
    states = frozenset({_START})
    for item in items:
        states = _repeat(states, item)
    return bool(states & {_ONE_DOT, _TWO_DOTS, _BAD})


def _step(states: frozenset[int], symbols: frozenset[str]) -> frozenset[int]:
    return frozenset(_NEXT[state][symbol] for state in states for symbol in symbols)


def _repeat(states: frozenset[int], item: Item) -> frozenset[int]:
    """The states after ``item``; counts above four widen to "four or more"."""
    minimum = min(item.minimum, _WIDEN_ABOVE)
    exact = item.maximum is not None and item.maximum <= _WIDEN_ABOVE
    for _ in range(minimum):
        states = _step(states, item.symbols)
    if exact and item.maximum is not None:
        for _ in range(item.maximum - minimum):
            states = states | _step(states, item.symbols)
        return states
    while True:
        grown = states | _step(states, item.symbols)
        if grown == states:
            return states
        states = grown
