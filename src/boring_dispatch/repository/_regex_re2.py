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
quantifiers, ``\\b`` outside ``(?a)`` (Unicode word boundaries), ``\\B``
(``re`` before 3.14 never matches it in an empty string, RE2 does),
case-insensitive matching (Python's folding of ``i`` takes in U+0130 and U+0131,
RE2's does not), and a ``$`` followed by more pattern. Counts over RE2's 1000
are split exactly (``_counted``); counts over the size limit are refused.

Text with lone surrogates (from ``surrogateescape`` argv) is encoded with
``surrogatepass``; RE2 then treats each surrogate as the code point it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

# ``re``'s own parser and opcodes (CPython 3.11+): the tree ``re.compile`` runs. No stubs.
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]

from boring_dispatch.repository._regex_lint import PatternRefused
from boring_dispatch.repository._regex_ranges import (
    LAST_CODE_POINT as _LAST,
)
from boring_dispatch.repository._regex_ranges import (
    Ranges,
    category_ranges,
    complement,
    merge,
)

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import Final

__all__ = [
    "Ranges",
    "Translation",
    "TranslationRefused",
    "class_key",
    "class_ranges",
    "combine_flags",
    "complement",
    "int_of",
    "items_of",
    "list_of",
    "merge",
    "pair_of",
    "sre",
    "translate",
    "tuple_of",
]

_MAX_COUNT: Final = 1000  # RE2's largest repetition count
_END_STRING: Final = r"\Z"  # a marker: the translation itself never writes RE2's (absent) \Z
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


class TranslationRefused(PatternRefused):
    """The pattern has no exact RE2 equivalent here; the message says which construct."""


class Translation:
    """The RE2 text for the subject itself (``end``) and, when the pattern has a ``$``,
    the text to run by ``re.match`` on a subject ending in ``\\n`` with that ``\\n``
    removed (``newline``: equal to ``end`` unless the pattern also has ``\\Z``).

    ``items`` and ``flags`` are the parse the translation was made from: the
    budget (:mod:`._regex_budget`) measures the same tree.
    """

    __slots__ = ("end", "flags", "items", "newline")

    def __init__(
        self,
        end: str,
        newline: str | None,
        items: Sequence[tuple[object, object]],
        flags: int,
    ) -> None:
        self.end = end
        self.newline = newline
        self.items = items
        self.flags = flags


def translate(text: str, limit: int) -> Translation:
    """Translate ``text`` (Python ``re`` syntax, default flags); counts stop at ``limit``.

    Raises:
        TranslationRefused: a construct listed in the module docstring.
        re.error, RecursionError, OverflowError: ``re`` itself rejects it.
    """
    parsed = _parser.parse(text, 0)
    flags = int(parsed.state.flags)
    items = items_of(parsed)
    writer = _Writer(limit)
    body = writer.sequence(items, flags, tail=True)  # ``\Z`` marks where the variants differ
    end = body.replace(_END_STRING, r"\z")
    newline = body.replace(_END_STRING, _class(())) if writer.saw_dollar else None
    return Translation(end, newline, items, flags)


class _Writer:
    __slots__ = ("limit", "saw_dollar")

    def __init__(self, limit: int) -> None:
        self.limit = limit
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
            return _char(int_of(av))
        if op is sre.NOT_LITERAL:
            return _class(complement(((int_of(av), int_of(av)),)))
        if op is sre.ANY:
            return _class(((0, _LAST),) if flags & sre.SRE_FLAG_DOTALL else complement(((10, 10),)))
        if op is sre.IN:
            return _class_text(class_key(av, flags))
        if op is sre.AT:
            return self.anchor(av, flags, tail=tail)
        if op is sre.BRANCH:
            _, branches = pair_of(av)
            parts = [self.sequence(items_of(b), flags, tail=tail) for b in list_of(branches)]
            return "(?:" + "|".join(parts) + ")"
        if op is sre.SUBPATTERN:
            _, add, remove, inner = tuple_of(av, 4)
            return (
                "(?:"
                + self.sequence(items_of(inner), combine_flags(flags, add, remove), tail=tail)
                + ")"
            )
        if op is sre.MAX_REPEAT or op is sre.MIN_REPEAT:
            low, high, inner = tuple_of(av, 3)
            return self.repeat(int_of(low), int_of(high), items_of(inner), flags, tail=tail)
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
        if low > self.limit or (not unbounded and high > self.limit):
            raise TranslationRefused(f"pattern has a repetition count over {self.limit}")
        # Another iteration may follow the body: it is a tail only if it repeats at most once.
        body = self.sequence(inner, flags, tail=tail and (high <= 1 and not unbounded))
        return _counted("(?:" + body + ")", low, None if unbounded else high)

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
        if code is sre.AT_NON_BOUNDARY:
            # re (before Python 3.14) never matches \B in an empty string; RE2 does.
            raise TranslationRefused("pattern uses \\B, which re and RE2 read differently")
        if code is sre.AT_BOUNDARY:
            if not flags & sre.SRE_FLAG_ASCII:
                raise TranslationRefused("pattern uses \\b outside ASCII mode (?a)")
            return r"\b"
        raise TranslationRefused("pattern uses an unsupported anchor")


def _counted(atom: str, low: int, high: int | None) -> str:
    """``atom{low,high}`` (``None``: unbounded) with no count over RE2's 1000.

    Larger counts are split exactly, keeping RE2's nesting of optional copies:
    ``x{0,2500}`` is ``(?:x{0,999}|x{1000}(?:x{0,999}|x{1000}x{0,500}))``.
    """
    if high is None:
        if low <= _MAX_COUNT:
            return atom + ("*" if low == 0 else "+" if low == 1 else f"{{{low},}}")
        return f"{atom}{{{_MAX_COUNT}}}" + _counted(atom, low - _MAX_COUNT, None)
    if high <= _MAX_COUNT:
        if low == high:
            return f"{atom}{{{low}}}"
        return atom + ("?" if (low, high) == (0, 1) else f"{{{low},{high}}}")
    if low > 0:
        first = min(low, _MAX_COUNT)
        return f"{atom}{{{first}}}" + _counted(atom, low - first, high - first)
    rest = _counted(atom, 0, high - _MAX_COUNT)
    return f"(?:{atom}{{0,{_MAX_COUNT - 1}}}|{atom}{{{_MAX_COUNT}}}{rest})"


def _consumes(item: tuple[object, object]) -> bool:
    """Whether the node can consume a character (conservative: unknown nodes can)."""
    op, av = item
    if op is sre.AT:
        return False
    if op is sre.BRANCH:
        return any(_consumes(n) for branch in list_of(pair_of(av)[1]) for n in items_of(branch))
    if op is sre.SUBPATTERN:
        return any(_consumes(n) for n in items_of(tuple_of(av, 4)[3]))
    if op is sre.MAX_REPEAT or op is sre.MIN_REPEAT:
        _, high, inner = tuple_of(av, 3)
        return int_of(high) > 0 and any(_consumes(n) for n in items_of(inner))
    return True


def combine_flags(flags: int, add: object, remove: object) -> int:
    """Scoped flags exactly as ``re._compiler`` combines them."""
    added, removed = int_of(add), int_of(remove)
    if added & _FLAGS_TYPE:
        flags &= ~_FLAGS_TYPE
    return (flags | added) & ~removed


def class_key(av: object, flags: int) -> tuple[tuple[tuple[object, object], ...], bool]:
    """A hashable key of a class: its items, and whether ``\\d\\s\\w`` are Unicode."""
    items = tuple((op, tuple(v) if isinstance(v, list) else v) for op, v in items_of(av))
    return items, bool(flags & sre.SRE_FLAG_UNICODE)


@lru_cache(maxsize=256)
def class_ranges(key: tuple[tuple[tuple[object, object], ...], bool]) -> Ranges:
    return _set_of(key[0], unicode=key[1])


@lru_cache(maxsize=256)
def _class_text(key: tuple[tuple[tuple[object, object], ...], bool]) -> str:
    """The RE2 class of a ``re`` class (a large one, such as ``\\w``, is built once)."""
    return _class(class_ranges(key))


def _set_of(items: Sequence[tuple[object, object]], *, unicode: bool) -> Ranges:
    """The code points a class (``re`` IN node) matches."""
    negate = False
    parts: list[tuple[int, int]] = []
    for op, av in items:
        if op is sre.NEGATE:
            negate = True
        elif op is sre.LITERAL:
            parts.append((int_of(av), int_of(av)))
        elif op is sre.RANGE:
            low, high = pair_of(av)
            parts.append((int_of(low), int_of(high)))
        elif op is sre.CATEGORY and av in _CATEGORIES:
            name, negated = _CATEGORIES[av]
            ranges = category_ranges(name, ascii_only=not unicode)
            parts.extend(complement(ranges) if negated else ranges)
        else:
            raise TranslationRefused("pattern uses an unsupported character class item")
    merged = merge(parts)
    return complement(merged) if negate else merged


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


def int_of(value: object) -> int:
    if not isinstance(value, int):
        raise TranslationRefused("pattern uses an unsupported construct")
    return value


def items_of(value: object) -> list[tuple[object, object]]:
    if isinstance(value, _parser.SubPattern):
        value = value.data
    return [pair_of(item) for item in list_of(value)]


def list_of(value: object) -> list[object]:
    if not isinstance(value, (list, tuple)):
        raise TranslationRefused("pattern uses an unsupported construct")
    return list(value)


def pair_of(value: object) -> tuple[object, object]:
    first, second = tuple_of(value, 2)
    return first, second


def tuple_of(value: object, size: int) -> tuple[object, ...]:
    if not isinstance(value, (tuple, list)) or len(value) != size:
        raise TranslationRefused("pattern uses an unsupported construct")
    return tuple(value)
