"""Blueprint regexes run in bounded time, with ``re``'s answers (hardening: ReDoS lint gaps).

The finding: the static backtracking lint accepted counted repetitions written
out (``^(a?)(a?)...(a?)aaa...a\\Z``), and a dry run with a 31-character argument
held the MCP server's GIL for 38 s. Patterns now run on RE2 after an exact
translation, within a size budget. The tests hold:

* every pattern (generated hostile ones, the finding's family, patterns at the
  budget's edge) is refused at load or matches 4 KiB adversarial text in under
  50 ms of this thread's CPU time, through the real binding, format and level
  paths, and over MCP;
* RE2 answers exactly as ``re`` does: differentially on every corpus pattern,
  on generated patterns and texts, on every code point for the classes;
* constructs without an exact translation are refused with a
  ``dispatcher.*`` error that names the construct and never the text.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Final

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from boring_dispatch.errors import ResolutionFailed, SecurityLevelUnavailable
from boring_dispatch.records import ModuleRecord
from boring_dispatch.repository import _regex_ranges
from boring_dispatch.repository._regex import (
    MAX_LIVE,
    MAX_SUBJECT_LENGTH,
    MAX_WEIGHT,
    BoundedPattern,
    PatternRefused,
    compile_bounded,
    compile_pattern,
)
from boring_dispatch.repository._regex_tables import TABLES
from boring_dispatch.repository.bind.binding import compile_binding
from boring_dispatch.repository.facts.levels import derive_level
from kits.cases import corpus_config
from kits.mcp import McpServer, projection, write_tools_repository
from kits.plain_env import plain_environment

#: The bound every accepted pattern meets on 4 KiB of adversarial text (CPU time of this thread).
CPU_BOUND_S: Final = 0.05
IID: Final = "demo.interface.run"

#: The finding's three patterns, counted repetitions written out.
FINDING: Final = [
    "^" + "(a?)" * 31 + "a" * 31 + r"\Z",
    "^" + "(.?)" * 60 + r"x\Z",
    "([a-z]{0,16})" * 40,
]


def cpu(call: Callable[[], object]) -> float:
    began = time.thread_time()
    call()
    return time.thread_time() - began


def adversarial(fill: str, tail: str = "!") -> str:
    """4096 characters: ``fill`` repeated, then ``tail`` (what makes a backtracker give up last)."""
    return (fill * MAX_SUBJECT_LENGTH)[: MAX_SUBJECT_LENGTH - len(tail)] + tail


SUBJECTS: Final = [
    adversarial("a"),
    adversarial("a", ""),
    adversarial("a", "\n"),
    adversarial("ab"),
    adversarial("x"),
    adversarial("0"),
    adversarial("\u0660"),  # ARABIC-INDIC DIGIT ZERO: \d in Python, not in RE2's \d
    adversarial("\u00e9"),
    adversarial("\u4e2d"),
    adversarial("\U0001d7ce"),  # MATHEMATICAL BOLD DIGIT ZERO: 4 bytes in UTF-8
    adversarial("-/"),
    adversarial(" "),
    "a" * 31,
    "a" * 30,
]


def assert_bounded(pattern: BoundedPattern, subjects: list[str] = SUBJECTS) -> None:
    for subject in subjects:
        for call in (pattern.match, pattern.fullmatch):
            spent = cpu(lambda: call(subject))  # noqa: B023 - called at once
            assert spent < CPU_BOUND_S, (pattern.pattern[:80], subject[:8], spent)


def refused_or_bounded(text: str) -> None:
    try:
        compiled = compile_pattern(text)
    except PatternRefused:
        return
    assert_bounded(compiled)


def positional(regex: str) -> dict[str, object]:
    patterns = [{"min_positionals": 1, "positional_patterns": {"0": regex}}]
    return {"process_binding": {"kind": "process", "entry": "I", "patterns": patterns}}


def flag(regex: str) -> dict[str, object]:
    patterns = [{"flag_patterns": {"--v": regex}, "required_flags": ["--v"]}]
    return {"process_binding": {"kind": "process", "entry": "I", "patterns": patterns}}


def formatted(regex: str, matching: str = "full") -> dict[str, object]:
    type_ = {"kind": "string", "format": {"regex": {"pattern": regex, "matching": matching}}}
    arity = {"minimum": 1, "maximum": 1}
    return {
        "contract": {
            "arguments": {
                "v": {"description": "d", "required": True, "sensitivity": "public", "type": type_}
            }
        },
        "process_binding": {
            "kind": "process",
            "entry": "I",
            "arguments": {"v": {"kind": "positional", "position": 0, "arity": arity}},
        },
    }


def bind(interface: Mapping[str, object], argv: list[str]) -> tuple[str, ...] | str:
    """The compiled command, or the refusal's code, internal reason and message."""
    try:
        return compile_binding(interface, interface_id=IID, argv=argv, stdin=False).command
    except ResolutionFailed as refused:
        return f"{refused.code}: {refused.reason}: {refused.message}"


# --------------------------------------------------------------------------- #
# The finding and its family, through the real paths


FAMILY: Final = [
    *FINDING,
    *(
        f"^{unit * count}{tail}"
        for unit in ("(a?)", "(?:a?)", "(.?)", r"(\w?)", "(a|)", "(?:-?)", r"(\d?)", "([a-z]{0,3})")
        for count in (8, 31, 60)
        for tail in ("a" * count + r"\Z", "x$", "")
    ),
    "^" + "(a?)" * 31 + "a{31}$",
    "^(a?){31}a{31}$",  # the same, counted (the lint refuses this spelling)
    "(?:[a-z]{0,16}){40}",
]


@pytest.mark.parametrize("regex", FAMILY)
def test_written_out_repetitions_are_refused_or_bounded_in_every_path(regex: str) -> None:
    """Positional, flag and format patterns: refused at load, or the whole binding is fast."""
    hostile = [adversarial("a"), adversarial("a", ""), "a" * 31, adversarial("ab")]
    cases: list[tuple[dict[str, object], list[str]]] = [
        (interface, argv)
        for subject in hostile
        for interface, argv in (
            (positional(regex), [subject]),
            (flag(regex), ["--v", subject]),
            (formatted(regex), ["--", subject]),
            (formatted(regex, "prefix"), ["--", subject]),
        )
    ]
    for interface, argv in cases:
        bind(interface, ["warm-up"])  # compiles once (memoised); the bound is on matching
        spent = cpu(lambda: bind(interface, argv))  # noqa: B023 - called at once
        assert spent < CPU_BOUND_S, (regex[:60], argv[-1][:8], spent)


def test_the_findings_31_character_argument_is_answered_correctly_and_fast() -> None:
    regex = FINDING[0]
    for length in (31, 40, 62):
        assert bind(positional(regex), ["a" * length]) == ("a" * length,)
    for length in (0, 30, 63, MAX_SUBJECT_LENGTH):
        outcome = bind(positional(regex), ["a" * length])
        assert isinstance(outcome, str)
        assert outcome.startswith("dispatcher.resolution_failed: no_pattern: ")


@pytest.mark.parametrize("regex", FAMILY[:3] + FAMILY[-3:])
def test_owned_filesystem_regexes_are_refused_or_bounded(regex: str) -> None:
    record = ModuleRecord(
        module_id="m._rtx",
        root=Path("/r"),
        configured_root=Path("/r"),
        version=1,
        data={"authority": {"owns_filesystem": [{"path": regex, "match": "regex"}]}},
    )
    for path in (adversarial("a"), "a" * 31, adversarial("a", "")):
        entry = {"id": "x", "medium": "local-filesystem", "access": "write", "path": path}
        contract = {
            "execution": {"state_effect": "mutating"},
            "direct_io": {"reads": [], "writes": [entry], "network": []},
        }

        def derive(contract: Mapping[str, object] = contract) -> object:
            try:
                return derive_level({"contract": contract}, record)
            except SecurityLevelUnavailable:
                return None

        assert cpu(derive) < CPU_BOUND_S


# --------------------------------------------------------------------------- #
# Generated hostile patterns: refused, or bounded on adversarial text

_UNITS: Final = st.sampled_from(
    ["a", "b", "x", ".", r"\w", r"\d", r"\s", r"\W", "[a-z]", "[^/]", "[ab]", "(?:a|ab)", "\u00e9"]
)
_QUANTIFIERS: Final = st.sampled_from(
    ["", "?", "*", "+", "??", "*?", "{0,3}", "{1,16}", "{0,16}", "{2}", "{31}", "{0,60}", "{2,}"]
)


def _nest(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    group = st.tuples(st.sampled_from(["(", "(?:", "(?s:"]), children, _QUANTIFIERS).map(
        lambda t: f"{t[0]}{t[1]}){t[2]}"
    )
    alternation = st.tuples(children, children, _QUANTIFIERS).map(
        lambda t: f"(?:{t[0]}|{t[1]}){t[2]}"
    )
    written_out = st.tuples(children, st.integers(2, 64)).map(lambda t: t[0] * t[1])
    sequence = st.lists(children, min_size=2, max_size=4).map("".join)
    return group | alternation | written_out | sequence


HOSTILE_PATTERNS: Final = st.tuples(
    st.sampled_from(["", "^", r"\A", "(?s)", "(?m)^"]),
    st.recursive(st.tuples(_UNITS, _QUANTIFIERS).map("".join), _nest, max_leaves=12),
    st.sampled_from(["", r"\Z", "$", r"x\Z", "a{31}$", "(?:a|b)*$"]),
).map("".join)


@given(
    regex=HOSTILE_PATTERNS,
    fill=st.sampled_from(["a", "ab", "x", "0", "\u00e9", "\u0660", "\U0001d7ce", " ", "-"]),
    tail=st.sampled_from(["", "!", "\n", "x", "a\n"]),
)
def test_generated_hostile_patterns_without_the_lint_are_refused_or_bounded(
    regex: str, fill: str, tail: str
) -> None:
    """The bound holds with the authoring lint left out: it comes from RE2 and the budget."""
    try:
        compiled = compile_bounded(regex)
    except (PatternRefused, re.error, RecursionError, OverflowError):
        return
    assert_bounded(compiled, [adversarial(fill, tail), adversarial("a"), adversarial("a", "")])


@given(regex=HOSTILE_PATTERNS)
def test_generated_hostile_patterns_through_compile_pattern_are_refused_or_bounded(
    regex: str,
) -> None:
    refused_or_bounded(regex)


@pytest.mark.parametrize(
    "regex",
    [
        f"(?:.?){{{MAX_LIVE - 1}}}x",
        f".*.{{{MAX_LIVE - 2}}}x",
        rf".*\w.{{{MAX_LIVE - 3}}}x",
        rf".*\d.{{{MAX_LIVE - 3}}}x",
        rf"(?:\d?){{{MAX_WEIGHT // 64}}}x",
        r"^https?://[A-Za-z0-9.-]{1,253}(:[0-9]{1,5})?(/[!-~]{0,2000})?\Z",  # examples/ web
        "[a-z]{0,1000}[0-9]{0,1000}[A-Z]{0,1000}",
        "x{0,2500}y",
        "(?:a?){150}(?:b?){150}",
        f"(?:.?){{{MAX_LIVE // 2}}}(?:.?){{{MAX_LIVE // 2}}}",
        "a{0,100}b{0,100}c{0,100}",
        r"^\w{1,11}$",
        r"^(?:[\w.-]+@)+[\w-]+\.\w+$",
        "(?:" + "(?:a|.)?" * 60 + ")*x",
    ],
)
def test_patterns_at_the_budgets_edge_are_accepted_and_bounded(regex: str) -> None:
    """The worst shapes found while choosing the budget: accepted, and still fast."""
    assert_bounded(compile_bounded(regex))


@pytest.mark.parametrize(
    ("regex", "reason"),
    [
        (f"(?:.?){{{MAX_LIVE + 1}}}", "positions"),
        ("(?:a?){200}(?:a?){200}", "positions"),
        ("(a?)" * 301, "positions"),
        (r"\w{12}", "too large"),
        (r"^[\w.-]{1,64}$", "too large"),
        (r"(?:\w|\s|\d){25}", "too large"),
        ("a{8193}", "repetition count over 8192"),
        ("(?:a{100}){20}", "linear-time matcher"),  # RE2: nested counts multiply past 1000
    ],
)
def test_patterns_over_the_budget_are_refused(regex: str, reason: str) -> None:
    with pytest.raises(PatternRefused, match=reason):
        compile_bounded(regex)


# --------------------------------------------------------------------------- #
# Exactness: RE2 answers as re does


def corpus_regexes() -> list[str]:
    """Every regex of the famulus corpus: argv patterns, format regexes, owned paths."""
    found: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, Mapping):
            for key, value in node.items():
                if key in ("positional_patterns", "flag_patterns") and isinstance(value, Mapping):
                    found.update(v for v in value.values() if isinstance(v, str))
                elif key == "regex" and isinstance(value, Mapping) and "pattern" in value:
                    found.add(str(value["pattern"]))
                elif key == "owns_filesystem" and isinstance(value, list):
                    found.update(
                        str(e["path"])
                        for e in value
                        if isinstance(e, Mapping) and e.get("match") == "regex"
                    )
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    for path in sorted(corpus_config("famulus").parent.rglob("*.yaml")):
        walk(yaml.safe_load(path.read_text(encoding="utf-8")))
    return sorted(found)


CORPUS: Final = corpus_regexes()
SPECIALS: Final = "\n\r\t \x00\x1c\x85\xa0\u2028\u0660\u00e9\u0130\u212a\udc80\U0001d7ce"


def test_every_corpus_regex_is_accepted() -> None:
    assert len(CORPUS) == 69
    for regex in CORPUS:
        assert compile_pattern(regex).pattern == regex


def agree(regex: str, compiled: BoundedPattern, subject: str) -> None:
    expected = re.compile(regex)
    assert compiled.match(subject) == (True if expected.match(subject) else None), (regex, subject)
    assert compiled.fullmatch(subject) == (True if expected.fullmatch(subject) else None), (
        regex,
        subject,
    )


@st.composite
def corpus_cases(draw: st.DrawFn) -> tuple[str, str]:
    """A corpus regex and a text near it: built from its own characters and hostile ones."""
    regex = draw(st.sampled_from(CORPUS))
    alphabet = sorted(set(re.sub(r"\\.", "", regex)) | set("0123456789abcdef-/.") | set(SPECIALS))
    words = [w for w in re.findall(r"[A-Za-z0-9$_./-]+", regex.replace("\\", "")) if w]
    head = draw(st.sampled_from(["", *words]))
    body = draw(st.text(alphabet=st.sampled_from(alphabet), max_size=70))
    tail = draw(st.sampled_from(["", "\n", "\n\n", "x", "\u0660", ".pub", "\udc80"]))
    return regex, head + body + tail


@given(case=corpus_cases())
def test_corpus_regexes_answer_as_re_does(case: tuple[str, str]) -> None:
    regex, subject = case
    agree(regex, compile_pattern(regex), subject)


@pytest.mark.parametrize("regex", CORPUS)
def test_corpus_regexes_answer_as_re_does_on_their_own_examples(regex: str) -> None:
    compiled = compile_pattern(regex)
    samples = ["", "x", "1", "a-b", "0" * 40, "a" * 64, "[1]", "/x", "2026-01-02", "12-3-45"]
    samples += re.findall(r"[A-Za-z0-9_./-]+", regex.replace("\\", ""))
    for sample in samples:
        for variant in (sample, sample + "\n", sample + "\n\n", "\n" + sample, sample + "x"):
            agree(regex, compiled, variant)


_ATOMS: Final = st.sampled_from(
    [
        "a",
        "b",
        "x",
        "-",
        "/",
        "_",
        " ",
        "\u00e9",
        r"\n",
        ".",
        r"\d",
        r"\D",
        r"\w",
        r"\W",
        r"\s",
        r"\S",
        "[a-c]",
        "[^a]",
        r"[\d_]",
        r"[^\w-]",
        "[-/]",
        r"[\s\S]",
        r"\u0660",
        "[\u00e0-\u00fc]",
        "A",
        r"\b",
        r"\B",
        "^",
        "$",
        r"\A",
        r"\Z",
    ]
)
_SMALL_QUANTIFIERS: Final = st.sampled_from(
    ["", "", "", "?", "*", "+", "{2}", "{0,2}", "{1,3}", "??", "*?", "+?", "{2,}"]
)


def _small_nest(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    group = st.tuples(
        st.sampled_from(["(?:", "(", "(?s:", "(?m:", "(?a:", "(?-s:", "(?u:"]),
        children,
        _SMALL_QUANTIFIERS,
    ).map(lambda t: f"{t[0]}{t[1]}){t[2]}")
    alternation = st.lists(children, min_size=2, max_size=3).map(
        lambda b: "(?:" + "|".join(b) + ")"
    )
    sequence = st.lists(children, min_size=2, max_size=4).map("".join)
    return group | alternation | sequence


DIFF_PATTERNS: Final = st.tuples(
    st.sampled_from(["", "", "(?s)", "(?m)", "(?a)", "(?ms)", "(?sa)", "^", "(?m)^"]),
    st.recursive(st.tuples(_ATOMS, _SMALL_QUANTIFIERS).map("".join), _small_nest, max_leaves=8),
    st.sampled_from(["", "", "$", r"\Z", "$|b", r"(?:$|\Z)", "(?m:$)", "(?m:$)x"]),
).map("".join)
DIFF_TEXT: Final = st.text(alphabet=st.sampled_from("abx-/_ AK0\u00e9" + SPECIALS), max_size=8)


@given(regex=DIFF_PATTERNS, subjects=st.lists(DIFF_TEXT, min_size=1, max_size=8))
def test_generated_patterns_answer_as_re_does(regex: str, subjects: list[str]) -> None:
    try:
        re.compile(regex)
    except re.error:
        with pytest.raises((PatternRefused, re.error)):
            compile_bounded(regex)
        return
    try:
        compiled = compile_bounded(regex)
    except PatternRefused:
        return  # a construct without an exact translation (tested below)
    for subject in subjects:
        for variant in (subject, subject + "\n"):
            agree(regex, compiled, variant)


@pytest.mark.parametrize(
    "regex", ["x{0,2500}", "x{1500,2500}", "x{1000}", "x{1001}", "x{2001,}", "(?:xy?){999,1001}"]
)
def test_counts_over_re2s_1000_are_split_exactly(regex: str) -> None:
    compiled = compile_bounded(regex)
    for count in (0, 1, 998, 999, 1000, 1001, 1002, 1499, 1500, 2000, 2001, 2500, 2501, 4096):
        agree(regex, compiled, "x" * count)
        agree(regex, compiled, "xy" * (count // 2))


@pytest.mark.parametrize(
    ("regex", "subject", "matched", "full"),
    [
        (r"\d", "\u0660", True, True),  # RE2's own \d is ASCII
        (r"(?a)\d", "\u0660", None, None),
        (r"\w", "\u00e9", True, True),
        (r"\w", "\u2160", True, True),  # ROMAN NUMERAL ONE: isalnum(), not \p{L}
        (r"\s", "\x1c", True, True),  # str.isspace()
        (r"\s", "\u2028", True, True),
        (r"(?a)\s", "\x1c", None, None),
        (r"(?a)\s", "\x0b", True, True),
        (".", "\n", None, None),
        ("(?s).", "\n", True, True),
        (".", "\udc80", True, True),  # a lone surrogate from surrogateescape argv
        (r"[^a]", "\n", True, True),
        ("^status$", "status\n", True, None),  # $ before a final newline: re.match only
        ("^status$", "status\n\n", None, None),
        (r"^status\Z", "status\n", None, None),
        (r"(?:a$|b\Z)", "a\n", True, None),
        (r"(?:a$|b\Z)", "b\n", None, None),
        ("(?m)^b$", "a\nb\nc", None, None),
        ("(?m)a$\nb", "a\nb", True, True),
        (r"(?a)\bx\b", "x", True, True),
        ("a??b*?", "", True, True),
    ],
)
def test_semantics_where_re2s_defaults_differ_from_re(
    regex: str, subject: str, matched: bool | None, full: bool | None
) -> None:
    compiled = compile_bounded(regex)
    assert (compiled.match(subject), compiled.fullmatch(subject)) == (matched, full)
    agree(regex, compiled, subject)


CLASSES: Final = [r"\d", r"\w", r"\s", r"\D", r"\W", r"\S", ".", "(?s).", r"[^\W\d]", r"[\s\S]"]


@pytest.mark.parametrize("ascii_only", [False, True])
@pytest.mark.parametrize("name", ["d", "s", "w"])
def test_class_ranges_are_exactly_res_on_every_code_point(name: str, ascii_only: bool) -> None:
    text = _regex_ranges.every_code_point()
    expected = [
        (m.start(), m.end() - 1)
        for m in re.finditer(("(?a)" if ascii_only else "") + "\\" + name + "+", text)
    ]
    assert list(_regex_ranges.category_ranges(name, ascii_only=ascii_only)) == expected


def test_the_shipped_unicode_tables_cover_this_python() -> None:
    import unicodedata

    assert unicodedata.unidata_version in TABLES  # else every process computes them (~50 ms)


@given(
    regex=st.sampled_from([*CLASSES, *(f"(?a){c}" for c in CLASSES)]),
    char=st.characters(exclude_categories=()),  # surrogates included
)
def test_classes_answer_as_re_does_on_any_code_point(regex: str, char: str) -> None:
    agree(regex, compile_bounded(regex), char)


# --------------------------------------------------------------------------- #
# Refusals: a clear dispatcher error, never the text


@pytest.mark.parametrize(
    ("regex", "reason"),
    [
        (r"(a)\1", "backreference"),
        ("(?P<n>a)(?P=n)", "backreference"),
        ("(a)?(?(1)b|c)", "conditional"),
        ("a(?=b)", "lookahead"),
        ("a(?!b)", "lookahead"),
        ("(?<=a)b", "lookbehind"),
        ("(?<!a)b", "lookbehind"),
        ("(?i)abc", "case-insensitive"),
        ("a(?i:b)", "case-insensitive"),
        ("(?>ab)c", "atomic"),
        ("a++b", "possessive"),
        (r"\bword\b", r"\\b outside ASCII mode"),
        (r"x\B", r"\\B, which re and RE2"),
        (r"(?a)\B", r"\\B, which re and RE2"),
        ("^a$b", r"'\$' before more pattern"),
        ("(?:a$)+", r"'\$' before more pattern"),
        ("a{8193}", "repetition count over 8192"),
        ("(?:a?){301}", "positions"),
    ],
)
def test_constructs_without_an_exact_translation_are_refused_with_a_dispatcher_code(
    regex: str, reason: str
) -> None:
    with pytest.raises(PatternRefused, match=reason):
        compile_bounded(regex)
    canary = "CANARY-7f3a-" + "a" * 20
    for interface, argv in (
        (positional(regex), [canary]),
        (flag(regex), ["--v", canary]),
        (formatted(regex), ["--", canary]),
    ):
        outcome = bind(interface, argv)
        assert isinstance(outcome, str), regex
        assert outcome.startswith("dispatcher.resolution_failed: regex_refused: "), outcome
        assert canary not in outcome
    record = ModuleRecord(
        module_id="m._rtx",
        root=Path("/r"),
        configured_root=Path("/r"),
        version=1,
        data={"authority": {"owns_filesystem": [{"path": regex, "match": "regex"}]}},
    )
    contract = {
        "execution": {"state_effect": "read-only"},
        "direct_io": {"reads": [], "writes": [], "network": []},
    }
    with pytest.raises(
        SecurityLevelUnavailable, match="owns_filesystem regex is refused"
    ) as caught:
        derive_level({"contract": contract}, record)
    assert caught.value.code == "dispatcher.security_level_unavailable"


# --------------------------------------------------------------------------- #
# Warm resolution compiles nothing; the CLI loads RE2 only for patterns


def test_compiled_patterns_are_memoised_by_text() -> None:
    assert compile_pattern(r"^\d{4}-\d{2}-\d{2}$") is compile_pattern(r"^\d{4}-\d{2}-\d{2}$")
    with pytest.raises(PatternRefused) as first:
        compile_pattern(r"(a)\1")
    with pytest.raises(PatternRefused) as again:
        compile_pattern(r"(a)\1")
    assert str(first.value) == str(again.value)


def _modules_after(code: str) -> set[str]:
    import json
    import subprocess

    probe = code + "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))\n"
    done = subprocess.run(
        [sys.executable, "-I", "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env=plain_environment(),  # unmeasured: coverage's own imports are not ours
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_re2_is_imported_by_a_dry_run_that_matches_a_pattern_and_not_before() -> None:
    config = corpus_config("famulus")
    code = (
        "import io, contextlib\n"
        "from boring_dispatch.surfaces.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    rc = main(['--config', {str(config)!r}, '--caller-skill', 'get-weather',"
        " '--dry-run', 'get-weather._rtx.interface.scripts-weather', '--date', '2026-01-02'])\n"
        "assert rc == 0, rc\n"
    )
    modules = _modules_after(code)
    third_party = {
        m.split(".")[0]
        for m in modules
        if m.split(".")[0] not in sys.stdlib_module_names
        and not m.startswith(("boring_dispatch", "_"))
    }
    assert third_party <= {"re2", "yaml", "cython_runtime"}
    assert "re2" in modules
    imported = _modules_after("import boring_dispatch.repository._regex")
    assert "re2" not in imported
    assert "boring_dispatch.repository._regex_tables" not in imported


# --------------------------------------------------------------------------- #
# Over MCP: the server answers while a hostile argument meets the finding's pattern


@pytest.fixture(scope="module")
def hostile_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpServer]:
    config = write_tools_repository(tmp_path_factory.mktemp("repo"))
    source = config.parent / "skills" / "tools" / "main.yaml"
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    echo = data["interfaces"]["tools.source.main.interface.echo"]["process_binding"]
    echo["patterns"][0]["flag_patterns"]["--name"] = FINDING[0]
    source.write_text(yaml.safe_dump(data), encoding="utf-8")
    errlog = (tmp_path_factory.mktemp("stderr") / "server.log").open("w+", encoding="utf-8")
    logs = tmp_path_factory.mktemp("logs")
    with (
        errlog,
        McpServer(
            ["mcp", "--config", str(config)],
            env={"ASSISTANT_LOGS": str(logs)},
            cwd=config.parent,
            errlog=errlog,
        ) as server,
    ):
        yield server


@pytest.mark.parametrize("value", ["a" * 31, "a" * 30, adversarial("a"), adversarial("a", "")])
def test_an_mcp_dry_run_with_the_findings_pattern_is_answered(
    hostile_server: McpServer, value: str
) -> None:
    arguments = projection("echo", options={"name": value}, dry_run=True)
    # Before the fix the server held its GIL for 38 s on 31 characters (hours on these).
    assert hostile_server.call_with_timeout("invoke_security_0", arguments, 10.0) is None
    result = hostile_server.call("invoke_security_0", arguments)
    assert result["isError"] is (value != "a" * 31)
    if result["isError"]:
        assert value not in str(result)


def test_a_refused_pattern_writes_nothing_to_stderr(capfd: pytest.CaptureFixture[str]) -> None:
    """RE2 logs its errors to file descriptor 2 unless told not to: the dispatcher never does."""
    for regex in ("(?:a{100}){100}", r"(?:\w?){300}", "a{9000}"):
        with pytest.raises(PatternRefused):
            compile_bounded(regex)
    captured = capfd.readouterr()
    assert captured.out == captured.err == ""
