"""The CLI's argparse-free parse of an invocation agrees with argparse wherever it answers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from boring_dispatch.surfaces.cli.main import (
    _Invocation,
    _parsed_invocation,
    _quick_invocation,
)

OPTIONS = (
    "--config",
    "--repository-config",
    "--caller-skill",
    "--error-format",
    "--timeout",
    "--dry-run",
    "--stdin",
    "--audit",
)
VALUES = (
    "",
    "s",
    "daily-plan",
    "x.interface.y",
    "x.interface.y@2",
    "/abs/officina.toml",
    "/abs/audit.jsonl",
    "json",
    "text",
    "xml",
    "5",
    "0.5",
    "0",
    "-1",
    "1e3",
    "nan",
    "inf",
    "soon",
    "-",
    "--",
    "-x",
    "-h",
    "--help",
    "--conf",
    "--dry",
    "a b",
    "--x y",
    "=",
    "a=b",
    "é",
)
TOKENS = st.one_of(
    st.sampled_from(OPTIONS),
    st.sampled_from(VALUES),
    st.builds("{}={}".format, st.sampled_from(OPTIONS), st.sampled_from(VALUES)),
)
# Mostly well-formed invocations, so that the accepting branch is exercised often.
WELL_FORMED = (
    ["--caller-skill", "s"],
    ["--caller-skill=daily-plan"],
    ["--config", "/abs/officina.toml"],
    ["--repository-config=/abs/officina.toml"],
    ["--error-format", "json"],
    ["--error-format=text"],
    ["--timeout", "0.5"],
    ["--timeout=5"],
    ["--dry-run"],
    ["--stdin"],
    ["--audit", "/abs/audit.jsonl"],
    ["--audit=/abs/audit.jsonl"],
)
PAIRS = st.lists(
    st.one_of(
        st.sampled_from(WELL_FORMED),
        st.tuples(st.sampled_from(OPTIONS), st.sampled_from(VALUES)).map(list),
        TOKENS.map(lambda token: [token]),
    ),
    max_size=6,
).map(lambda pairs: [["--caller-skill", "s"], *pairs])
SHAPED = st.builds(
    lambda pairs, target, rest: [token for pair in pairs for token in pair] + [target, *rest],
    PAIRS,
    st.sampled_from(VALUES),
    st.lists(TOKENS, max_size=4),
)


@given(st.one_of(st.lists(TOKENS, max_size=10), SHAPED))
def test_every_invocation_parsed_without_argparse_is_parsed_the_same_by_argparse(
    argv: list[str],
) -> None:
    quick = _quick_invocation(argv)
    if quick is not None:
        assert quick == _parsed_invocation(argv)


USUAL = (
    ["--config", "/r/officina.toml", "--caller-skill", "a", "--dry-run", "a.interface.b"],
    ["--repository-config=/r/officina.toml", "--caller-skill=a", "a.interface.b@1", "x", "-y"],
    ["--caller-skill", "a", "--stdin", "--timeout", "2.5", "a.interface.b", "--dry-run", "--"],
    ["--error-format", "json", "--caller-skill", "a", "a.interface.b", "--x=1"],
)


@pytest.mark.parametrize("argv", USUAL)
def test_the_usual_invocations_are_parsed_without_argparse(argv: list[str]) -> None:
    quick = _quick_invocation(argv)
    assert isinstance(quick, _Invocation)
    assert quick == _parsed_invocation(argv)


@pytest.mark.parametrize(
    "argv",
    [
        ["--caller-skill", "a", "--help"],
        ["-h"],
        ["--conf", "/r/officina.toml", "--caller-skill", "a", "a.interface.b"],
        ["--caller-skill", "a", "--error-format", "xml", "a.interface.b"],
        ["--caller-skill", "a", "--timeout", "0", "a.interface.b"],
        ["--caller-skill", "a", "--dry-run=yes", "a.interface.b"],
        ["--caller-skill", "-a", "a.interface.b"],
        ["--caller-skill", "a", "--", "a.interface.b"],
        ["--caller-skill", "a", "a.interface.b", "--", "x"],
        ["--config", "/r/officina.toml", "a.interface.b"],
        ["--caller-skill", "a"],
    ],
)
def test_anything_unusual_is_left_to_argparse(argv: list[str]) -> None:
    assert _quick_invocation(argv) is None
