"""Level 1 needs proof that every path an entry can name stays inside ``owns_filesystem``.

A regex or glob entry is judged by what it can match, not by its literal
start: ``^data/[.][.]/[.][.]/.ssh/x$`` begins with ``data/`` and still names a
file outside it. An entry is inside only when every path it can match starts
with an owned subtree and has no ``.`` or ``..`` segment; a construct the
analysis does not model makes it outside (level 2).

The property tests generate patterns together with a path each one matches
(the regex checked by ``re``): whenever that path leaves the subtree, the level
must be 2. Patterns built from segment-safe pieces only must stay level 1.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

import pytest
from hypothesis import given
from hypothesis import strategies as st

from boring_dispatch.records import ModuleRecord
from boring_dispatch.repository.facts.levels import derive_level

OWNER: Final = ModuleRecord(
    module_id="m._rtx",
    root=Path("/r/m/_rtx"),
    configured_root=Path("/r"),
    version=1,
    data={
        "id": "m._rtx",
        "authority": {
            "owns_filesystem": [
                {"path": r"^data/.*$", "match": "regex", "allowed_readers": [], "reason": "r"},
                {"path": r"^\.certs/[^/]+\.jsonl$", "match": "regex"},
            ]
        },
    },
)


def _level(path: str, path_match: str) -> int:
    entry = {"id": "f", "medium": "local-filesystem", "access": "write", "path": path}
    entry["path_match"] = path_match
    interface = {
        "contract": {
            "execution": {"state_effect": "mutating"},
            "direct_io": {"reads": [], "writes": [entry], "network": []},
        }
    }
    return derive_level(interface, OWNER)


@pytest.mark.parametrize(
    "regex",
    [
        r"^data/[.][.]/[.][.]/.ssh/x$",
        r"^data/.{2}/.{2}/etc/passwd$",
        r"^data/..?/x$",
        r"^data/.+/x$",
        r"^data/[.]+/x$",
        r"^data/[.a]{1,2}/x$",
        r"^data/[^a]{2}/x$",
        r"^data/[^/]*$",
        r"^data/[^/]+$",
        r"^data/[%-/]{2}/x$",
        r"^data/\W\W/x$",
        r"^data/\S+$",
        r"^data/\x2e\x2e/x$",
        r"^data/\056\056/x$",
        r"^data/\u002e\u002e/x$",
        r"^data/\N{FULL STOP}\N{FULL STOP}/x$",
        r"^data/(?:\.\.)/x$",
        r"^data/(..)/x$",
        r"^data/x|/etc/passwd$",
        r"(?s)^data/x$",
        r"(?i)^DATA/x$",
        r"^data/x",
        r"^data/x/",
        r"^data/x$\n",
        r"^data/x\Z",
        r"^data/.*/x$",
        r"^data/.+$",
        r"^data/[[:alpha:]]$",
        r"^data/[a-\x2f]+/x$",
        r"^data/\.\./x$",
        r"^data/\./x$",
        r"^data/x/\.\.$",
        r"^data/x/\.$",
        r"^data$",
        r"^data/*\.\./x$",
        r"^/data/x$",
        r"^dat[a]/\.\./x$",
        r"^data/[a.]?[.]/x$",
        r"^data/a{0}\.\./x$",
        r"^data/\.{1,2}/x$",
        r"^data/\.{2,}?/x$",
        r"^data/\.{,2}/x$",
    ],
)
def test_a_regex_that_can_match_outside_or_is_not_modelled_is_level_2(regex: str) -> None:
    assert _level(regex, "regex") == 2


@pytest.mark.parametrize(
    "regex",
    [
        r"^data/x$",
        r"^data/[a-z]+\.log$",
        r"^data/logs/[0-9]{4}\.json$",
        r"^data/\d+/x$",
        r"^data/\w+/\w+\.txt$",
        r"^data/[^/]+\.jsonl$",
        r"^data/a[^/]*$",
        r"^data/[a-z][.a-z]*$",
        r"^data/\.cache/x$",
        r"^data/\.\.\./x$",
        r"^data/x\.?y$",
        r"^data/.*$",
        r"^\.certs/[^/]+\.jsonl$",
    ],
)
def test_a_regex_that_only_matches_inside_the_subtree_is_level_1(regex: str) -> None:
    assert _level(regex, "regex") == 1


@pytest.mark.parametrize(
    "glob",
    [
        "data/.*/.*/etc/x",
        "data/*/x",
        "data/*",
        "data/**",
        "data/**/x.log",
        "data/?/x",
        "data/??/x",
        "data/.?/x",
        "data/[.][.]/x",
        "data/[!a]/x",
        "data/[^a]/x",
        "data/{a,..}/x",
        "data/\\*/x",
        "data/x/..",
        "data/../x",
        "data*/x",
        "/data/x",
        "data/*/../x",
        "data/x/[",
    ],
)
def test_a_glob_that_can_match_outside_or_is_not_modelled_is_level_2(glob: str) -> None:
    """Read as a path glob: ``*``, ``?`` and ``[...]`` stay in one segment, ``**`` spans them."""
    assert _level(glob, "glob") == 2


@pytest.mark.parametrize(
    "glob",
    [
        "data/*.log",
        "data/logs/[0-9]*.json",
        "data/x",
        "data/a*",
        "data/*x*",
        "data/.cache",
        "data/[a-z]*/x",
        "data/...",
    ],
)
def test_a_glob_whose_segments_cannot_be_dot_or_dot_dot_is_level_1(glob: str) -> None:
    assert _level(glob, "glob") == 1


# --------------------------------------------------------------------------- #
# Generated: each pattern comes with a path it matches


#: (regex piece, glob piece or None, characters it may produce)
_PIECES: Final = [
    ("a", "a", "a"),
    ("b", "b", "b"),
    (r"\.", ".", "."),
    ("/", "/", "/"),
    ("-", "-", "-"),
    (".", None, "a./"),
    ("[.]", "[.]", "."),
    ("[a.]", "[a.]", "a."),
    ("[^/]", "[!/]", "a."),
    ("[^a]", "[!a]", "./"),
    ("[a-z]", "[a-z]", "ab"),
    ("[.-/]", None, "./"),
    (r"\d", None, "7"),
    (r"\w", None, "a_"),
    (r"\W", None, "./"),
    (r"\S", None, "a./"),
    (r"\D", None, "a./"),
]
_QUANTIFIERS: Final = [("", 1, 1), ("?", 0, 1), ("*", 0, 3), ("+", 1, 3), ("{2}", 2, 2)]


@st.composite
def regex_with_witness(draw: st.DrawFn) -> tuple[str, str]:
    regex, witness = ["^data/"], ["data/"]
    for _ in range(draw(st.integers(1, 6))):
        piece, _glob, chars = draw(st.sampled_from(_PIECES))
        quantifier, low, high = draw(st.sampled_from(_QUANTIFIERS))
        regex.append(piece + quantifier)
        count = draw(st.integers(low, high))
        witness.extend(draw(st.sampled_from(chars)) for _ in range(count))
    anchored = draw(st.booleans())
    if anchored:
        regex.append("$")
    else:
        witness.append(draw(st.sampled_from(["", "/../x", "/y"])))
    return "".join(regex), "".join(witness)


def _leaves(path: str) -> bool:
    """The path is not inside ``data/``: another start, or a ``.``/``..`` segment."""
    return not path.startswith("data/") or any(s in {".", ".."} for s in path.split("/"))


@given(regex_with_witness())
def test_generated_regexes_matching_a_path_outside_are_level_2(case: tuple[str, str]) -> None:
    regex, witness = case
    found = re.fullmatch(regex, witness) if regex.endswith("$") else re.match(regex, witness)
    assert found is not None  # the witness is one of the regex's paths
    if _leaves(witness):
        assert _level(regex, "regex") == 2


#: (glob piece, characters one use of it may produce), read as a path glob.
_GLOB_PIECES: Final = [
    ("a", "a"),
    ("b", "b"),
    (".", "."),
    ("/", "/"),
    ("-", "-"),
    ("[.]", "."),
    ("[a.]", "a."),
    ("[!/]", "a."),
    ("[!a]", "."),
    ("[a-z]", "ab"),
    ("?", "a."),
    ("*", "a."),
    ("**", "a./"),
]


@st.composite
def glob_with_witness(draw: st.DrawFn) -> tuple[str, str]:
    glob, witness = ["data/"], ["data/"]
    for _ in range(draw(st.integers(1, 6))):
        piece, chars = draw(st.sampled_from(_GLOB_PIECES))
        glob.append(piece)
        count = draw(st.integers(0, 3)) if piece in {"*", "**"} else 1
        witness.extend(draw(st.sampled_from(chars)) for _ in range(count))
    return "".join(glob), "".join(witness)


@given(glob_with_witness())
def test_generated_globs_matching_a_path_outside_are_level_2(case: tuple[str, str]) -> None:
    glob, witness = case
    if _leaves(witness):
        assert _level(glob, "glob") == 2


_SAFE: Final = [r"a", r"b", r"\d", r"\w", "[a-z]", "-"]


@given(
    segments=st.lists(
        st.tuples(
            st.lists(st.sampled_from(_SAFE), min_size=1, max_size=3),
            st.sampled_from(["", r"\.log", r"\.\.\.", r"[.a]*"]),
        ),
        min_size=1,
        max_size=3,
    )
)
def test_generated_regexes_of_segment_safe_pieces_stay_level_1(
    segments: list[tuple[list[str], str]],
) -> None:
    """Every segment starts with a piece that cannot produce ``.``."""
    body = "/".join("".join(pieces) + "+" + tail for pieces, tail in segments)
    assert _level(f"^data/{body}$", "regex") == 1
