"""Bounded regular expressions for blueprint-authored patterns.

Blueprint authors write the patterns; callers (ultimately a model) choose the
text matched against them. Python's ``re`` backtracks, so one careless
pattern lets a short argument stall the dispatcher: ``^(a+)+$`` is
exponential, ``^a*.*\\w+$`` cubic, and ``^(a?){31}a{31}\\Z`` (counted
repetitions written out) took 38 s on 31 characters. No static lint of
backtracking is sound for all of them, so blueprint patterns never run on
``re``. Every pattern this package compiles goes through:

* **Length caps.** Patterns longer than :data:`MAX_PATTERN_LENGTH` characters
  are never compiled, and text longer than :data:`MAX_SUBJECT_LENGTH`
  characters is never matched (both are upstream's flag-pattern limits).
* **A linear-time engine.** The pattern is translated (``_regex_re2``) into an
  RE2 program with the same matches as ``re`` and run by RE2 (``google-re2``),
  whose time is linear in the text. Patterns without an exact translation
  (backreferences, lookarounds, case-insensitive mode, ...) are refused.
* **A size budget.** RE2's time per character grows with how many pattern
  positions can be live at once, so a pattern may have at most
  :data:`MAX_LIVE` of them (an upper bound computed from the parse tree by
  ``_regex_budget``: ``(a?){31}a{31}`` has 62, ``[a-z]{0,2000}`` one), and at
  most :data:`MAX_WEIGHT` code point ranges over all its positions once counted
  repetitions are multiplied out (what RE2's compile time grows with). Within
  both, any accepted pattern matches a 4096-character text in a few
  milliseconds (measured worst case about 10 ms; the tests hold every generated
  hostile pattern under 50 ms of CPU time).
* **The authoring lint** (``_regex_lint``) still refuses shapes that backtrack
  badly under ``re``, since the same blueprints run on upstream's ``re``; it is
  no longer what bounds the dispatcher's time.

Compiled patterns are kept in a process-wide memo keyed by the pattern text
(bounded, least recently used first out), so warm resolution compiles nothing.
"""

from __future__ import annotations

import re
from functools import lru_cache

from boring_dispatch._static import Protocol
from boring_dispatch.repository._regex_lint import PatternRefused, lint

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import Final, Literal

__all__ = [
    "MAX_LIVE",
    "MAX_PATTERN_LENGTH",
    "MAX_SUBJECT_LENGTH",
    "MAX_WEIGHT",
    "BoundedPattern",
    "PatternRefused",
    "compile_bounded",
    "compile_pattern",
]

#: Longest pattern compiled (upstream's cap for flag patterns).
MAX_PATTERN_LENGTH: Final = 1024
#: Longest text matched against any pattern (upstream's cap for flag values).
MAX_SUBJECT_LENGTH: Final = 4096
#: Most pattern positions that can match at once (``_regex_budget``): RE2's work per character.
MAX_LIVE: Final = 300
#: Most code point ranges summed over those positions (Unicode ``\\w`` is 734, so
#: ``\\w{11}`` fits): RE2's compile time grows with it (about 25 ms at the cap).
MAX_WEIGHT: Final = 8192
_MEMO: Final = 128


class _Program(Protocol):
    """What is used of a compiled ``re2`` pattern (the package has no type hints)."""

    def match(self, text: bytes, /) -> object | None: ...
    def fullmatch(self, text: bytes, /) -> object | None: ...


class BoundedPattern:
    """A compiled blueprint pattern: ``re``'s answers, RE2's running time.

    ``match`` and ``fullmatch`` answer like ``re.Pattern``'s for the pattern's
    text (default flags): ``True`` where ``re`` returns a match object, ``None``
    where it returns ``None``, and ``None`` for text over
    :data:`MAX_SUBJECT_LENGTH`.
    """

    __slots__ = ("_end", "_newline", "pattern")

    def __init__(self, pattern: str, end: _Program, newline: _Program | None) -> None:
        self.pattern = pattern
        self._end = end
        self._newline = newline

    def match(self, text: str) -> Literal[True] | None:
        """Like ``re.match``: a match starting at the beginning of ``text``."""
        if len(text) > MAX_SUBJECT_LENGTH:
            return None
        data = text.encode("utf-8", "surrogatepass")
        if self._end.match(data) is not None:
            return True
        # ``$`` also holds before a final newline: the rest of the text without it decides.
        if self._newline is not None and data.endswith(b"\n"):
            return True if self._newline.match(data[:-1]) is not None else None
        return None

    def fullmatch(self, text: str) -> Literal[True] | None:
        """Like ``re.fullmatch``: a match of all of ``text``."""
        if len(text) > MAX_SUBJECT_LENGTH:
            return None
        found = self._end.fullmatch(text.encode("utf-8", "surrogatepass"))
        return True if found is not None else None


def compile_pattern(text: str) -> BoundedPattern:
    """Compile a blueprint pattern after the length cap, the lint and the budget.

    Args:
        text: the pattern exactly as authored (Python ``re`` syntax, default flags).

    Returns:
        The compiled pattern (shared: the same text returns the same object while memoised).

    Raises:
        PatternRefused: over :data:`MAX_PATTERN_LENGTH`, a NUL character,
            a shape the lint refuses, a pattern ``re`` rejects, a construct
            without an exact RE2 translation, or over the size budget. The
            message names the reason, never a subject.
    """
    if len(text) > MAX_PATTERN_LENGTH:
        raise PatternRefused("pattern is longer than 1024 characters")
    compiled = _compile(text)
    if isinstance(compiled, str):
        raise PatternRefused(compiled)
    return compiled


@lru_cache(maxsize=_MEMO)
def _compile(text: str) -> BoundedPattern | str:
    """The compiled pattern, or the reason it is refused (refusals are memoised too)."""
    try:
        return _build(text)
    except PatternRefused as refused:
        return str(refused)
    except (re.error, RecursionError, OverflowError, ValueError):
        return "pattern is not a valid regular expression"


def _build(text: str) -> BoundedPattern:
    if "\x00" in text:
        raise PatternRefused("pattern contains a NUL character")
    lint(text)
    return compile_bounded(text)


def compile_bounded(text: str) -> BoundedPattern:
    """The translation, the budget and RE2, without the authoring lint (and without the memo).

    What bounds matching time is all here: the tests hold it to that on patterns
    the lint would refuse. Raises what :func:`compile_pattern` raises, and
    ``re.error`` (or ``RecursionError``, ``OverflowError``) for invalid patterns.
    """
    from boring_dispatch.repository._regex_budget import measure
    from boring_dispatch.repository._regex_re2 import translate

    translation = translate(text, MAX_WEIGHT)
    bound = measure(translation.items, translation.flags, MAX_WEIGHT)
    if bound.weight > MAX_WEIGHT:
        raise PatternRefused(
            "pattern is too large once repetitions are counted"
            " (Unicode \\w is 734 ranges: write [A-Za-z0-9_] or use (?a))"
        )
    if bound.live > MAX_LIVE:
        raise PatternRefused(
            f"pattern can have more than {MAX_LIVE} positions matching at once"
            " (ambiguous or nested repetitions)"
        )
    end = _re2(translation.end)
    newline = None
    if translation.newline is not None:  # a second program only when ``\Z`` needs one
        same = translation.newline == translation.end
        newline = end if same else _re2(translation.newline)
    return BoundedPattern(text, end, newline)


def _re2(text: str) -> _Program:
    """An RE2 program for the translated text, matching UTF-8 bytes."""
    import re2  # google-re2: a compiled extension, imported on the first pattern only

    options = re2.Options()
    options.never_capture = True  # callers only ask whether it matches
    options.log_errors = False
    try:
        program: _Program = re2.compile(text.encode("utf-8"), options)
    except re2.error:
        raise PatternRefused("pattern is refused by the linear-time matcher") from None
    return program
