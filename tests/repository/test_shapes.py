"""The shape checks shared by the binding compilers (``repository/_shapes.py``)."""

from __future__ import annotations

import re

from hypothesis import example, given

from boring_dispatch.repository._shapes import is_flag_name
from kits.regex_twins import MANY, texts_near

_FLAG_NAME = r"-{1,2}[A-Za-z0-9][A-Za-z0-9-]*"


@MANY
@example("---a")
@example("--")
@example("-a-")
@example("--a_b")
@given(texts_near(_FLAG_NAME, re.ASCII, extra="-x_"))
def test_a_flag_name_is_exactly_what_the_regex_matched(text: str) -> None:
    expected = re.fullmatch(_FLAG_NAME, text, re.ASCII) is not None
    assert is_flag_name(text) is expected
