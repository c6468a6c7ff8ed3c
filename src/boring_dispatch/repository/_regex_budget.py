"""How much work RE2 can do per character for a pattern: an upper bound, from its parse tree.

RE2 runs a pattern as an automaton over *positions* (the character-consuming
atoms, counted repetitions multiplied out: RE2 expands ``x{2,4}`` into
``xx(x(x)?)?``). Its time per character of text is proportional to how many
positions can be live at once (threads of its NFA, or the size of its DFA
states). One match starts once, at the beginning of the text (``re.match`` and
``re.fullmatch`` only), so :func:`measure` bounds, for one entry, the most
positions live at the same time (``live``), along with the total code point
ranges of the positions (``weight``: what RE2's program size and compile time
grow with).

The bound is compositional. For each sub-pattern it tracks ``live``, the most
distinct times one entry can *exit* it (``exits``), whether it can match empty,
the characters it can start with (``first``) and consume (``chars``), and
``extend``: the characters it can consume at a moment when it could also have
exited. The one rule that keeps common patterns cheap: in ``A B``, if no
character that can start ``B`` can extend ``A``, then ``B`` can only come alive
at the one exit of ``A`` after which ``A`` cannot go on, and ``A`` is dead from
then on, so the two are never live together (``[a-z]{1,253}:`` has one live
position, ``(?:-[a-z]+)*`` too). Otherwise every exit of ``A`` may start ``B``
again (``.*\\w.{40}`` has about 42 live positions, ``(a?){31}a{31}`` about 62).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from boring_dispatch.repository._regex_ranges import Ranges, complement, merge
from boring_dispatch.repository._regex_re2 import (
    class_key,
    class_ranges,
    combine_flags,
    int_of,
    items_of,
    list_of,
    pair_of,
    sre,
    tuple_of,
)

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import Final

__all__ = ["Measure", "measure"]

_SATURATE: Final = 1 << 40
_EVERYTHING: Final[Ranges] = ((0, 0x10FFFF),)
_NOT_NEWLINE: Final[Ranges] = complement(((10, 10),))


class Measure:
    """The bound of one (sub-)pattern, for one entry."""

    __slots__ = ("chars", "exits", "extend", "first", "live", "nullable", "positions", "weight")

    def __init__(  # noqa: PLR0913 - one field each
        self,
        *,
        live: int,
        positions: int,
        exits: int,
        nullable: bool,
        first: Ranges,
        chars: Ranges,
        extend: Ranges,
        weight: int,
    ) -> None:
        self.live = min(live, _SATURATE)
        self.positions = min(positions, _SATURATE)
        self.exits = min(exits, _SATURATE)
        self.nullable = nullable
        self.first = first
        self.chars = chars
        self.extend = extend
        self.weight = min(weight, _SATURATE)


_EMPTY: Final = Measure(
    live=0, positions=0, exits=1, nullable=True, first=(), chars=(), extend=(), weight=0
)


def measure(items: Sequence[tuple[object, object]], flags: int, limit: int) -> Measure:
    """The bound of a parsed sequence (``re._parser`` items) under ``flags``.

    ``limit`` caps the work: counted repetitions stop multiplying once their
    weight is over it (the result is then over the limit too).
    """
    out = _EMPTY
    for op, av in items:
        out = _then(out, _node(op, av, flags, limit))
    return out


def _node(op: object, av: object, flags: int, limit: int) -> Measure:  # noqa: PLR0911
    if op is sre.LITERAL:
        return _leaf(((int_of(av), int_of(av)),), 1)
    if op is sre.NOT_LITERAL:
        return _leaf(complement(((int_of(av), int_of(av)),)), 2)
    if op is sre.ANY:
        return _leaf(_EVERYTHING if flags & sre.SRE_FLAG_DOTALL else _NOT_NEWLINE, 2)
    if op is sre.IN:
        ranges = class_ranges(class_key(av, flags))
        return _leaf(ranges, max(1, len(ranges)))
    if op is sre.BRANCH:
        branches = [measure(items_of(b), flags, limit) for b in list_of(pair_of(av)[1])]
        out = branches[0]
        for branch in branches[1:]:
            out = _either(out, branch)
        return out
    if op is sre.SUBPATTERN:
        _, add, remove, inner = tuple_of(av, 4)
        return measure(items_of(inner), combine_flags(flags, add, remove), limit)
    if op is sre.MAX_REPEAT or op is sre.MIN_REPEAT:
        low, high, inner = tuple_of(av, 3)
        body = measure(items_of(inner), flags, limit)
        return _repeat(body, int_of(low), None if high == sre.MAXREPEAT else int_of(high), limit)
    # Anchors (the translation refuses every other node).
    return Measure(
        live=0, positions=0, exits=1, nullable=True, first=(), chars=(), extend=(), weight=1
    )


def _leaf(ranges: Ranges, weight: int) -> Measure:
    return Measure(
        live=1,
        positions=1,
        exits=1,
        nullable=False,
        first=ranges,
        chars=ranges,
        extend=(),
        weight=weight,
    )


def _then(a: Measure, b: Measure) -> Measure:
    """``A`` then ``B``."""
    if a is _EMPTY:
        return b
    separate = _disjoint(b.first, a.extend)
    if separate:
        live = max(a.live, b.live)
        extend = _union(b.extend, _union(a.extend, b.first) if b.nullable else ())
    else:
        live = a.live + min(b.positions, a.exits * b.live)
        extend = _union(_union(a.chars, b.chars), b.extend)
    return Measure(
        live=live,
        positions=a.positions + b.positions,
        exits=a.exits * b.exits,
        nullable=a.nullable and b.nullable,
        first=_union(a.first, b.first) if a.nullable else a.first,
        chars=_union(a.chars, b.chars),
        extend=extend,
        weight=a.weight + b.weight,
    )


def _either(a: Measure, b: Measure) -> Measure:
    """``A|B``: both alive from the same entry."""
    chars = _union(a.chars, b.chars)
    return Measure(
        live=a.live + b.live,
        positions=a.positions + b.positions,
        exits=a.exits + b.exits,
        nullable=a.nullable or b.nullable,
        first=_union(a.first, b.first),
        chars=chars,
        extend=chars,
        weight=a.weight + b.weight + 1,
    )


def _optional(a: Measure) -> Measure:
    """``A?``: exits at entry too, when ``A`` may start."""
    return Measure(
        live=a.live,
        positions=a.positions,
        exits=a.exits + 1,
        nullable=True,
        first=a.first,
        chars=a.chars,
        extend=_union(a.extend, a.first),
        weight=a.weight + 1,
    )


def _star(a: Measure) -> Measure:
    """``A*``: one iteration at a time when no start of ``A`` can extend ``A``."""
    sequential = _disjoint(a.first, a.extend)
    return Measure(
        live=a.live if sequential else a.positions,
        positions=a.positions,
        exits=_SATURATE,
        nullable=True,
        first=a.first,
        chars=a.chars,
        extend=_union(a.first, a.extend) if sequential else a.chars,
        weight=a.weight + 1,
    )


def _repeat(a: Measure, low: int, high: int | None, limit: int) -> Measure:
    """``A{low,high}`` as RE2 builds it: ``low`` copies, then nested optional copies."""
    copies = low if high is None else high
    if copies * max(a.weight, 1) > limit:
        return Measure(
            live=_SATURATE,
            positions=_SATURATE,
            exits=_SATURATE,
            nullable=True,
            first=a.first,
            chars=a.chars,
            extend=a.chars,
            weight=_SATURATE,
        )
    out = _EMPTY
    for _ in range(low):
        out = _then(out, a)
    if high is None:
        return _then(out, _star(a))
    tail = _EMPTY
    for _ in range(high - low):
        tail = _optional(_then(a, tail))
    return _then(out, tail)


@lru_cache(maxsize=1024)
def _union(a: Ranges, b: Ranges) -> Ranges:
    if a == b or not b:
        return a
    if not a:
        return b
    return merge((*a, *b))


@lru_cache(maxsize=1024)
def _disjoint(a: Ranges, b: Ranges) -> bool:
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i][1] < b[j][0]:
            i += 1
        elif b[j][1] < a[i][0]:
            j += 1
        else:
            return False
    return True
