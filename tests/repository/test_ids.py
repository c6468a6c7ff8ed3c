from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from boring_dispatch.errors import InvalidCallerReference, InvalidInterfaceId, InvalidModuleId
from boring_dispatch.repository import ids
from kits.regex_twins import MANY, texts_near


@pytest.mark.parametrize(
    "text",
    ["list-manager", "list-manager._rtx", "a.b.c", "a1.b-2", "x._rtx.y"],
)
def test_valid_module_ids_are_accepted(text: str) -> None:
    assert ids.parse_module_id(text) == tuple(text.split("."))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "_rtx",
        "a..b",
        ".a",
        "a.",
        "A",
        "a_b",
        "a.interface",
        "a.source.b",
        "foo-rtx",
        "a.foo-rtx",
        "-a",
        "a-",
        "a--b",
        "a.__init__",
        "a.__class__",
        "a b",
        "a ",
        "ａ",  # full-width look-alike
        "a\u200b",  # zero-width space
        "a.b\n",
        "x" * 600,
    ],
)
def test_malformed_module_ids_are_refused(text: str) -> None:
    with pytest.raises(InvalidModuleId) as caught:
        ids.parse_module_id(text)
    assert caught.value.code == "dispatcher.invalid_module_id"


def test_a_non_string_module_id_is_refused() -> None:
    with pytest.raises(InvalidModuleId):
        ids.parse_module_id(7)


def test_the_reference_target_vectors_parse_as_documented() -> None:
    assert ids.parse_interface_id("list-manager._rtx.interface.read-list") == (
        "list-manager._rtx",
        "read-list",
    )
    for bad in (
        "missing",
        "root.interface.",
        ".interface.read",
        "root.interface.read.extra",
        "root.source.x.interface.read",
        "root.interface.read.interface.x",
        "root.interface.Read",
    ):
        with pytest.raises(InvalidInterfaceId) as caught:
            ids.parse_interface_id(bad)
        assert caught.value.code == "dispatcher.invalid_interface_id"


@pytest.mark.parametrize(
    ("owner", "reference", "resolved"),
    [
        ("root.alpha", ".leaf", "root.alpha.leaf"),
        ("root.alpha", "..beta", "root.beta"),
        ("root.alpha", "._rtx", "root.alpha._rtx"),
        ("root", ".x.y", "root.x.y"),
        ("root.alpha", "outsider", "outsider"),
    ],
)
def test_relative_caller_references_resolve_lexically(
    owner: str, reference: str, resolved: str
) -> None:
    assert ids.resolve_caller_reference(owner, reference) == resolved


@pytest.mark.parametrize(("owner", "reference"), [("root", "..x"), ("root", "..."), ("a.b", ".")])
def test_dots_only_or_climbing_past_the_top_is_an_invalid_reference(
    owner: str, reference: str
) -> None:
    with pytest.raises(InvalidCallerReference) as caught:
        ids.resolve_caller_reference(owner, reference)
    assert caught.value.code == "dispatcher.invalid_caller_reference"


def test_a_relative_reference_to_a_malformed_id_is_an_invalid_module_id() -> None:
    with pytest.raises(InvalidModuleId):
        ids.resolve_caller_reference("root", ".Bad")


def test_ancestry_lists_every_prefix_outermost_first() -> None:
    assert ids.ancestry("a.b._rtx") == ("a", "a.b", "a.b._rtx")


def test_logical_packages_match_the_reference_examples() -> None:
    assert (
        ids.logical_package("list-manager._rtx")
        == "_officina_module_6c6973742d6d616e616765722e5f727478"
    )
    assert ids.logical_package("wakeup") == "_officina_module_77616b657570"


def test_source_interfaces_split_at_the_last_interface_mark() -> None:
    assert ids.split_source_interface(
        "get-weather._rtx.source.rtx-weather-client.interface.scripts-weather"
    ) == ("get-weather._rtx.source.rtx-weather-client", "scripts-weather")
    assert ids.split_source_interface("get-weather.interface.x") is None
    assert ids.split_source_interface("Bad.source.x.interface.y") is None
    assert ids.split_source_interface(3) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a.interface.b@1", ("a.interface.b", 1)),
        ("a.interface.b@01", ("a.interface.b", 1)),
        ("a.interface.b@0", ("a.interface.b@0", None)),
        ("a.interface.b@x", ("a.interface.b@x", None)),
        ("a.interface.b@", ("a.interface.b@", None)),
        ("a.interface.b@١", ("a.interface.b@١", None)),  # Arabic-Indic digit is not ASCII
        ("a.interface.b", ("a.interface.b", None)),
    ],
)
def test_version_pins_follow_the_reference_grammar(
    text: str, expected: tuple[str, int | None]
) -> None:
    assert ids.parse_pin(text) == expected


# The memo of parse_module_id (a pure function of the text) answers as the grammar does.
_ID_TEXT = st.text(alphabet="abz09-._rtxinefacesoužA ", max_size=24)


def _reference_segments(text: str) -> tuple[str, ...] | None:
    """The grammar of section 2.1, written out segment by segment."""
    if not text or len(text) > 512:
        return None
    segments = tuple(text.split("."))
    for index, segment in enumerate(segments):
        if segment == "_rtx" and index > 0:
            continue
        ordinary = re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", segment, re.ASCII) is not None
        if not ordinary or segment in ("interface", "source") or segment.endswith("-rtx"):
            return None
    return segments


@settings(max_examples=300)
@given(texts=st.lists(_ID_TEXT, min_size=1, max_size=6))
def test_repeated_module_ids_answer_as_the_grammar_every_time(texts: list[str]) -> None:
    for text in [*texts, *texts]:
        expected = _reference_segments(text)
        if expected is None:
            with pytest.raises(InvalidModuleId):
                ids.parse_module_id(text)
        else:
            assert ids.parse_module_id(text) == expected


class _Lookalike(str):
    """Equal to (and hashed as) a valid ID whatever its own text: never served from the memo."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return hash("a.b")


@pytest.mark.parametrize("value", [[], {}, {"a": 1}, b"a.b", 7, None])
def test_unhashable_and_non_string_ids_are_refused_not_crashed(value: object) -> None:
    with pytest.raises(InvalidModuleId):
        ids.parse_module_id(value)


def test_a_str_subclass_is_parsed_from_its_own_text() -> None:
    assert ids.parse_module_id("a.b") == ("a", "b")
    assert ids.parse_module_id(_Lookalike("a.b")) == ("a", "b")
    with pytest.raises(InvalidModuleId):
        ids.parse_module_id(_Lookalike("A..B"))


_ORDINARY = r"[a-z0-9]+(?:-[a-z0-9]+)*"


@MANY
@example("a--b")
@example("-a")
@example("a-")
@example("A")
@given(texts_near(_ORDINARY, re.ASCII, extra="bc-9"))
def test_an_ordinary_segment_is_exactly_what_the_regex_matched(text: str) -> None:
    expected = re.fullmatch(_ORDINARY, text, re.ASCII) is not None
    assert ids.is_ordinary_segment(text) is expected
