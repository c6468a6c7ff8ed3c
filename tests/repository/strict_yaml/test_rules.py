"""The typing rules both YAML parsers share (``strict_yaml/_rules.py``)."""

from __future__ import annotations

import re

from hypothesis import example, given

from boring_dispatch.repository.strict_yaml import _rules
from kits.regex_twins import MANY, texts_near

_DECIMAL = r"[-+]?(?:0|[1-9][0-9]*)"


@MANY
@example("00")
@example("-0")
@example("+")
@example("0\u0663")
@given(texts_near(_DECIMAL, extra="+-01"))
def test_a_decimal_is_exactly_what_the_regex_matched(text: str) -> None:
    assert _rules._is_decimal(text) is (re.fullmatch(_DECIMAL, text) is not None)
