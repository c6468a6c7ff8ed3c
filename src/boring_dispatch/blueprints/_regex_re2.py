"""Translate a Python ``re`` pattern into an RE2 pattern with the same matches, or refuse it.

Python's own parser (``re._parser``, the one ``re.compile`` uses) reads the
pattern, so the translation starts from exactly the tree ``re`` would run.
Every node is rewritten into RE2 syntax whose meaning is spelled out rather
than borrowed from RE2's defaults:

* Characters become ``\\x{...}`` escapes; every class, ``.`` and ``\\d``,
  ``\\w``, ``\\s`` (and their negations) becomes an explicit list of code point
  ranges. The ranges of ``\\d``, ``\\w`` and ``\\s`` are Python's (``str``
  methods, Python's Unicode version, or ASCII under ``(?a)``), never RE2's.
* ``^`` and ``\\A`` become ``\\A``; ``\\Z`` becomes ``\\z``; under ``(?m)``,
  ``^`` and ``$`` keep RE2's line meaning, which is Python's (``\\n`` only).
* ``$`` without ``(?m)`` also matches before a final ``\\n``, which RE2 cannot
  say. It is accepted only where nothing after it can consume a character,
  and then becomes ``\\z`` in two programs: one run on the text, one (for
  ``re.match``) on the text without its final ``\\n``, where ``\\Z`` can never
  hold. Either accepting is exactly ``re`` accepting.
* Lazy quantifiers become greedy and groups stop capturing: callers only ask
  *whether* the text matches, which neither changes.

Refused, because RE2 has no equivalent (or Python's differs from RE2's):
backreferences, conditionals, lookarounds, atomic groups and possessive
quantifiers, ``\\b``/``\\B`` outside ``(?a)`` (Unicode word boundaries),
case-insensitive matching (Python's folding of ``i`` takes in U+0130 and U+0131,
RE2's does not), a ``$`` followed by more pattern, and repetition counts over 1000.

Text with lone surrogates (from ``surrogateescape`` argv) is encoded with
``surrogatepass``; RE2 then treats each surrogate as the code point it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import cache, lru_cache

# ``re``'s own parser and opcodes (CPython 3.11+): the tree ``re.compile`` runs. No stubs.
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Final

from boring_dispatch.blueprints._regex_lint import PatternRefusedError

__all__ = ["Translation", "TranslationRefused", "translate"]

_MAX_COUNT: Final = 1000  # RE2's largest repetition count
_SATURATE: Final = 1 << 40
_END_STRING: Final = r"\Z"  # a marker: the translation itself never writes RE2's (absent) \Z
_LAST: Final = 0x10FFFF
_FLAGS_TYPE: Final = sre.SRE_FLAG_ASCII | sre.SRE_FLAG_LOCALE | sre.SRE_FLAG_UNICODE
_CATEGORIES: Final = {
    sre.CATEGORY_DIGIT: ("d", False),
    sre.CATEGORY_NOT_DIGIT: ("d", True),
    sre.CATEGORY_SPACE: ("s", False),
    sre.CATEGORY_NOT_SPACE: ("s", True),
    sre.CATEGORY_WORD: ("w", False),
    sre.CATEGORY_NOT_WORD: ("w", True),
}
_PLAIN: Final = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")

Ranges = tuple[tuple[int, int], ...]


class TranslationRefused(PatternRefusedError):
    """The pattern has no exact RE2 equivalent here; the message says which construct."""


class Translation:
    """The RE2 text for the subject itself (``end``) and, when the pattern has a ``$``,
    the text to run by ``re.match`` on a subject ending in ``\\n`` with that ``\\n``
    removed (``newline``: equal to ``end`` unless the pattern also has ``\\Z``).

    ``positions`` counts the characters the pattern can consume in one pass once
    counted repetitions are multiplied out; ``weight`` sums the code point ranges
    of those positions (what RE2's program size and compile time grow with).
    """

    __slots__ = ("end", "newline", "positions", "weight")

    def __init__(self, end: str, newline: str | None, positions: int, weight: int) -> None:
        self.end = end
        self.newline = newline
        self.positions = positions
        self.weight = weight


def translate(text: str) -> Translation:
    """Translate ``text`` (Python ``re`` syntax, default flags).

    Raises:
        TranslationRefused: a construct listed in the module docstring.
        re.error, RecursionError, OverflowError: ``re`` itself rejects it.
    """
    parsed = _parser.parse(text, 0)
    flags = int(parsed.state.flags)
    items = _items(parsed)
    writer = _Writer()
    body = writer.sequence(items, flags, tail=True)  # ``\Z`` marks where the variants differ
    positions, weight = _size(items, flags)
    end = body.replace(_END_STRING, r"\z")
    newline = body.replace(_END_STRING, _class(())) if writer.saw_dollar else None
    return Translation(end, newline, positions, weight)


class _Writer:
    __slots__ = ("saw_dollar",)

    def __init__(self) -> None:
        self.saw_dollar = False

    def sequence(self, items: Sequence[tuple[object, object]], flags: int, *, tail: bool) -> str:
        # silent[i]: nothing after item i can consume a character (one pass from the end).
        silent = [True] * len(items)
        for index in range(len(items) - 2, -1, -1):
            silent[index] = silent[index + 1] and not _consumes(items[index + 1])
        out = [
            self.node(op, av, flags, tail=tail and silent[index])
            for index, (op, av) in enumerate(items)
        ]
        return "".join(out)

    def node(self, op: object, av: object, flags: int, *, tail: bool) -> str:  # noqa: C901, PLR0911
        if flags & sre.SRE_FLAG_IGNORECASE:
            raise TranslationRefused("pattern uses case-insensitive matching")
        if op is sre.LITERAL:
            return _char(_int(av))
        if op is sre.NOT_LITERAL:
            return _class(_complement(((_int(av), _int(av)),)))
        if op is sre.ANY:
            return _class(
                ((0, _LAST),) if flags & sre.SRE_FLAG_DOTALL else _complement(((10, 10),))
            )
        if op is sre.IN:
            return _class_text(_class_key(av, flags))
        if op is sre.AT:
            return self.anchor(av, flags, tail=tail)
        if op is sre.BRANCH:
            _, branches = _pair(av)
            parts = [self.sequence(_items(b), flags, tail=tail) for b in _list(branches)]
            return "(?:" + "|".join(parts) + ")"
        if op is sre.SUBPATTERN:
            _, add, remove, inner = _tuple(av, 4)
            return (
                "(?:" + self.sequence(_items(inner), _combine(flags, add, remove), tail=tail) + ")"
            )
        if op is sre.MAX_REPEAT or op is sre.MIN_REPEAT:
            low, high, inner = _tuple(av, 3)
            return self.repeat(_int(low), _int(high), _items(inner), flags, tail=tail)
        if op is sre.GROUPREF or op is sre.GROUPREF_EXISTS:
            raise TranslationRefused("pattern uses a backreference or a conditional")
        if op is sre.ASSERT or op is sre.ASSERT_NOT:
            raise TranslationRefused("pattern uses a lookahead or lookbehind")
        if op is sre.ATOMIC_GROUP or op is sre.POSSESSIVE_REPEAT:
            raise TranslationRefused("pattern uses an atomic group or a possessive quantifier")
        raise TranslationRefused("pattern uses an unsupported construct")

    def repeat(
        self, low: int, high: int, inner: Sequence[tuple[object, object]], flags: int, *, tail: bool
    ) -> str:
        unbounded = high == sre.MAXREPEAT
        if low > _MAX_COUNT or (not unbounded and high > _MAX_COUNT):
            raise TranslationRefused("pattern has a repetition count over 1000")
        # Another iteration may follow the body: it is a tail only if it repeats at most once.
        body = self.sequence(inner, flags, tail=tail and (high <= 1 and not unbounded))
        if unbounded:
            count = "*" if low == 0 else "+" if low == 1 else f"{{{low},}}"
        elif low == high:
            count = f"{{{low}}}"
        else:
            count = "?" if (low, high) == (0, 1) else f"{{{low},{high}}}"
        return "(?:" + body + ")" + count

    def anchor(self, code: object, flags: int, *, tail: bool) -> str:
        multiline = bool(flags & sre.SRE_FLAG_MULTILINE)
        if code is sre.AT_BEGINNING_STRING or (code is sre.AT_BEGINNING and not multiline):
            return r"\A"
        if code is sre.AT_BEGINNING:
            return "(?m:^)"
        if code is sre.AT_END and multiline:
            return "(?m:$)"
        if code is sre.AT_END:
            if not tail:
                raise TranslationRefused("pattern has '$' before more pattern; end it with \\Z")
            self.saw_dollar = True
            return r"\z"
        if code is sre.AT_END_STRING:
            return _END_STRING
        if code is sre.AT_BOUNDARY or code is sre.AT_NON_BOUNDARY:
            if not flags & sre.SRE_FLAG_ASCII:
                raise TranslationRefused("pattern uses \\b or \\B outside ASCII mode (?a)")
            return r"\b" if code is sre.AT_BOUNDARY else r"\B"
        raise TranslationRefused("pattern uses an unsupported anchor")


def _consumes(item: tuple[object, object]) -> bool:
    """Whether the node can consume a character (conservative: unknown nodes can)."""
    op, av = item
    if op is sre.AT:
        return False
    if op is sre.BRANCH:
        return any(_consumes(n) for branch in _list(_pair(av)[1]) for n in _items(branch))
    if op is sre.SUBPATTERN:
        return any(_consumes(n) for n in _items(_tuple(av, 4)[3]))
    if op is sre.MAX_REPEAT or op is sre.MIN_REPEAT:
        _, high, inner = _tuple(av, 3)
        return _int(high) > 0 and any(_consumes(n) for n in _items(inner))
    return True


def _size(items: Sequence[tuple[object, object]], flags: int) -> tuple[int, int]:
    """(positions, weight) of a sequence, counted repetitions multiplied out.

    Saturates at a large bound so a nested count cannot build a huge integer.
    """
    positions = weight = 0
    for op, av in items:
        if op is sre.LITERAL or op is sre.NOT_LITERAL or op is sre.ANY:
            p, w = 1, 2
        elif op is sre.IN:
            p, w = 1, max(1, len(_class_ranges(_class_key(av, flags))))
        elif op is sre.BRANCH:
            sizes = [_size(_items(b), flags) for b in _list(_pair(av)[1])]
            p, w = sum(s[0] for s in sizes), sum(s[1] for s in sizes)
        elif op is sre.SUBPATTERN:
            _, add, remove, inner = _tuple(av, 4)
            p, w = _size(_items(inner), _combine(flags, add, remove))
        elif op is sre.MAX_REPEAT or op is sre.MIN_REPEAT:
            low, high, inner = _tuple(av, 3)
            copies = _int(low) + 1 if _int(high) == sre.MAXREPEAT else _int(high)
            p, w = _size(_items(inner), flags)
            p, w = p * min(copies, _SATURATE), w * min(copies, _SATURATE)
        else:
            p, w = 0, 0
        positions, weight = min(positions + p, _SATURATE), min(weight + w, _SATURATE)
    return positions, weight


def _combine(flags: int, add: object, remove: object) -> int:
    """Scoped flags exactly as ``re._compiler`` combines them."""
    added, removed = _int(add), _int(remove)
    if added & _FLAGS_TYPE:
        flags &= ~_FLAGS_TYPE
    return (flags | added) & ~removed


def _class_key(av: object, flags: int) -> tuple[tuple[tuple[object, object], ...], bool]:
    """A hashable key of a class: its items, and whether ``\\d\\s\\w`` are Unicode."""
    items = tuple((op, tuple(v) if isinstance(v, list) else v) for op, v in _items(av))
    return items, bool(flags & sre.SRE_FLAG_UNICODE)


@lru_cache(maxsize=256)
def _class_ranges(key: tuple[tuple[tuple[object, object], ...], bool]) -> Ranges:
    return _set_of(key[0], unicode=key[1])


@lru_cache(maxsize=256)
def _class_text(key: tuple[tuple[tuple[object, object], ...], bool]) -> str:
    """The RE2 class of a ``re`` class (a large one, such as ``\\w``, is built once)."""
    return _class(_class_ranges(key))


def _set_of(items: Sequence[tuple[object, object]], *, unicode: bool) -> Ranges:
    """The code points a class (``re`` IN node) matches."""
    negate = False
    parts: list[tuple[int, int]] = []
    for op, av in items:
        if op is sre.NEGATE:
            negate = True
        elif op is sre.LITERAL:
            parts.append((_int(av), _int(av)))
        elif op is sre.RANGE:
            low, high = _pair(av)
            parts.append((_int(low), _int(high)))
        elif op is sre.CATEGORY and av in _CATEGORIES:
            name, negated = _CATEGORIES[av]
            ranges = category_ranges(name, ascii_only=not unicode)
            parts.extend(_complement(ranges) if negated else ranges)
        else:
            raise TranslationRefused("pattern uses an unsupported character class item")
    merged = _merge(parts)
    return _complement(merged) if negate else merged


@cache
def category_ranges(name: str, *, ascii_only: bool) -> Ranges:
    """Code point ranges of ``\\d``, ``\\s`` or ``\\w`` as this Python's ``re`` matches them."""
    if ascii_only:
        return _runs("(?a)\\" + name + "+", "".join(map(chr, range(128))))
    import unicodedata

    from boring_dispatch.blueprints._regex_tables import TABLES

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


def _merge(parts: Iterable[tuple[int, int]]) -> Ranges:
    out: list[tuple[int, int]] = []
    for low, high in sorted(parts):
        if low > high:
            continue
        if out and low <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], high))
        else:
            out.append((low, high))
    return tuple(out)


def _complement(ranges: Ranges) -> Ranges:
    out: list[tuple[int, int]] = []
    start = 0
    for low, high in ranges:
        if low > start:
            out.append((start, low - 1))
        start = high + 1
    if start <= _LAST:
        out.append((start, _LAST))
    return tuple(out)


def _class(ranges: Ranges) -> str:
    if not ranges:
        return r"[^\x{0}-\x{10FFFF}]"  # matches nothing
    body = "".join(
        _in_class(lo) if lo == hi else f"{_in_class(lo)}-{_in_class(hi)}" for lo, hi in ranges
    )
    return f"[{body}]"


def _in_class(code: int) -> str:
    """A class member: the character itself where RE2 reads it literally (a shorter text
    parses faster: Unicode ``\\w`` has 734 ranges), else an escape."""
    if code >= 0xA0 and not 0xD800 <= code <= 0xDFFF:
        return chr(code)
    return _char(code)


def _char(code: int) -> str:
    return chr(code) if chr(code) in _PLAIN else _esc(code)


def _esc(code: int) -> str:
    return f"\\x{{{code:X}}}"


# The parse tree is untyped (``re._parser`` has no stubs): narrow its values here.


def _int(value: object) -> int:
    if not isinstance(value, int):
        raise TranslationRefused("pattern uses an unsupported construct")
    return value


def _items(value: object) -> list[tuple[object, object]]:
    if isinstance(value, _parser.SubPattern):
        value = value.data
    return [_pair(item) for item in _list(value)]


def _list(value: object) -> list[object]:
    if not isinstance(value, (list, tuple)):
        raise TranslationRefused("pattern uses an unsupported construct")
    return list(value)


def _pair(value: object) -> tuple[object, object]:
    first, second = _tuple(value, 2)
    return first, second


def _tuple(value: object, size: int) -> tuple[object, ...]:
    if not isinstance(value, (tuple, list)) or len(value) != size:
        raise TranslationRefused("pattern uses an unsupported construct")
    return tuple(value)
