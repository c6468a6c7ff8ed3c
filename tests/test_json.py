from __future__ import annotations

import pytest

from boring_dispatch._json import StrictJSONError, strict_loads


def test_plain_json_parses() -> None:
    assert strict_loads('{"a": [1, "x", null, true]}') == {"a": [1, "x", None, True]}


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        '{"a": NaN}',
        '{"a": Infinity}',
        '{"a": -Infinity}',
        '{"a": 1, "a": 2}',
        '{"x": {"b": 1, "b": 1}}',
        "[" * 40 + "]" * 40,
        "1" * 5000,
        b"\xff\xfe",
    ],
)
def test_hazardous_json_is_refused(text: str | bytes) -> None:
    with pytest.raises(StrictJSONError):
        strict_loads(text)


def test_size_is_checked_before_parsing() -> None:
    with pytest.raises(StrictJSONError):
        strict_loads('"' + "a" * 100 + '"', max_bytes=50)


def test_brackets_inside_strings_do_not_count_as_depth() -> None:
    assert strict_loads('["' + "[" * 100 + '"]') == ["[" * 100]
