"""The one rule for quoting untrusted values in messages."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from boring_dispatch._quote import shown


@given(st.text(), st.integers(min_value=1, max_value=300))
def test_a_shown_string_is_bounded_and_has_no_raw_invisible_or_control_character(
    text: str, limit: int
) -> None:
    out = shown(text, limit)
    assert len(out) <= 10 * limit + 5  # an escape is at most 10 characters; quotes and ...
    assert all(unicodedata.category(c) not in {"Cc", "Cf", "Zl", "Zp", "Cs"} for c in out)


def test_hostile_characters_appear_escaped() -> None:
    for hostile in ("\x1b[31m", "a\nb", "\u2028", "\u202e", "\ufeff", "\ud800", "\x00"):
        out = shown(hostile)
        assert hostile not in out
        assert "\\" in out


def test_a_cut_is_marked() -> None:
    assert shown("x" * 10, 4) == "'xxxx'..."
    assert shown("xxxx", 4) == "'xxxx'"


def test_bounded_ints_are_digits_and_everything_else_is_a_type_name() -> None:
    assert shown(42) == "42"
    assert shown(-(10**17)) == str(-(10**17))
    assert shown(10**18) == "<int>"
    assert shown(True) == "<bool>"  # noqa: FBT003 - a bool is the value under test
    assert shown(1.5) == "<float>"
    assert shown(None) == "<NoneType>"
    assert shown({"a": 1}) == "<dict>"
