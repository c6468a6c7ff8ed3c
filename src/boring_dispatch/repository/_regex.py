"""Bounded regular expressions for blueprint-authored patterns.

Blueprint authors write the patterns; callers (ultimately a model) choose the
text matched against them. Python's ``re`` backtracks, so one careless
pattern lets a short argument stall the dispatcher: ``^(a+)+$`` is
exponential, and even ``^a*.*\\w+$`` is cubic (measured: 158 s on 4096
characters). Every pattern this package compiles goes through two limits:

* **Length caps.** Patterns longer than :data:`MAX_PATTERN_LENGTH` characters
  are never compiled, and text longer than :data:`MAX_SUBJECT_LENGTH`
  characters is never matched (both are upstream's flag-pattern limits).
* **A static lint** (``_regex_lint``) refuses the shapes that backtrack
  exponentially or in more than quadratic time, plus backreferences,
  conditionals and verbose mode. Quadratic shapes such as ``^.+/.+$`` stay
  accepted: at the 4096-character cap they cost well under a second.

The lint is conservative (it may refuse a harmless pattern, never silently
accepts an exponential one it understands) and was checked against every
pattern of the famulus corpus, all of which it accepts.
"""

from __future__ import annotations

import re
from typing import Final

from boring_dispatch.repository._regex_lint import PatternRefusedError, lint

__all__ = [
    "MAX_PATTERN_LENGTH",
    "MAX_SUBJECT_LENGTH",
    "PatternRefusedError",
    "compile_pattern",
]

#: Longest pattern compiled (upstream's cap for flag patterns).
MAX_PATTERN_LENGTH: Final = 1024
#: Longest text matched against any pattern (upstream's cap for flag values).
MAX_SUBJECT_LENGTH: Final = 4096


def compile_pattern(text: str) -> re.Pattern[str]:
    """Compile a blueprint pattern after the length cap and the lint.

    Args:
        text: the pattern exactly as authored (Python ``re`` syntax, default flags).

    Returns:
        The compiled pattern.

    Raises:
        PatternRefusedError: over :data:`MAX_PATTERN_LENGTH`, a NUL character,
            a shape the lint refuses, or a pattern ``re`` rejects. The message
            names the reason, never a subject.
    """
    if len(text) > MAX_PATTERN_LENGTH:
        raise PatternRefusedError("pattern is longer than 1024 characters")
    if "\x00" in text:
        raise PatternRefusedError("pattern contains a NUL character")
    lint(text)
    try:
        return re.compile(text)
    except (re.error, RecursionError, OverflowError, ValueError):
        raise PatternRefusedError("pattern is not a valid regular expression") from None
