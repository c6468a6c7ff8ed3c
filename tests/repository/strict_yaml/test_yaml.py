"""The strict YAML loader on good input: PyYAML's data, typed as both YAML versions agree.

Hostile input (tags, anchors, duplicates, depth, encodings) is in
``tests/security/test_blueprint_yaml.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from boring_dispatch.errors import BlueprintMalformed
from boring_dispatch.repository.strict_yaml.load import MAX_DEPTH, MAX_YAML_BYTES, load_yaml
from kits.blueprints import corpus_dir, reference_load

CORPUS = corpus_dir()


def load(text: str) -> dict[str, object]:
    return load_yaml(text.encode("utf-8"), what="test")


def value_of(plain: str) -> object:
    return load(f"k: {plain}\n")["k"]


def malformed(text: str | bytes) -> BlueprintMalformed:
    raw = text.encode("utf-8") if isinstance(text, str) else text
    with pytest.raises(BlueprintMalformed) as info:
        load_yaml(raw, what="test")
    assert info.value.code == "dispatcher.blueprint_malformed"
    return info.value


def corpus_yaml_files() -> list[Path]:
    return sorted(CORPUS.rglob("*.yaml"))


def test_every_corpus_yaml_file_loads_to_exactly_what_pyyaml_loads() -> None:
    files = corpus_yaml_files()
    assert len(files) > 200
    compared = 0
    for path in files:
        data = path.read_bytes()
        expected = reference_load(data)
        if not isinstance(expected, dict):  # an empty file: no top-level mapping
            malformed(data)
            continue
        assert load_yaml(data, what=str(path)) == expected, path
        compared += 1
    assert compared == len(files) - 1


@pytest.mark.parametrize(
    ("plain", "expected"),
    [
        ("true", True),
        ("True", True),
        ("TRUE", True),
        ("false", False),
        ("FALSE", False),
        ("null", None),
        ("Null", None),
        ("~", None),
        ("", None),
        ("0", 0),
        ("12", 12),
        ("-3", -3),
        ("+7", 7),
        ("0.3", 0.3),
        ("1.", 1.0),
        (".5", 0.5),
        ("1.5e+3", 1500.0),
        ("0x1F", 31),
        ("y", "y"),
        ("n", "n"),
        ("name", "name"),
        ("truthy", "truthy"),
        ("nope", "nope"),
        ("1.2.3", "1.2.3"),
        ("10:00am", "10:00am"),
        ("-x", "-x"),
        ("v1", "v1"),
        ("tests/.*", "tests/.*"),
        ("a#b", "a#b"),
    ],
)
def test_plain_scalars_get_the_type_both_yaml_versions_agree_on(
    plain: str, expected: object
) -> None:
    got = value_of(plain)
    assert got == expected
    assert type(got) is type(expected)


@pytest.mark.parametrize("quoted", ["'yes'", '"12"', "'null'", '"0777"', "'2024-01-01'", "''"])
def test_quoted_scalars_are_always_strings(quoted: str) -> None:
    assert value_of(quoted) == quoted[1:-1]


def test_block_scalars_keep_their_text() -> None:
    data = load("a: |\n  one\n  two\nb: >-\n  folded\n  line\nc: plain\n  continued\n")
    assert data == {"a": "one\ntwo\n", "b": "folded line", "c": "plain continued"}


def test_flow_collections_and_nesting_become_dicts_and_lists() -> None:
    data = load("a: {x: 1, y: [true, 'b']}\nb: []\nc: {}\nd:\n- e: 1\n  f: [g]\n")
    assert data == {"a": {"x": 1, "y": [True, "b"]}, "b": [], "c": {}, "d": [{"e": 1, "f": ["g"]}]}


def test_unicode_text_survives_and_a_probe_character_in_text_is_not_a_property() -> None:
    data = load("k: 'caf\u00e9 \U0001f600 R&D !'\nv: a&b!c\n")
    assert data == {"k": "caf\u00e9 \U0001f600 R&D !", "v": "a&b!c"}


@pytest.mark.parametrize(
    "text",
    ["- a\n", "just text\n", "", "# only a comment\n", "42\n", "[1, 2]\n", "'quoted'\n"],
)
def test_a_top_level_that_is_not_a_mapping_is_malformed(text: str) -> None:
    malformed(text)


def test_input_at_the_cap_is_read_and_one_byte_more_is_refused() -> None:
    head = b"k: "
    at_cap = head + b"x" * (MAX_YAML_BYTES - len(head))
    assert load_yaml(at_cap, what="test")["k"] == "x" * (MAX_YAML_BYTES - len(head))
    malformed(at_cap + b"x")


def test_nesting_up_to_the_cap_is_read_and_one_more_level_is_refused() -> None:
    def nested(levels: int) -> str:  # the top-level mapping is level 1
        return "k: " + "[" * (levels - 1) + "1" + "]" * (levels - 1) + "\n"

    data: object = load(nested(MAX_DEPTH))
    for _ in range(MAX_DEPTH):  # one mapping and MAX_DEPTH - 1 lists
        assert isinstance(data, (dict, list))
        data = data["k"] if isinstance(data, dict) else data[0]
    assert data == 1
    malformed(nested(MAX_DEPTH + 1))


def test_block_mapping_nesting_counts_like_flow_nesting() -> None:
    def nested(levels: int) -> str:
        return "".join(" " * i + "k:\n" for i in range(levels - 1)) + " " * (levels - 1) + "k: 1\n"

    load(nested(MAX_DEPTH))
    malformed(nested(MAX_DEPTH + 1))


def test_errors_carry_what_and_the_target_module_but_no_content() -> None:
    with pytest.raises(BlueprintMalformed) as info:
        load_yaml(b"a: 1\nCANARY: 2\nCANARY: 3\n", what="blueprint of m", target_module_id="m")
    assert info.value.target_module_id == "m"
    assert info.value.message.startswith("blueprint of m: ")
    assert "CANARY" not in info.value.message


def test_without_libyaml_the_fallback_fails_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    from boring_dispatch.repository.strict_yaml import _libyaml as _yaml_libyaml

    monkeypatch.setattr(_yaml_libyaml, "LIBYAML", False)
    malformed("a: [1,\n  2]\n")  # a flow sequence over two lines: the fast parser declines
    assert load("a: 1\n") == {"a": 1}  # the fast parser does not use PyYAML at all


def test_libyaml_is_present_here() -> None:
    # The fail-closed branch above must not be what every other test exercises.
    assert yaml.__with_libyaml__
    assert load("a: 1\n") == {"a": 1}
