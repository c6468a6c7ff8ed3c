"""Texts to hold a string-method check to the regular expression it replaced.

Some checks on the CLI's start-up path were regular expressions; compiling
them cost a fresh dry run more than every call made with them, so they are
written with string methods now (``docs/performance.md``). A differential test
draws texts from both sides of the pattern: texts the pattern matches (generated
from the pattern itself) and texts over an alphabet of near misses (letters,
digits, the pattern's own punctuation, and non-ASCII look-alikes: other
scripts' digits and letters, the Kelvin sign, dotless i, superscripts,
whitespace and a newline, which ``$`` would have forgiven).
"""

from __future__ import annotations

import re

from hypothesis import settings
from hypothesis import strategies as st

#: The checks are cheap: a differential test draws many texts.
MANY = settings(max_examples=600, deadline=None)

#: Characters near every replaced pattern's edges.
NEAR_MISSES = (
    "aAzZ09_-.@/+!#$%&'*=?^`{|}~ \n\t"
    "\u00e9\u00df\u0131\u0130\u212a\u017f\u00b2\u0663\uff11\u0430\u00a0"
)


def texts_near(pattern: str, flags: int = 0, extra: str = "") -> st.SearchStrategy[str]:
    """Texts the pattern fully matches, such texts edited, and texts over the near misses.

    An edit puts a character of :data:`NEAR_MISSES` + ``extra`` before, after,
    in place of or beside a character of a matching text, or deletes one:
    the misses one character away from a match, where a hand-written check
    most often differs from the pattern.
    """
    alphabet = NEAR_MISSES + extra
    # Half of the edits use ``extra``: the characters that matter to this pattern.
    chars = st.one_of(st.sampled_from(extra or NEAR_MISSES), st.sampled_from(NEAR_MISSES))
    matches = st.from_regex(re.compile(pattern, flags), fullmatch=True)
    edits = st.lists(
        st.tuples(st.sampled_from("ird"), st.integers(0, 64), chars), min_size=1, max_size=3
    )
    return st.one_of(
        matches,
        st.builds(_edited, matches, edits),
        st.builds(str.__add__, st.text(alphabet=extra or alphabet, max_size=3), matches),
        st.builds(str.__add__, matches, st.text(alphabet=extra or alphabet, max_size=3)),
        st.text(alphabet=alphabet, max_size=12),
    )


def _edited(text: str, edits: list[tuple[str, int, str]]) -> str:
    for op, where, char in edits:
        at = where % (len(text) + 1)
        if op == "i":
            text = text[:at] + char + text[at:]
        elif op == "r":
            text = text[:at] + char + text[at + 1 :]
        else:
            text = text[:at] + text[at + 1 :]
    return text
