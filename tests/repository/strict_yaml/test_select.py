"""Loading one entry of a blueprint section: exactly the full strict load, projected.

The rule under test (``load_yaml_entry``): for any input it returns exactly
``project(load_yaml(input))``, or it refuses exactly when ``load_yaml``
refuses, with the same error code and message. Behind it, the whole-document
scan (``scan_units``) may only prove documents that the fast parser reads.
Both are checked on every corpus blueprint and every interface in it, and on
generated documents, hostile ones included: duplicate keys, anchors, tags,
deep nesting, odd indentation and so on, placed in the parts that are not built.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from boring_dispatch.errors import BlueprintMalformed
from boring_dispatch.repository.strict_yaml._fast import parse_block_yaml
from boring_dispatch.repository.strict_yaml._rules import MAX_DEPTH
from boring_dispatch.repository.strict_yaml._scan import scan_units
from boring_dispatch.repository.strict_yaml._select import project, select_block_yaml
from boring_dispatch.repository.strict_yaml.load import MAX_YAML_BYTES, load_yaml, load_yaml_entry
from kits.blueprints import corpus_dir
from kits.strategies import dumped_yaml, written_yaml, yaml_line_edits
from kits.yamldata import same

CORPUS: Final = corpus_dir()
EXAMPLES: Final = Path(__file__).resolve().parents[3] / "examples" / "repository"
KEEP: Final = frozenset({"schema_version", "node_type", "id", "version", "gateway"})
SECTION: Final = "interfaces"


def outcome(load: object, data: bytes, entry: str) -> tuple[object, ...]:
    """``("ok", data)`` or ``("refused", code, message)`` of one load."""
    try:
        if load is load_yaml:
            value: object = project(load_yaml(data, what="t"), KEEP, SECTION, entry)
        else:
            value = load_yaml_entry(data, what="t", keep=KEEP, section=SECTION, entry=entry)
    except BlueprintMalformed as error:
        return ("refused", error.code, str(error))
    return ("ok", value)


def agree(text: str, entry: str) -> str:
    """Assert the selective load is the projected full load; say which path it took."""
    data = text.encode("utf-8", "surrogatepass")
    full, selective = outcome(load_yaml, data, entry), outcome(load_yaml_entry, data, entry)
    assert full[0] == selective[0], (full, selective)
    if full[0] == "ok":
        assert same(full[1], selective[1]), (full, selective)
    else:
        assert full == selective
    if len(data) > MAX_YAML_BYTES or text.startswith("\ufeff"):
        return "loaded whole"  # (the scan's callers check the size and the BOM first)
    proved = scan_units(text)
    if proved:
        assert parse_block_yaml(text) is not None, "the scan proved what the fast parser declines"
    fast = select_block_yaml(text, KEEP, SECTION, entry)
    if fast is not None:
        assert full[0] == "ok"
        assert same(fast, full[1])
    return "selected" if fast is not None else ("proved" if proved else "loaded whole")


def corpus_files() -> list[Path]:
    return sorted(CORPUS.rglob("*.yaml")) + sorted(EXAMPLES.rglob("*.yaml"))


def _entries(text: str) -> list[str]:
    """The section's keys in ``text`` (if it loads), one that is missing, and odd names."""
    try:
        section = load_yaml(text.encode("utf-8", "surrogatepass"), what="t").get(SECTION)
    except BlueprintMalformed:
        section = None
    names = list(section) if isinstance(section, dict) else []
    return [*names, "missing", "a\n  b", "", "interfaces", "a: b"]


# --------------------------------------------------------------------------- #
# The corpus: every blueprint, every interface.


def test_every_corpus_blueprint_and_interface_loads_as_its_full_projection() -> None:
    paths = {}
    for path in corpus_files():
        text = path.read_text(encoding="utf-8")
        paths[path] = [agree(text, entry) for entry in _entries(text)]
    assert len(paths) >= 270
    selected = [path for path, ways in paths.items() if ways[0] == "selected"]
    assert len(selected) >= 190  # most blueprints take the selective path


def test_the_large_source_of_route_r3_is_selected_for_each_of_its_interfaces() -> None:
    text = (CORPUS / "skills/list-manager/_rtx/blueprints/rtx-yaml-store.yaml").read_text()
    entries = _entries(text)
    assert len(entries) > 10
    for entry in entries:
        assert agree(text, entry) == "selected"
    one = select_block_yaml(text, KEEP, SECTION, entries[0])
    assert one is not None
    assert set(one) == KEEP | {SECTION}
    assert list(one[SECTION]) == [entries[0]]  # type: ignore[call-overload]


# --------------------------------------------------------------------------- #
# Generated documents: a header, a section of entries, and hostile edits
# in the entries that are not built.

_HOSTILE: Final = (
    *("&a ", "*a", "!t ", "!!str ", "? ", "<<: ", "\t", "\r", "\x85", "\ufeff", "---", "%"),
    *("yes", "0777", "1e3", "1:30", "~", "[", "{", "{a: 1, a: 2}", "|", ">-", "'", '"', "\\q"),
    *("k: v", "k:", "- ", "-", "  ", "#", " #", "'0': x", "k: &a v", "k: *a", "k: !t v"),
)


@st.composite
def sectioned_documents(draw: st.DrawFn) -> tuple[str, str]:
    """A source-like document and the entry to select; other entries are edited hostilely."""
    names = draw(
        st.lists(
            st.sampled_from(["a", "b", "x.y", "if-1", "--opt", "_z", "'q'"]), min_size=1, max_size=4
        )
    )
    chosen = draw(st.sampled_from(names))
    blocks = []
    for name in names:
        body = draw(written_yaml())
        if name != chosen and draw(st.booleans()):
            body = _hostile_edit(draw, body)
        step = draw(st.sampled_from([1, 2, 4]))
        indented = "\n".join(
            (" " * (step + 2) + line) if line else line for line in body.split("\n")
        )
        blocks.append(f"{' ' * step}{name}:\n{indented}")
    header = ["id: s", "node_type: behavioral_source", "schema_version: 6", "version: 1"]
    header.append(draw(st.sampled_from(["gateway:\n  path: g.py", "gateway: {path: g.py}", ""])))
    body_lines = [f"{SECTION}:", *blocks]
    if draw(st.booleans()):
        header.append(_hostile_edit(draw, draw(written_yaml())))  # a skipped top-level part
    parts = draw(st.permutations([*header, "\n".join(body_lines)]))
    return "\n".join(part for part in parts if part) + "\n", chosen


def _hostile_edit(draw: st.DrawFn, text: str) -> str:
    lines = text.split("\n")
    index = draw(st.integers(0, len(lines) - 1))
    line = lines[index]
    kind = draw(st.sampled_from(["insert", "duplicate", "indent", "nest"]))
    if kind == "insert":
        at = draw(st.integers(0, len(line)))
        lines[index] = line[:at] + draw(st.sampled_from(_HOSTILE)) + line[at:]
    elif kind == "duplicate":
        lines.insert(index, line)
    elif kind == "indent":
        lines[index] = " " * draw(st.integers(1, 3)) + line
    else:
        depth = draw(st.sampled_from([MAX_DEPTH - 2, MAX_DEPTH, MAX_DEPTH + 2]))
        lines[index:index] = [" " * level + f"n{level}:" for level in range(depth)]
    return "\n".join(lines)


@given(sectioned_documents())
def test_generated_sectioned_documents_load_as_their_full_projection(
    case: tuple[str, str],
) -> None:
    text, entry = case
    event(agree(text, entry))


@given(written_yaml(), st.sampled_from(["a", "b", "k", "missing"]))
def test_written_documents_load_as_their_full_projection(text: str, entry: str) -> None:
    event(agree(text.replace("\na:", f"\n{SECTION}:", 1), entry))


@given(dumped_yaml().flatmap(yaml_line_edits), st.sampled_from(["a", "x", "missing"]))
def test_edited_dumped_documents_load_as_their_full_projection(text: str, entry: str) -> None:
    event(agree(text, entry))


def _corpus_sources() -> list[str]:
    names = (
        "skills/get-weather/_rtx/blueprints/rtx-weather-client.yaml",
        "skills/cloud-files/_rtx/blueprints/rtx-read-llm-file.yaml",
        "skills/ci-debug/_rtx/blueprints/rtx-init.yaml",
    )
    return [(CORPUS / name).read_text(encoding="utf-8") for name in names]


@given(st.sampled_from(_corpus_sources()), st.data())
def test_edited_corpus_sources_load_as_their_full_projection(
    original: str, data: st.DataObject
) -> None:
    entry = data.draw(st.sampled_from(_entries(original)), label="entry")
    text = data.draw(yaml_line_edits(original), label="text")
    event(agree(text, entry))


@given(st.text(alphabet=st.sampled_from("ab:- #'\"\n[]{},|>&*!?~1.\\x"), max_size=60))
def test_random_text_loads_as_its_full_projection(text: str) -> None:
    event(agree(f"{SECTION}:\n  a:\n{text}", "a"))
    event(agree(text, "a"))


# --------------------------------------------------------------------------- #
# Examples of each strictness rule in a part that is not built.

_SELECTED: Final = "id: s\ninterfaces:\n  one:\n    version: 1\n"


@pytest.mark.parametrize(
    "skipped",
    [
        "  two:\n    k: 1\n    k: 2\n",
        "  two:\n    a:\n      b:\n        c: 1\n        c: 2\n",
        "  two:\n    - k: 1\n      k: 2\n",
        "  one:\n    version: 2\n",
        "  two: &a x\n",
        "  two: *a\n",
        "  two: !t x\n",
        "  two: !!str x\n",
        "  two:\n    <<: {a: 1}\n",
        "  two: yes\n",
        "  two: 0777\n",
        "  two: .inf\n",
        "  two:\n   k: 1\n  k: 2\n",
        "  two:\n\tk: 1\n",
        "  two: 'unclosed\n",
        '  two: "\\q"\n',
        "  ? two\n  : x\n",
        "  two: [a, a: b]\n",
        "  two: {a: 1, a: 2}\n",
        "  two:\n" + "".join(" " * (4 + 2 * level) + f"n{level}:\n" for level in range(MAX_DEPTH)),
        "  two: x\n---\nthree: 1\n",
        "  two: x\n...\n",
        "  'two': 1\n  two: 2\n",
        "  two: |\n    text\n   bad\n",
        "  two: a\n    b: c\n",
        "  two: a\n  # c\n    b\n",
        "other: 1\nother: 2\n",
        "version: 1\n",
    ],
)
def test_every_rule_is_kept_in_the_parts_that_are_not_built(skipped: str) -> None:
    for text in (
        _SELECTED + skipped,
        "interfaces:\n" + skipped + _SELECTED.replace("interfaces:\n", ""),
    ):
        agree(text, "one")


def test_an_oversized_document_is_refused_alike() -> None:
    text = _SELECTED + "  two: " + "x" * MAX_YAML_BYTES + "\n"
    assert agree(text, "one") == "loaded whole"


def test_the_selected_entry_alone_is_built() -> None:
    text = _SELECTED + "  two:\n    version: 2\nother: 1\n"
    assert agree(text, "one") == "selected"
    assert load_yaml_entry(text.encode(), what="t", keep=KEEP, section=SECTION, entry="one") == {
        "id": "s",
        "interfaces": {"one": {"version": 1}},
    }
