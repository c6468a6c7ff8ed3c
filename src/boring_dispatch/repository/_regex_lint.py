"""A static lint against catastrophic backtracking in Python ``re`` patterns.

The pattern is parsed into a tree of elements (atoms and groups, each with
its quantifier) and refused when:

* **Exponential:** a group with a repeating quantifier (``*``, ``+``,
  ``{m,}``, ``{m,n}`` with n > 1) contains an alternation at any depth
  (``(a|aa)*``, ``(?:x|)+``), a quantified group (``(?:-(a)?)+``), or a
  variably quantified atom, unless the group starts with an unquantified
  literal character that none of those atoms can match. So ``(a+)+``,
  ``(\\w+\\s?)*`` and ``(?:-[a-z-]+)+`` are refused while the ID grammar
  ``^[a-z0-9]+(?:-[a-z0-9]+)+$``, ``(?:,\\d+)*`` and fixed-width groups
  (``(?:ab)+``, ``(?:a{2})+``) are accepted.
* **Polynomial of degree 3 or more:** three unbounded terms (a quantifier
  without an upper bound or above 16) can compete for the same run of
  characters, with no mandatory element between them that none of them can
  match (``^a*.*\\w+$``, ``^.*(?:x?.*)\\w+$``).
* **Unbounded by nature:** backreferences (``\\1``, ``(?P=name)``),
  conditionals and any other ``(?...`` construct not listed in
  ``_GROUP_PREFIX``, and verbose mode (whose whitespace rules this parser
  does not follow).

"Can match" is decided by probing ASCII and a few non-ASCII characters under
IGNORECASE and DOTALL, a superset of what any flag combination allows.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import Final

__all__ = ["PatternRefused", "lint"]

_PROBE: Final = "".join(map(chr, range(0x20, 0x7F))) + "\t\n\r\u00e9\u0661\u2028\u00a0"
_ALL: Final = frozenset(_PROBE)
_UNBOUNDED_ABOVE: Final = 16
_MAX_DEGREE: Final = 2
_QUANTIFIER: Final = re.compile(r"\{([0-9]*)(,?)([0-9]*)\}", re.ASCII)
_VERBOSE: Final = re.compile(r"\(\?[a-zA-Z-]*x")
_DIGITS: Final = frozenset("123456789")
_META: Final = frozenset(".^$*+?{}[]\\|()")
# Compiled (and cached by ``re``) on first use, not at import: a CLI start rarely needs it.
_GROUP_PREFIX: Final = (
    r"\(\?(?:[:>]|[=!]|<[=!]|P<[A-Za-z_][A-Za-z0-9_]*>|[aiLmsux]*(?:-[imsx]+)?[:)]|#[^)]*\))"
)
_LOOKAROUND: Final = ("(?=", "(?!", "(?<=", "(?<!")


class PatternRefused(Exception):
    """The pattern is invalid, over-long or has a catastrophic-backtracking shape."""


# Plain slotted classes (mutable working state of one lint), not dataclasses:
# importing ``dataclasses`` costs the CLI's start more than these few lines.
class _Group:
    __slots__ = ("branches", "degree", "lookaround")

    def __init__(self, *, lookaround: bool = False) -> None:
        self.branches: list[list[_Element]] = [[]]
        self.lookaround = lookaround
        self.degree = 0


class _Element:
    """One atom or group in a sequence, with what its quantifier made of it."""

    __slots__ = ("chars", "group", "literal", "mandatory", "quantified", "unbounded", "variable")

    def __init__(
        self,
        *,
        chars: frozenset[str],
        literal: str | None = None,
        group: _Group | None = None,
        mandatory: bool = True,
    ) -> None:
        self.chars = chars
        self.literal = literal
        self.group = group
        self.mandatory = mandatory
        self.unbounded = False
        self.variable = False
        self.quantified = False

    @property
    def weight(self) -> int:
        """Unbounded terms this element brings into a sequence."""
        inner = self.group.degree if self.group is not None else 0
        return max(inner, 1 if self.unbounded else 0)


def lint(text: str) -> None:
    """Refuse the pattern shapes listed in the module docstring.

    Raises:
        PatternRefused: the reason, never the pattern text.
    """
    if _VERBOSE.search(text):
        raise PatternRefused("pattern uses verbose mode")
    stack: list[_Group] = [_Group()]
    i = 0
    while i < len(text):
        branch = stack[-1].branches[-1]
        length, low, high = _quantifier_at(text, i)
        if length and branch and not branch[-1].quantified:
            _quantify(branch[-1], low, high)
            i += length
        elif text[i] == "(":
            i = _open_group(text, i, stack)
        elif text[i] == ")" and len(stack) > 1:
            group = _close(stack.pop())
            chars = frozenset() if group.lookaround else _chars_of(group)
            mandatory = not group.lookaround and all(_consumes(b) for b in group.branches)
            stack[-1].branches[-1].append(_Element(chars=chars, group=group, mandatory=mandatory))
            i += 1
        elif text[i] == "|":
            stack[-1].branches.append([])
            i += 1
        else:
            i = _read_atom(text, i, branch)
    _close(stack[0])


def _quantify(element: _Element, low: int, high: int | None) -> None:
    element.quantified = True
    element.variable = high != low
    element.mandatory = element.mandatory and low >= 1
    element.unbounded = element.unbounded or high is None or high > _UNBOUNDED_ABOVE
    repeats = high is None or high > 1
    if element.group is not None and repeats:
        _check_repeated_group(element.group)


def _open_group(text: str, i: int, stack: list[_Group]) -> int:
    """Push a group for ``(`` at ``i``; inline flags and comments push nothing."""
    if not text.startswith("(?", i):
        stack.append(_Group())
        return i + 1
    prefix = re.compile(_GROUP_PREFIX).match(text, i)
    if prefix is None:
        raise PatternRefused("pattern uses an unsupported group construct")
    if not prefix.group().endswith(")"):
        stack.append(_Group(lookaround=text.startswith(_LOOKAROUND, i)))
    return prefix.end()


def _read_atom(text: str, i: int, branch: list[_Element]) -> int:
    """Append the atom at ``i`` (class, escape or character); return the next index."""
    char = text[i]
    literal: str | None = None
    if char == "[":
        end = _skip_class(text, i)
    elif char == "\\":
        escaped = text[i + 1 : i + 2]
        if escaped in _DIGITS:
            raise PatternRefused("pattern uses a backreference")
        literal = escaped if escaped and not escaped.isalnum() else None
        end = i + 2
    else:
        literal = None if char in _META else char
        end = i + 1
    branch.append(_Element(chars=_chars(text[i:end], literal), literal=literal))
    return end


def _close(group: _Group) -> _Group:
    """Compute the group's degree; refuse three competing unbounded terms."""
    group.degree = max(_sequence_degree(branch) for branch in group.branches)
    if group.degree > _MAX_DEGREE:
        raise PatternRefused("pattern has three or more competing unbounded repetitions")
    return group


def _sequence_degree(elements: list[_Element]) -> int:
    """The most unbounded terms that can compete for one run of characters."""
    open_terms: list[_Element] = []
    best = 0
    for element in elements:
        barrier = element.mandatory and element.chars
        if barrier and not any(element.chars & term.chars for term in open_terms):
            open_terms = []  # nothing before can consume what this element needs
        if element.weight:
            competing = sum(t.weight for t in open_terms if t.chars & element.chars)
            best = max(best, competing + element.weight)
            open_terms.append(element)
    return best


def _check_repeated_group(group: _Group) -> None:
    """A repeated group is linear when each iteration is fixed or starts with a separator."""
    inner = list(_walk(group))
    if len(group.branches) > 1 or any(
        e.group is not None and len(e.group.branches) > 1 for e in inner
    ):
        raise PatternRefused("pattern repeats a group that alternates")
    if any(e.group is not None and e.quantified for e in inner):
        raise PatternRefused("pattern repeats a group that nests a repetition")
    variable = [e for e in inner if e.variable]
    if not variable:
        return
    first = group.branches[0][0] if group.branches[0] else None
    separator = first.literal if first is not None and not first.quantified else None
    if separator is None or any(separator in e.chars for e in variable):
        raise PatternRefused("pattern repeats a group whose repetitions are ambiguous")


def _walk(group: _Group) -> Iterator[_Element]:
    for branch in group.branches:
        for element in branch:
            yield element
            if element.group is not None:
                yield from _walk(element.group)


def _consumes(branch: list[_Element]) -> bool:
    return any(element.mandatory and element.chars for element in branch)


def _chars_of(group: _Group) -> frozenset[str]:
    return frozenset().union(*(element.chars for element in _walk(group)))


def _chars(atom: str, literal: str | None) -> frozenset[str]:
    """Probe characters the atom can match under any flags (unknown atoms: all)."""
    if literal is not None:
        return frozenset({literal, literal.lower(), literal.upper()})
    try:
        found = re.findall(atom, _PROBE, re.IGNORECASE | re.DOTALL)
    except re.error:
        return _ALL
    return frozenset(item for item in found if isinstance(item, str) and item)


def _quantifier_at(text: str, i: int) -> tuple[int, int, int | None]:
    """A quantifier at ``i``: (length or 0, minimum count, maximum count or None)."""
    char = text[i]
    if char in "*+?":
        low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[char]
        return _lazy(text, i + 1) - i, low, high
    if char == "{":
        match = _QUANTIFIER.match(text, i)
        if match is not None and (match.group(1) or match.group(3)):
            low_text, comma, high_text = match.groups()
            low = int(low_text or "0")
            high = (int(high_text) if high_text else None) if comma else low
            return _lazy(text, match.end()) - i, low, high
    return 0, 0, 0


def _lazy(text: str, i: int) -> int:
    """Skip a lazy ``?`` or possessive ``+`` suffix."""
    return i + 1 if i < len(text) and text[i] in "?+" else i


def _skip_class(text: str, i: int) -> int:
    """Index just past the character class opening at ``i``."""
    j = i + 1
    if text.startswith("^", j):
        j += 1
    if text.startswith("]", j):
        j += 1
    while j < len(text):
        if text[j] == "\\":
            j += 2
        elif text[j] == "]":
            return j + 1
        else:
            j += 1
    return len(text)
