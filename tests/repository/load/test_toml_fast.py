"""The small TOML reader never disagrees with ``tomllib``: it reads the same data or declines.

Every check is differential: ``parse_small_toml`` against ``tomllib.loads`` on
the same text, with exact types and key order (``True != 1``). Documents are
generated inside the subset, just outside it (one edit away) and from raw
characters; the coverage tests make sure the reader does not rot into
declining everything.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Final

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from boring_dispatch.repository.load._toml_fast import parse_small_toml
from kits.yamldata import same

CORPUS_CONFIG: Final = Path(__file__).resolve().parents[2] / "corpus" / "famulus" / "officina.toml"
REFUSED: Final = "refused"


def agree(text: str) -> str:
    """Assert the reader agrees with ``tomllib`` on ``text``; say whether it read or declined."""
    fast = parse_small_toml(text)
    try:
        reference: object = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        reference = REFUSED
    if fast is None:
        return "declined"
    assert reference != REFUSED, "the small reader read what tomllib refuses"
    assert same(fast, reference), (fast, reference)
    return "read"


# -- generated documents ------------------------------------------------------------------

_BARE_KEYS = st.text("abcxyzABZ019_-", min_size=1, max_size=6) | st.sampled_from(
    ["true", "false", "1", "-", "schema_version", "roots", "inf", "nan"]
)
_PLAIN_CHARS = st.characters(min_codepoint=0x20, max_codepoint=0x7E)
_SPACE = st.sampled_from(["", " ", "  "])
_COMMENT = st.sampled_from(["", " # c", "#", "# [x] = \"y\" 'z'", "  #\\"])


@st.composite
def _scalars(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["basic", "literal", "int", "bool", "odd"]))
    if kind == "basic":
        return '"' + draw(st.text(_PLAIN_CHARS.filter(lambda c: c not in '"\\'), max_size=8)) + '"'
    if kind == "literal":
        return "'" + draw(st.text(_PLAIN_CHARS.filter(lambda c: c != "'"), max_size=8)) + "'"
    if kind == "int":
        return str(draw(st.integers(-(10**20), 10**20)))
    if kind == "bool":
        return draw(st.sampled_from(["true", "false"]))
    # Just outside the subset: TOML the reader must decline or read exactly as tomllib does.
    return draw(
        st.sampled_from(
            [
                "1.5",
                "1e3",
                "0x1F",
                "0o7",
                "0b1",
                "1_000",
                "+1",
                "-0",
                "00",
                "07",
                "inf",
                "nan",
                "1979-05-27",
                "07:32:00",
                '"a\\"b"',
                '"\\u00e9"',
                '"""x"""',
                "'''x'''",
                '""',
                "''",
                "{}",
                "{ a = 1 }",
                "[[1]]",
                "True",
                "truex",
                "falsey",
                '"x',
                "'x",
                "",
                "-",
                '"a"b"',
                "1 2",
                "[1,,]",
                "[,]",
            ]
        )
    )


@st.composite
def _values(draw: st.DrawFn) -> str:
    if draw(st.booleans()):
        return draw(_scalars())
    items = draw(st.lists(_scalars(), max_size=4))
    separator = draw(st.sampled_from([",", ", ", " ,\n  ", ",\n# note\n"]))
    trailing = draw(st.sampled_from(["", ",", ",\n", "\n"]))
    return "[" + draw(_SPACE) + separator.join(items) + trailing + "]"


@st.composite
def _lines(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["pair", "pair", "pair", "table", "comment", "blank", "raw"]))
    if kind == "pair":
        spaces = draw(_SPACE), draw(_SPACE), draw(_SPACE)
        key = draw(_BARE_KEYS | st.sampled_from(['"q"', "a.b", "a b", ""]))
        return f"{spaces[0]}{key}{spaces[1]}={spaces[2]}{draw(_values())}{draw(_COMMENT)}"
    if kind == "table":
        name = draw(_BARE_KEYS | st.sampled_from(["[a]", " a ", "a.b", '"a"', ""]))
        return f"{draw(_SPACE)}[{name}]{draw(_COMMENT)}"
    if kind == "comment":
        return draw(_SPACE) + "#" + draw(st.text(_PLAIN_CHARS, max_size=10))
    if kind == "blank":
        return draw(_SPACE)
    return draw(st.text(max_size=12))


@st.composite
def documents(draw: st.DrawFn) -> str:
    lines = draw(st.lists(_lines(), max_size=10))
    ending = draw(st.sampled_from(["\n", "", "\r\n", "\n\n"]))
    return ending.join(lines) + draw(st.sampled_from(["", "\n"]))


@given(documents())
def test_generated_documents_are_read_as_tomllib_reads_them_or_declined(text: str) -> None:
    event(agree(text))


@given(documents(), st.data())
def test_one_edit_away_the_reader_still_agrees(text: str, data: st.DataObject) -> None:
    # Insert, delete or replace one character: duplicates, broken strings, stray bytes.
    if text:
        at = data.draw(st.integers(0, len(text) - 1))
        edit = data.draw(st.sampled_from(["insert", "delete", "replace"]))
        char = data.draw(
            st.sampled_from("\"'[]=#,\\ \n\t\r.-_0a\x00\x7f\u00e9\ufeff") | st.characters()
        )
        if edit == "insert":
            text = text[:at] + char + text[at:]
        elif edit == "delete":
            text = text[:at] + text[at + 1 :]
        else:
            text = text[:at] + char + text[at + 1 :]
    event(agree(text))


@given(st.text(st.sampled_from("ab1-_ =[]\"'#,\n.tre\\"), max_size=40))
def test_hostile_character_soup_never_makes_the_reader_disagree(text: str) -> None:
    agree(text)


@given(st.text(max_size=30))
def test_arbitrary_text_never_makes_the_reader_disagree(text: str) -> None:
    agree(text)


# -- coverage: the subset is really read ------------------------------------------------------

READ: Final = [
    "",
    "# only a comment",
    "a = 1",
    "a = -0\nb = 0\nc = 123456789012345678",
    "a = \"x y # z\"\nb = 'c:\\\\path'",
    "a=true\nb=false",
    "a = []\nb = [ ]\nc = [1,]\nd = [\n  'x', # one\n  \"y\",\n]\n",
    "a = [1, 'two', true]",
    "[t]\n[u]\nk = 1\n[v] # comment\n",
    "x = 1\n[t]\nx = 2",
    "true = false\n1 = 2\n- = '-'",
]
DECLINED: Final = [
    "a = 1\na = 2",  # tomllib refuses: a key twice
    "[t]\n[t]",  # a table twice
    "a = 1\n[a]",  # a table over a value
    "a = 1.0",
    "a = 1_000",
    "a = +1",
    "a = 1979-05-27",
    "a = 1234567890123456789",
    'a = "\\n"',
    'a = """x"""',
    "a.b = 1",
    '"a" = 1',
    "a = { b = 1 }",
    "[[a]]",
    "[a.b]",
    "a = [[1]]",
    "a\t= 1",
    "a = 1\r\n",
    "a = 'é'",
    "a = 01",
    "a = truex",
    "a = ",
    "a = [1 2]",
]


@pytest.mark.parametrize("text", READ)
def test_the_subset_is_read(text: str) -> None:
    assert agree(text) == "read"


@pytest.mark.parametrize("text", DECLINED)
def test_outside_the_subset_the_reader_declines(text: str) -> None:
    assert parse_small_toml(text) is None
    agree(text)


@pytest.mark.skipif(not CORPUS_CONFIG.is_file(), reason="famulus corpus not found")
def test_the_corpus_configuration_is_read_by_the_small_reader() -> None:
    assert agree(CORPUS_CONFIG.read_text(encoding="utf-8")) == "read"


_TOKENS: Final = (
    *("a", "t", "1", "-", "_", "true", "false", "0", "-0", "00", "-01", "+1", "1_0", "1.0", "1e2"),
    *("123456789012345678", "-123456789012345678", "1234567890123456789", "inf", "nan"),
    *(" ", "=", " = ", "[", "]", "[[", "]]", ",", "#", "# c", "\n", '"', "'", "'''", '"""'),
    *('"#"', '"="', "'a'", '""', "\\", ".", "{", "}", ":", "1979-05-27", "T", "Z"),
    *("a = 1\n", "[a]\n", "[t]\n", "a = [\n", "1,\n", "]\n", "a.b = 1\n", "[[a]]\n"),
)


@given(st.lists(st.sampled_from(_TOKENS), max_size=16).map("".join))
def test_token_soup_never_makes_the_reader_disagree(text: str) -> None:
    """Whole tokens (keys, headers, 18 and 19 digits, quotes, dates) in any order."""
    agree(text)
