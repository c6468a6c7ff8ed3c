"""The fast YAML path never disagrees with the libyaml path: it reads the same data or declines.

Every check here is differential: ``parse_block_yaml`` against
``_load_yaml_libyaml`` (the strict PyYAML/libyaml loader) on the same text,
with exact types and key order. The fast path may decline anything; it must
never return data the libyaml path refuses or reads differently. Coverage
tests make sure it does not rot into declining everything.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import pytest
import yaml
from hypothesis import event, given
from hypothesis import strategies as st

from boring_dispatch.errors import BlueprintMalformed
from boring_dispatch.repository.strict_yaml._fast import parse_block_yaml
from boring_dispatch.repository.strict_yaml._rules import MAX_DEPTH
from boring_dispatch.repository.strict_yaml.load import _load_yaml_libyaml, load_yaml
from kits.blueprints import corpus_dir
from kits.strategies import dumped_yaml, written_yaml, yaml_line_edits
from kits.yamldata import same

CORPUS = corpus_dir()
EXAMPLES: Final = Path(__file__).resolve().parents[3] / "examples" / "repository"
REFUSED: Final = "refused"
LARGE_SOURCE: Final = "skills/list-manager/_rtx/blueprints/rtx-yaml-store.yaml"


def libyaml(text: str) -> object:
    """What the strict libyaml path makes of ``text``: its data, or ``REFUSED``."""
    try:
        return _load_yaml_libyaml(text.encode("utf-8", "surrogatepass"), what="t")
    except BlueprintMalformed:
        return REFUSED


def agree(text: str) -> str:
    """Assert the two paths agree on ``text``; say whether the fast path read or declined it."""
    fast = parse_block_yaml(text)
    reference = libyaml(text)
    try:
        loaded: object = load_yaml(text.encode("utf-8", "surrogatepass"), what="t")
    except BlueprintMalformed:
        loaded = REFUSED
    assert same(loaded, reference) or loaded == reference == REFUSED
    if fast is None:
        return "declined"
    assert reference != REFUSED, "the fast path read what the libyaml path refuses"
    assert same(fast, reference), (fast, reference)
    return "read"


def read(text: str) -> object:
    """``text`` must be read by the fast path, agreeing with libyaml."""
    assert agree(text) == "read"
    return parse_block_yaml(text)


def declined(text: str) -> None:
    assert agree(text) == "declined"


def corpus_files() -> list[Path]:
    return sorted(CORPUS.rglob("*.yaml")) + sorted(EXAMPLES.rglob("*.yaml"))


# --------------------------------------------------------------------------- #
# The corpus: every file agrees, and the fast path reads nearly all of them.


def test_every_corpus_and_example_file_is_read_alike_by_both_paths() -> None:
    outcomes = {path: agree(path.read_text(encoding="utf-8")) for path in corpus_files()}
    assert len(outcomes) >= 270
    declines = sorted(str(path) for path, outcome in outcomes.items() if outcome == "declined")
    # Only the empty file (libyaml refuses it) and one multi-line flow sequence.
    assert len(declines) == 2, declines
    assert declines[0].endswith("rtx-phase-entry.yaml")
    assert declines[1].endswith("default_jobs.yaml")


def test_the_fast_path_reads_every_blueprint_of_the_benchmark_routes() -> None:
    for relative in (
        LARGE_SOURCE,
        "skills/get-weather/blueprint.yaml",
        "skills/get-weather/_rtx/blueprints/rtx-weather-client.yaml",
        "skills/cloud-files/_rtx/blueprints/rtx-read-llm-file.yaml",
        "skills/daily-plan/blueprint.yaml",
        "skills/list-manager/_rtx/blueprint.yaml",
    ):
        data = read((CORPUS / relative).read_text(encoding="utf-8"))
        assert isinstance(data, dict)
        assert "id" in data


def test_corpus_files_with_flow_collections_and_folded_scalars_are_read() -> None:
    flow = read((CORPUS / "skills/ci-debug/_rtx/blueprints/rtx-run-ci.yaml").read_text())
    assert isinstance(flow, dict)
    folded = (CORPUS / "skills/g-calendar/_rtx/blueprints/rtx-gcal-client.yaml").read_text()
    assert ">-" in folded
    read(folded)


# --------------------------------------------------------------------------- #
# The subset, feature by feature: read, and equal to libyaml.


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\nb: x\nc: true\nd: null\ne: ~\nf: 1.5\ng: 0x1F\nh: -3\ni: ''\nj:\n",
        "a:\n  b:\n    c: 1\n  d: 2\ne: 3\n",
        "a:\n- 1\n- x\nb: 2\n",
        "a:\n  - 1\n  -   x\nb: 2\n",
        "l:\n- a: 1\n  b: 2\n- c: 3\n-\n- - x\n  - y\n-\n  k: v\n",
        "l:\n- a:\n  - x\n  b: 1\n- a:\n- z\n",
        "l:\n- # c\n  k: v\n-   # c2\n- x\n",
        "a: word   \nb: two  words\nc: a:b\nd: a#b\ne: x # comment\nf: -x\ng: 'q' # c\n",
        'a: <repo-root>/**\nb: Python>=3.11\nc: x,y\nd: a [b] {c}\ne: it\'s\nf: say "hi"\n',
        "# head\n\na: 1\n   # odd comment\n\nb:   # comment\n  c: 2\n# tail\n",
        "a: folded plain\n  continues here\n   and here\nb: 2\n",
        "a: one\n\n  two\n\n\n  three\nb: 2\n",
        "l:\n- item that\n  wraps\n- k: value that\n    wraps too\n",
        "a:\n  own line\n  scalar\nb: 1\n",
        "a: x\n  - y\n  [z]\n  'q\n  &w *v !u |t >s %r @p `o\n",
        "'quoted key': 1\n\"dq key\": 2\n'a: b': 3\n'': 4\nk'x: 5\n",
        "a: 'it''s'\nb: 'multi\n  line'\nc: 'with\n\n  blank\n\n\n  lines'\nd: 'x  \n   y  '\n",
        'a: "\\0\\a\\b\\t\\n\\v\\f\\r\\e\\ \\"\\\\\\N\\_\\L\\P"\nb: "\\x41\\u00e9\\U0001F600"\n',
        'a: "wrapped\\\n  \\ line"\nb: "folded\n  line"\nc: "blank\n\n  kept"\n',
        'd: "escaped\\\n\n  break"\ne: "x\\\n  \\\n  y"\n',
        "a: |\n  line\n    more\n  last\nb: |-\n  x\n\n  y\n\n\nc: 1\n",
        "a: >\n  folded\n  text\n\n  para\nb: >-\n  x\n  y\nc: 1\n",
        "l:\n- |\n  in a list\n- k: >-\n    in a map\n",
        "a: {}\nb: []\nc: {x: 1, y: [a, 'b', \"c\"]}\nd: [ ]\ne: [{k: v}, [1, 2.5, null]]\n",
        "a: {k: Repository containing the runner., t: {kind: string}}\nb: [--x, -y]\n",
        "a: 1\nb: 2",
        "a: 'no final newline'",
        "a: |\n  x\n  ",
        "a: {" + "k" * 999 + ": v}\n" + "k" * 999 + ": 1\n",
        "k: caf\u00e9 \U0001f600 \u202e\xa0\n\u00e9: 1\n",
        "a:b: 1\na:: 2\nhttp://x: 3\n-k: 4\n.k: 5\n",
    ],
)
def test_the_subset_is_read_exactly_as_libyaml_reads_it(text: str) -> None:
    read(text)


def test_yaml_safe_dump_output_of_ordinary_data_is_read() -> None:
    data = {
        "id": "m._rtx.source.x",
        "version": 1,
        "description": "A long description " * 12 + "ending: here",
        "quoted": ["yes", "1", "0x1F", "null", " spaced ", "a: b", "#c", "- d", "line\nbreak"],
        "nested": {"empty": {}, "none": [], "deep": [{"a": [1, 2.5, True, None]}]},
        "unicode": "caf\u00e9 \u00fc",
    }
    strings = {
        "quoted": data["quoted"],
        "text": data["description"],
        "more": {"u": data["unicode"]},
    }
    for width in (20, 80, 4096):
        text = yaml.safe_dump(data, width=width, sort_keys=False)
        assert same(read(text), data)
        for style in ("'", '"'):  # quoted styles tag anything but strings
            text = yaml.safe_dump(strings, width=width, default_style=style, sort_keys=False)
            assert same(read(text), strings)


# --------------------------------------------------------------------------- #
# Outside the subset: declined, and libyaml decides (often a refusal).


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\tb\n",
        "a: 1\r\nb: 2\r\n",
        "a: x\ufeffy\n",
        "a: x\x85y\n",
        "a: x\u2028y\n",
        "a: x\x9fy\n",
        "a: x\x07y\n",
        "a: x\x7fy\n",
        "---\na: 1\n",
        "a: 1\n...\n",
        "%YAML 1.1\n---\na: 1\n",
        "a: &x 1\nb: *x\n",
        "a: !!str 1\n",
        "- &x a\n",
        "? a\n: 1\n",
        "a: [1,\n  2]\n",
        "a: 1\na: 2\n",
        "a: {x: 1, x: 2}\n",
        "'a': 1\na: 2\n",
        "1: a\n",
        "true: a\n",
        "a: yes\n",
        "a: 0777\n",
        "a: [1e3]\n",
        "<<: {k: 1}\n",
        "",
        "# only a comment\n",
        "- a\n",
        "just text\n",
        "  a: 1\n",
        "a: |+\n  x\n",
        "a: |2\n  x\n",
        "a: |\n\n  x\n",
        "a: >\n  x\n    y\n",
        "a: |\n  x",
        "k" * 1001 + ": 1\n",
        "k" * 1100 + ": 1\n",
        "'" + "k" * 1100 + "': 1\n",
        "a: {" + "k" * 1100 + ": v}\n",
        "a: [{'" + "k" * 1100 + "': v}]\n",
        "a: b: c\n",
        "a: x\n  b: y\n",
        "a: x # c\n  y\n",
        'a: "\\/"\n',
        'a: "\\ud800"\n',
        "a: 'open\n",
        "a:\n  b: 1\n c: 2\n",
        "a: [a,]\n",
        "a: {a}\n",
        "a: [a: b]\n",
        "l:\n- a #b: c\n",
        "a #b: c\nd: e\n",
        "a: |\n  x\n      \n  y\n",
        "--- a: 1\n",
        "a: 1\n--- |\n  x\n",
        "... a: 1\n",
        "a: 'q'#c\n",
    ],
)
def test_everything_outside_the_subset_is_declined(text: str) -> None:
    declined(text)


def test_nesting_up_to_the_cap_is_read_and_one_level_more_is_declined() -> None:
    def block(levels: int) -> str:
        return "".join(" " * i + "k:\n" for i in range(levels - 1)) + " " * (levels - 1) + "k: 1\n"

    def flow(levels: int) -> str:
        return "k: " + "[" * (levels - 1) + "1" + "]" * (levels - 1) + "\n"

    for nested in (block, flow):
        read(nested(MAX_DEPTH))
        declined(nested(MAX_DEPTH + 1))
        assert libyaml(nested(MAX_DEPTH + 1)) == REFUSED


# --------------------------------------------------------------------------- #
# Generated documents and edits: agree or decline, never disagree.


@given(dumped_yaml())
def test_dumped_random_documents_are_read_alike_or_declined(text: str) -> None:
    event(agree(text))


@given(dumped_yaml().flatmap(yaml_line_edits))
def test_edited_dumped_documents_are_read_alike_or_declined(text: str) -> None:
    event(agree(text))


def _corpus_samples() -> list[str]:
    names = (
        "skills/get-weather/blueprint.yaml",
        "skills/ci-debug/_rtx/blueprints/rtx-init.yaml",
        "skills/ci-debug/_rtx/blueprint.yaml",
        "skills/daily-plan/blueprint.yaml",
    )
    return [(CORPUS / name).read_text(encoding="utf-8") for name in names]


@given(st.sampled_from(_corpus_samples()).flatmap(yaml_line_edits))
def test_edited_corpus_blueprints_are_read_alike_or_declined(text: str) -> None:
    event(agree(text))


@given(st.text(alphabet=st.sampled_from("ab:- #'\"\n[]{},|>&*!?~1.\\x"), max_size=40))
def test_random_text_over_yaml_characters_is_read_alike_or_declined(text: str) -> None:
    event(agree(text))


@given(written_yaml())
def test_randomly_written_block_documents_are_read_alike_or_declined(text: str) -> None:
    event(agree(text))


@pytest.mark.parametrize(
    "text",
    [
        "a: [" + ", ".join(["x"] * 50_000) + "]\n",
        "a: {" + ", ".join(f"k{i}: [v, 'w']" for i in range(20_000)) + "}\n",
        'a: "' + '\\n\\x41\\"' * 30_000 + '"\n',
        "a: '" + "it''s " * 30_000 + "'\n",
        "a: x\n" + "\n" * 100_000 + "  # c\n  y\n",
        "".join(f"k{i}:\n- v\n- w: x\n  y: 'z'\n" for i in range(10_000)),
    ],
    ids=["flow-items", "flow-pairs", "escapes", "quote-pairs", "blank-lines", "many-lines"],
)
def test_large_inputs_agree_and_take_no_quadratic_path(text: str) -> None:
    # Each case once made a naive scanner quadratic; all are well under the size cap.
    agree(text)
