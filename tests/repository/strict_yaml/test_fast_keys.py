"""The fast parser's shortcut for plain ``key:`` / ``key: value`` lines reads them as libyaml does.

``_fast._parse`` takes such lines (plain strings, ``true``/``false``/``null``
and short decimal integers, at any indentation move) through a shortcut of its
general loop. These tests hold the shortcut to the libyaml path on the edges
of what it reads and on generated documents made of such lines, with the
shapes it must leave to the general loop mixed in.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from boring_dispatch.errors import BlueprintMalformed
from boring_dispatch.repository.strict_yaml._fast import _simple_key_line, parse_block_yaml
from boring_dispatch.repository.strict_yaml._rules import MAX_DEPTH
from boring_dispatch.repository.strict_yaml._scalars import MAX_KEY
from boring_dispatch.repository.strict_yaml.load import _load_yaml_libyaml
from kits.yamldata import same

REFUSED = "refused"


def libyaml(text: str) -> object:
    try:
        return _load_yaml_libyaml(text.encode("utf-8", "surrogatepass"), what="t")
    except BlueprintMalformed:
        return REFUSED


def agree(text: str) -> None:
    """The fast parser reads ``text`` exactly as libyaml does, or declines it."""
    fast = parse_block_yaml(text)
    if fast is not None:
        reference = libyaml(text)
        assert reference != REFUSED, text
        assert same(fast, reference), (text, fast, reference)


@pytest.mark.parametrize(
    "value",
    [
        *("x", "true", "false", "null", "True", "NULL", "~", "yes", "no", "on", "Off"),
        *("0", "01", "7", "123456789", "1234567890", "-1", "+1", "1.5", "1e3", "0x1F"),
        *("1_000", "1:30", "x: y", "x #c", "#c", " x", "x ", "x:", "'q'", '"q"', "[a]", "{}"),
        *("a#b", "a:b", "-x", "<p>", "=", "<<", "|", ">-", "&a x", "*a", "!t x", "%x", "@x"),
    ],
)
@pytest.mark.parametrize("key", ["k", "a b", "k ", "k #c", "yes", "true", "~", "x" * MAX_KEY])
def test_the_edges_of_the_shortcut_are_read_as_libyaml_reads_them(key: str, value: str) -> None:
    for text in (
        f"{key}: {value}\n",
        f"{key}: {value}\nnext: 1\n",
        f"top:\n  {key}: {value}\n  more:\n    deep: {value}\nback: x\n",
        f"top:\n- {key}: {value}\n  {key}x: {value}\n- z: 1\nlast:\n- 1\n",
        f"k:\n{key}: {value}\n",
        f"k: v\n  {key}: {value}\n",
        f"{key}: {value}\n  continued\n",
        f"k:\n    a: 1\n  {key}: {value}\n",
    ):
        agree(text)


def test_the_shortcut_declines_what_the_general_loop_declines() -> None:
    assert parse_block_yaml("a: 1\na: 2\n") is None  # duplicate key
    assert parse_block_yaml("a:\n    b: 1\n  c: 2\n") is None  # a column no block opened
    assert parse_block_yaml("a:\n- b\nc: 1\nc: 2\n") is None
    assert parse_block_yaml("a: x\n  b: y\n") is None  # a key where a continuation would be
    nested = "".join(" " * level + f"k{level}:\n" for level in range(MAX_DEPTH + 1))
    assert parse_block_yaml(nested + " " * (MAX_DEPTH + 1) + "v: 1\n") is None
    assert parse_block_yaml("".join(" " * level + f"k{level}:\n" for level in range(10))) == {
        "k0": {"k1": {"k2": {"k3": {"k4": {"k5": {"k6": {"k7": {"k8": {"k9": None}}}}}}}}}
    }


def test_only_the_shapes_it_reads_are_taken_by_the_shortcut() -> None:
    assert _simple_key_line("k: v") == ("k", "v", "v")
    assert _simple_key_line("k:") == ("k", None, "")
    assert _simple_key_line("k: true") == ("k", True, "true")
    assert _simple_key_line("k: 42") == ("k", 42, "42")
    for text in ("k: #c", "k:  v", "k: v ", "k: 0", "k: 01", "k: 1234567890", "k: yes"):
        assert _simple_key_line(text) is None, text
    for text in ("k: True", "k: ~", "k: 1.5", "k: 'q'", "true: x", "k #c: v", "k : v", "k"):
        assert _simple_key_line(text) is None, text


_KEYS = st.sampled_from(["a", "b", "key", "a.b", "x-y", "true", "no", "k k"])
_VALUES = st.sampled_from(
    ["", "v", "two words", "true", "null", "False", "0", "12", "007", "1.5", "'q'", "x #c", "~"]
)


@st.composite
def key_documents(draw: st.DrawFn) -> str:
    """Lines of keys at random indentation moves, with some entries and continuations."""
    lines = []
    for _ in range(draw(st.integers(1, 12))):
        indent = " " * draw(st.sampled_from([0, 0, 1, 2, 2, 4, 6]))
        shape = draw(st.sampled_from(["key", "key", "key", "entry", "continued", "comment"]))
        key, value = draw(_KEYS), draw(_VALUES)
        if shape == "key":
            lines.append(f"{indent}{key}:" + (f" {value}" if value else ""))
        elif shape == "entry":
            lines.append(f"{indent}- {key}: {value}" if value else f"{indent}- {key}")
        elif shape == "continued":
            lines.append(f"{indent}  {key}")
        else:
            lines.append(f"{indent}# c")
    return "\n".join(lines) + draw(st.sampled_from(["\n", ""]))


@given(key_documents())
def test_generated_key_documents_are_read_as_libyaml_reads_them(text: str) -> None:
    agree(text)
