"""SECURITY.md checklist B: hostile YAML content never loads and never escapes as a traceback.

Every refusal is ``dispatcher.blueprint_malformed``. The invariants checked
besides the code: nothing is executed (a tag that would run a command leaves
no file behind), messages quote no content, and no exception other than a
``RouteError`` ever leaves the loader (Hypothesis, random bytes and random
mutations of a real blueprint).
"""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from boring_dispatch.errors import BlueprintMalformed, RouteError
from boring_dispatch.repository.strict_yaml.load import load_yaml
from kits.blueprints import corpus_dir, make_repo, reference_load
from kits.strategies import yaml_mutations

CORPUS = corpus_dir()
CANARY = "CANARY-7f3a"


def refused(text: str | bytes) -> BlueprintMalformed:
    raw = text.encode("utf-8") if isinstance(text, str) else text
    with pytest.raises(BlueprintMalformed) as info:
        load_yaml(raw, what="test")
    assert info.value.code == "dispatcher.blueprint_malformed"
    assert CANARY not in info.value.message
    return info.value


# --------------------------------------------------------------------------- #
# B1: tags


@pytest.mark.parametrize(
    "text",
    [
        f"k: !!python/object/apply:os.system ['{CANARY}']\n",
        "k: !!python/name:os.system\n",
        "k: !!python/object:builtins.dict {}\n",
        f"k: !Ref {CANARY}\n",
        "k: !!binary aGVsbG8=\n",
        "k: !!set {a, b}\n",
        f"k: !!str {CANARY}\n",
        "k: !!int '3'\n",
        "k: !!float 1\n",
        "k: ! 12\n",
        "k: ! '12'\n",
        "k: !<tag:yaml.org,2002:str> x\n",
        "%TAG !e! tag:example.com,2000:\n---\nk: !e!thing x\n",
        "k: !!map {a: 1}\n",
        "k: !!seq [1]\n",
        "k: !!omap [a: 1]\n",
        "!!str k: v\n",
        "- k: !custom\n    a: 1\n",
        "k:\n  - !!null ''\n",
    ],
)
def test_every_explicit_tag_is_refused(text: str) -> None:
    refused(text)


def test_a_python_tag_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    for text in (
        f"k: !!python/object/apply:os.system ['touch {marker}']\n",
        f"k: !!python/object/apply:subprocess.call [['touch', '{marker}']]\n",
        f"k: !!python/object/new:os.system ['touch {marker}']\n",
    ):
        refused(text)
    assert not marker.exists()


# --------------------------------------------------------------------------- #
# B2: duplicate keys


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("a: 1\nb: 2\na: 3\n", 3),
        ("a:\n  b:\n    c: 1\n    c: 2\n", 4),
        ("a: {x: 1, x: 2}\n", 1),
        ("a: 1\n'a': 2\n", 2),
        ('a: 1\n"a": 2\n', 2),
        ("l:\n- x: 1\n  y: 2\n  x: 3\n", 4),
        ("a: 1\n? a\n: 2\n", 2),
    ],
)
def test_duplicate_keys_at_any_depth_are_refused_naming_the_line(text: str, line: int) -> None:
    error = refused(text)
    assert f"line {line})" in error.message


def test_equal_keys_in_different_mappings_are_not_duplicates() -> None:
    assert load_yaml(b"a: {x: 1}\nb: {x: 2}\n", what="t") == {"a": {"x": 1}, "b": {"x": 2}}


# --------------------------------------------------------------------------- #
# B3: anchors, aliases, merge keys


@pytest.mark.parametrize(
    "text",
    [
        "a: &x 1\nb: *x\n",
        "a: &x 1\n",
        "a: &x\n  k: 1\nb: *x\n",
        "base: &b {k: 1}\nother:\n  <<: *b\n",
        "other:\n  <<: {k: 1}\n",
        "<<: {k: 1}\n",
        "a: *undefined\n",
        "&a k: v\n",
        "l: [&x 1, *x]\n",
        "- &x a\n",
    ],
)
def test_anchors_aliases_and_merge_keys_are_refused(text: str) -> None:
    refused(text)


def test_a_billion_laughs_document_is_refused() -> None:
    lines = ["l0: &l0 ['lol', 'lol', 'lol', 'lol', 'lol', 'lol', 'lol', 'lol', 'lol']"]
    for level in range(1, 10):
        below = ", ".join([f"*l{level - 1}"] * 9)
        lines.append(f"l{level}: &l{level} [{below}]")
    refused("\n".join(lines) + "\n")


# --------------------------------------------------------------------------- #
# B4: depth


@pytest.mark.parametrize("levels", [65, 200, 1001, 100_000])
def test_deep_nesting_is_refused_without_a_recursion_error(levels: int) -> None:
    refused("k: " + "[" * levels + "]" * levels + "\n")
    refused("k: " + "{a: " * levels + "1" + "}" * levels + "\n")
    refused("k:\n" + "- " * levels + "x\n")


# --------------------------------------------------------------------------- #
# B5: implicit typing that YAML 1.1 and 1.2 read differently, and number edges


@pytest.mark.parametrize(
    "plain",
    [
        "yes",
        "No",
        "NO",
        "on",
        "Off",
        "0777",
        "010",
        "00",
        "1_000",
        "1:30",
        "-1:30",
        "1e3",
        "1.5e3",
        "0o17",
        "0b101",
        "-0x1F",
        "0x1_F",
        "-.5",
        "2024-01-01",
        "2024-01-01 10:00:00",
        "=",
    ],
)
def test_plain_scalars_that_yaml_versions_read_differently_are_refused(plain: str) -> None:
    refused(f"k: {plain}\n")
    refused(f"k: [{plain}]\n")


@pytest.mark.parametrize("plain", [".inf", "-.inf", "+.INF", ".nan", ".NaN"])
def test_non_finite_numbers_are_refused(plain: str) -> None:
    refused(f"k: {plain}\n")


def test_an_integer_beyond_python_digit_limit_is_refused_not_raised() -> None:
    refused("k: " + "9" * 5000 + "\n")
    refused("k: -" + "1" * 4400 + "\n")


def test_the_nul_escape_stays_data_but_a_raw_nul_byte_is_refused() -> None:
    assert load_yaml(b'k: "a\\0b"\n', what="t") == {"k": "a\x00b"}
    refused(b"k: a\x00b\n")
    refused(b"k: a\x07b\n")


# --------------------------------------------------------------------------- #
# B6: documents and keys


@pytest.mark.parametrize(
    "text",
    ["a: 1\n---\nb: 2\n", "---\na: 1\n...\n---\nb: 2\n", "a: 1\n--- \n"],
)
def test_more_than_one_document_is_refused(text: str) -> None:
    refused(text)


def test_one_explicit_document_is_accepted() -> None:
    assert load_yaml(b"---\na: 1\n...\n", what="t") == {"a": 1}


@pytest.mark.parametrize(
    "text",
    [
        "~: a\n",
        "null: a\n",
        "1: x\n",
        "true: x\n",
        "1.5: x\n",
        ": x\n",
        "? [1, 2]\n: x\n",
        "? {a: 1}\n: x\n",
        "a: {1: x}\n",
        "yes: x\n",
    ],
)
def test_keys_that_are_not_strings_are_refused(text: str) -> None:
    refused(text)


# --------------------------------------------------------------------------- #
# B7, B8: fields are not schema-checked at dispatch time, but names are exact


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [
        ("id", "list-manager\u202e", "dispatcher.blueprint_identity_mismatch"),
        ("id", "list-manager\u200b", "dispatcher.blueprint_identity_mismatch"),
        ("id", "\uff4cist-manager", "dispatcher.blueprint_identity_mismatch"),
        ("children", {"_rtx\u200b": {}}, "dispatcher.blueprint_malformed"),
        ("children", {"r\u0430x": {}}, "dispatcher.blueprint_malformed"),
        ("children", {"\U000e0061": {}}, "dispatcher.blueprint_malformed"),
    ],
)
def test_invisible_or_look_alike_characters_in_names_are_refused(
    tmp_path: Path, field: str, value: object, code: str
) -> None:
    repo = make_repo(tmp_path)
    repo.module("list-manager")
    repo.modules["list-manager"][field] = value
    repo.rewrite("list-manager")
    with pytest.raises(RouteError) as info:
        repo.loader().load("list-manager")
    assert info.value.code == code


# --------------------------------------------------------------------------- #
# B9: encodings


@pytest.mark.parametrize(
    "raw",
    [
        codecs.BOM_UTF8 + b"a: 1\n",
        "a: 1\n".encode("utf-16"),
        "a: 1\n".encode("utf-32"),
        "a: 1\n".encode("utf-16-le"),
        "k: caf\u00e9\n".encode("latin-1"),
        b"k: \xff\xfe\n",
        b"k: \xed\xa0\x80\n",  # an encoded surrogate
    ],
)
def test_anything_but_plain_utf8_is_refused(raw: bytes) -> None:
    refused(raw)


# --------------------------------------------------------------------------- #
# Fuzz: nothing but a RouteError ever leaves the loader


@settings(max_examples=300)
@given(st.binary(max_size=512))
def test_random_bytes_load_or_are_refused_as_malformed(raw: bytes) -> None:
    try:
        data = load_yaml(raw, what="fuzz")
    except BlueprintMalformed:
        return
    assert isinstance(data, dict)


def _real_blueprint() -> str:
    return (CORPUS / "skills" / "list-manager" / "blueprint.yaml").read_text(encoding="utf-8")


REAL = _real_blueprint()


@given(yaml_mutations(REAL))
def test_mutated_real_blueprints_load_to_plain_data_or_are_refused(text: str) -> None:
    try:
        data = load_yaml(text.encode("utf-8", "surrogatepass"), what="fuzz")
    except BlueprintMalformed as error:
        event("refused")
        message = error.message
    else:
        message = ""
        event("accepted")
        _assert_plain(data, 1)
        # What is accepted means the same to PyYAML's YAML 1.1 loader.
        assert data == reference_load(text)
    assert CANARY not in message


def _assert_plain(value: object, depth: int) -> None:
    assert depth <= 64
    if isinstance(value, dict):
        for key, item in value.items():
            assert type(key) is str
            _assert_plain(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _assert_plain(item, depth + 1)
    else:
        assert value is None or type(value) in (str, int, float, bool)


@given(yaml_mutations(REAL))
def test_mutated_blueprints_through_the_loader_raise_only_route_errors(
    tmp_path_factory: pytest.TempPathFactory, text: str
) -> None:
    repo = make_repo(tmp_path_factory.mktemp("fuzz"))
    repo.write("list-manager", text.encode("utf-8", "surrogatepass"))
    try:
        record = repo.loader().load("list-manager")
    except RouteError as error:
        event(error.code)
        message = error.message
    else:
        event("loaded")
        message = ""
        assert record.module_id == "list-manager"
    assert CANARY not in message
