"""Hostile argv and hostile blueprints against the binding stage (SECURITY.md checklist D).

The compiler is a boundary: whatever the caller sends and however the
blueprint is broken, the only possible outcomes are a compiled binding or
``dispatcher.resolution_failed``; never a traceback, never a rewritten
argument, never an argument value in a message.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from boring_dispatch.errors import ResolutionFailed, SecurityLevelUnavailable
from boring_dispatch.records import ModuleRecord
from boring_dispatch.repository._regex import MAX_PATTERN_LENGTH, compile_pattern
from boring_dispatch.repository._shapes import BindingRefused, RefusalReason
from boring_dispatch.repository.bind import binding as binding_module
from boring_dispatch.repository.bind.binding import (
    MAX_ARGV_BYTES,
    MAX_ARGV_TOKENS,
    MAX_TOKEN_BYTES,
    compile_binding,
)
from boring_dispatch.repository.facts.audiences import output_audiences
from boring_dispatch.repository.facts.levels import derive_level
from kits.cases import corpus_config
from kits.strategies import HOSTILE_ARGV_TOKENS, binding_argv, nested_mutations, pattern_bindings

IID = "demo.interface.run"
CANARY = "S3CRET-canary-7f3a"
ANYTHING = {
    "process_binding": {
        "kind": "process",
        "entry": "I",
        "patterns": [{"allow_extra_positionals": True}],
    }
}


def one_argument(
    type_: Mapping[str, object] | None = None,
    *,
    sensitivity: str = "public",
    bound: Mapping[str, object] | None = None,
    default: object = None,
) -> dict[str, object]:
    """An argument-mode interface with one argument ``v`` (by default: string positionals)."""
    contract: dict[str, object] = {
        "description": "d",
        "required": default is None,
        "sensitivity": sensitivity,
        "type": dict(type_ or {"kind": "string"}),
    }
    if default is not None:
        contract["default"] = default
    arity = {"minimum": 0 if default is not None else 1, "maximum": None}
    return {
        "contract": {"arguments": {"v": contract}},
        "process_binding": {
            "kind": "process",
            "entry": "I",
            "arguments": {
                "v": dict(bound or {"kind": "positional", "position": 0, "arity": arity})
            },
        },
    }


STRING_ARG = one_argument()


def _arg(type_: dict[str, object], **more: object) -> dict[str, object]:
    return {"description": "d", "required": False, "sensitivity": "public", "type": type_, **more}


#: An argument-mode interface touching every type kind, format and binding kind.
RICH: Final = {
    "contract": {
        "arguments": {
            "when": _arg(
                {
                    "kind": "datetime",
                    "date_formats": ["iso-8601", "%d/%m/%Y %H:%M"],
                    "timezone": "optional",
                }
            ),
            "day": _arg({"kind": "date", "date_formats": ["%Y-%m-%d"]}, default="2026-01-02"),
            "count": _arg({"kind": "integer", "minimum": 0, "maximum": 9}, default=1),
            "ratio": _arg({"kind": "number", "minimum": -1.5}),
            "mode": _arg(
                {
                    "kind": "enum",
                    "values": [
                        {"value": "a", "description": "d"},
                        {"value": 2, "description": "d"},
                    ],
                }
            ),
            "tags": _arg(
                {
                    "kind": "list",
                    "element_type": {"kind": "string", "format": {"named": "identifier"}},
                }
            ),
            "id": _arg(
                {"kind": "string", "format": {"regex": {"pattern": "^[a-z]+$", "matching": "full"}}}
            ),
            "doc": _arg({"kind": "string", "format": {"named": "json"}}),
            "on": _arg({"kind": "boolean"}),
            "fast": _arg({"kind": "flag"}),
            "token": _arg({"kind": "string"}, sensitivity="secret"),
        }
    },
    "process_binding": {
        "kind": "process",
        "entry": "I",
        "args_prefix": ["run"],
        "arguments": {
            "when": {"kind": "positional", "position": 0, "arity": {"minimum": 0, "maximum": 1}},
            "tags": {"kind": "positional", "position": 2, "arity": {"minimum": 0, "maximum": None}},
            "day": {"kind": "option", "name": "--day", "arity": {"minimum": 1, "maximum": 1}},
            "count": {"kind": "option", "name": "--count", "arity": {"minimum": 1, "maximum": 1}},
            "ratio": {"kind": "option", "name": "--ratio", "arity": {"minimum": 1, "maximum": 1}},
            "mode": {"kind": "option", "name": "--mode", "arity": {"minimum": 0, "maximum": 2}},
            "id": {"kind": "option", "name": "--id", "arity": {"minimum": 1, "maximum": 1}},
            "doc": {"kind": "option", "name": "--doc", "arity": {"minimum": 1, "maximum": 1}},
            "on": {"kind": "option", "name": "--on", "arity": {"minimum": 1, "maximum": 1}},
            "fast": {"kind": "switch", "name": "--fast"},
            "token": {"kind": "stdin", "encoding": "utf-8", "framing": "text"},
        },
        "fixed": [
            {"kind": "positional", "position": 1, "value": "mid", "type": {"kind": "string"}},
            {"kind": "option", "name": "--level", "value": 3, "type": {"kind": "integer"}},
            {"kind": "switch", "name": "--safe"},
        ],
    },
}
RICH_TOKENS: Final = (
    "2026-01-02T05:00",
    "02/01/2026 05:00",
    "x",
    "snake_case",
    "--day",
    "--count",
    "--ratio",
    "--mode",
    "--id",
    "--doc",
    "--on",
    "--fast",
    "--safe",
    "--",
    "1",
    "-2.5",
    "a",
    "2",
    "true",
    '{"a": 1}',
    "abc",
)


def compile_(
    interface: Mapping[str, object], argv: Sequence[str], stdin: bool = False
) -> tuple[str, ...]:
    return compile_binding(interface, interface_id=IID, argv=argv, stdin=stdin).command


def refused(
    interface: Mapping[str, object], argv: Sequence[str], reason: RefusalReason
) -> ResolutionFailed:
    with pytest.raises(ResolutionFailed) as caught:
        compile_(interface, argv)
    assert caught.value.code == "dispatcher.resolution_failed"
    assert caught.value.reason == reason, caught.value.message
    return caught.value


def corpus_interface(relative: str, interface_id: str) -> dict[str, object]:
    data = yaml.safe_load((corpus_config("famulus").parent / relative).read_text(encoding="utf-8"))
    interface: dict[str, object] = data["interfaces"][interface_id]
    return interface


SCHEDULE = corpus_interface(
    "src/officina/wakeup/blueprints/cli.yaml", "wakeup.source.cli.interface.explicit-schedule"
)
UPDATE_LIST = corpus_interface(
    "skills/list-manager/_rtx/blueprints/rtx-yaml-store.yaml",
    "list-manager._rtx.source.rtx-yaml-store.interface.update-list",
)
WEATHER = corpus_interface(
    "skills/get-weather/_rtx/blueprints/rtx-weather-client.yaml",
    "get-weather._rtx.source.rtx-weather-client.interface.scripts-weather",
)


# --------------------------------------------------------------------------- #
# D3, D5, D6: values refused before anything else


@pytest.mark.parametrize("interface", [ANYTHING, STRING_ARG, {"not": "bindable"}])
@pytest.mark.parametrize(
    "argv",
    [
        ["ok", "a\x00b"],
        ["\x00"],
        ["lone \ud800 surrogate"],
        ["x" * (MAX_TOKEN_BYTES + 1)],
        ["\u00e9" * (MAX_TOKEN_BYTES // 2 + 1)],
        ["x" * MAX_TOKEN_BYTES] * (MAX_ARGV_BYTES // MAX_TOKEN_BYTES + 1),
        ["x"] * (MAX_ARGV_TOKENS + 1),
    ],
    ids=["nul", "only-nul", "surrogate", "long-token", "long-utf8", "long-total", "many-tokens"],
)
def test_bad_values_are_refused_before_the_binding_is_read(
    interface: Mapping[str, object], argv: list[str]
) -> None:
    """Even a non-bindable interface gets the value refusal: the argv is checked first."""
    error = refused(interface, argv, reason="argv_malformed")
    assert "interface is not process-bindable" not in error.message


def test_values_at_the_caps_are_accepted() -> None:
    at_cap = ["x" * MAX_TOKEN_BYTES] * (MAX_ARGV_BYTES // MAX_TOKEN_BYTES)
    assert compile_(ANYTHING, at_cap) == tuple(at_cap)
    assert compile_(ANYTHING, ["x"] * MAX_ARGV_TOKENS) == ("x",) * MAX_ARGV_TOKENS


def test_blueprint_values_obey_the_same_caps() -> None:
    prefix = {
        "process_binding": {
            "kind": "process",
            "entry": "I",
            "args_prefix": ["a\x00"],
            "patterns": [{}],
        }
    }
    refused(prefix, [], reason="command_malformed")
    refused(one_argument(default="x\x00"), [], reason="command_malformed")


# --------------------------------------------------------------------------- #
# D2, D4: hostile tokens reach the child unchanged, as data


def test_hostile_tokens_pass_through_pattern_mode_byte_for_byte() -> None:
    argv = [token for token in HOSTILE_ARGV_TOKENS if not token.startswith("-") or token == "-"]
    assert compile_(ANYTHING, argv) == tuple(argv)
    after_separator = ["--", *HOSTILE_ARGV_TOKENS]
    assert compile_(ANYTHING, after_separator) == tuple(after_separator)


def test_hostile_tokens_pass_through_argument_mode_as_values() -> None:
    # After "--" again whenever one begins with "-"; the value "--" itself is refused.
    values = [token for token in HOSTILE_ARGV_TOKENS if token != "--"]
    assert compile_(STRING_ARG, ["--", *values]) == ("--", *values)
    refused(STRING_ARG, ["--", *HOSTILE_ARGV_TOKENS], reason="dash_value")


def test_a_flag_shaped_value_cannot_inject_a_flag_pattern_match() -> None:
    """``--date=2026-01-02`` stays one token; a value flag never takes a dash-led value."""
    assert compile_(WEATHER, ["--date=2026-01-02"]) == ("--date=2026-01-02",)
    refused(WEATHER, ["--location", "--date=2026-01-02"], reason="missing_option_value")


# --------------------------------------------------------------------------- #
# D8: ReDoS


@pytest.mark.parametrize(
    "regex",
    [
        r"^[a-z0-9]+(?:-[a-z0-9]+)+$",
        r"^(?:,\d+)*$",
        "^(?:ab)+$",
        "^(?:a{2})+$",
        "^(?:-(?:x[a-z]+))+$",
        r"^[^]a]+-[\]b]+$",
        r"^(?#note)(?s:x.)\w+$",  # lookarounds and (?i) are refused: test_hardening_regex.py
        r"^\w+\s\w+\s\w+$",
        "^.+/.+$",
        "a{0,100}b{0,100}c{0,100}",
        r"^(\d{1,2}-\d{1,2}-\d{2}|\d{4}-\d{2}-\d{2})$",
    ],
)
def test_linear_and_quadratic_patterns_are_accepted(regex: str) -> None:
    assert compile_pattern(regex).pattern == regex


@pytest.mark.parametrize(
    "regex",
    [
        "(a+)+$",
        "(?:-(a)?)+",
        "(?:-(?:x|y)[a-z]*)+",
        "(?:a{1,3})+",
        "(?:-(?:a[b-]*))+",
        "a\x00",
        "^(a|aa)*$",
        r"^(\w+\s?)*$",
        "^(?:x|)+$",
        "^(?:-[a-z-]+)+$",
        r"^a*.*\w+$",
        "^.*a.*b.*c$",
        r"(x)\1",
        "(?P<n>x)(?P=n)",
        "(?(1)a|b)",
        "(?x)(a + )+",
        "a" * 1025,
    ],
)
def test_catastrophic_or_over_long_patterns_are_refused(regex: str) -> None:
    positional = {
        "process_binding": {
            "kind": "process",
            "entry": "I",
            "patterns": [{"positional_patterns": {"0": regex}}],
        }
    }
    # an over-long pattern is never compiled: it never matches (no_pattern)
    never_compiled = len(regex) > MAX_PATTERN_LENGTH
    refused(positional, [], reason="no_pattern" if never_compiled else "regex_refused")
    format_regex = one_argument(
        {"kind": "string", "format": {"regex": {"pattern": regex, "matching": "full"}}}
    )
    refused(format_regex, ["x"], reason="regex_refused")


def test_an_over_long_flag_pattern_is_never_compiled_and_never_matches() -> None:
    interface = {
        "process_binding": {
            "kind": "process",
            "entry": "I",
            "patterns": [{"flag_patterns": {"--v": "(a+)+" * 300}}],
        }
    }
    assert compile_(interface, []) == ()
    refused(interface, ["--v", "a"], reason="no_pattern")


@pytest.mark.parametrize(
    ("regex", "subject"),
    [
        (r"^[a-z0-9]+(?:-[a-z0-9]+)+$", "a-" * 2047 + "!"),
        (r"^(?:,\d+)*$", ",1" * 2047 + "!"),
        ("^.+/.+$", "/" * 4095 + "\n"),
        (r"^\[.+\]$", "[" * 4096),
    ],
)
def test_accepted_patterns_run_on_adversarial_input_at_the_cap(regex: str, subject: str) -> None:
    """Linear or quadratic shapes only: these finish (a hang would fail the suite's timeout)."""
    assert len(subject) <= 4096
    assert compile_pattern(regex).fullmatch(subject) is None


def test_values_over_the_subject_cap_never_reach_a_pattern() -> None:
    interface = {
        "process_binding": {
            "kind": "process",
            "entry": "I",
            "patterns": [{"min_positionals": 1, "positional_patterns": {"0": ".*"}}],
        }
    }
    assert compile_(interface, ["a" * 4096]) == ("a" * 4096,)
    refused(interface, ["a" * 4097], reason="no_pattern")


# --------------------------------------------------------------------------- #
# D1, D9: type confusion and secrets


@pytest.mark.parametrize("value", ["1.0", "true", "+1", "1e0", " 1"])
def test_type_confusion_is_refused_for_integers(value: str) -> None:
    refused(one_argument({"kind": "integer"}), ["--", value], reason="value_type")


def test_a_secret_never_appears_in_the_command_and_is_required_on_stdin() -> None:
    refused(one_argument(sensitivity="secret"), [CANARY], reason="secret_in_argv")
    stdin = {"kind": "stdin", "encoding": "utf-8", "framing": "raw"}
    on_stdin = one_argument(sensitivity="secret", bound=stdin)
    assert compile_(on_stdin, [], stdin=True) == ()
    refused(on_stdin, [], reason="stdin_required")


@pytest.mark.parametrize(
    ("interface", "argv", "reason"),
    [
        (ANYTHING, ["--x", CANARY, "--x"], "duplicate_option"),
        (ANYTHING, [f"-{CANARY}", f"-{CANARY}"], "duplicate_option"),
        (ANYTHING, [f"--{CANARY}={CANARY}"], "switch_with_value"),
        (WEATHER, ["--date", CANARY], "no_pattern"),
        (WEATHER, [CANARY], "no_pattern"),
        (UPDATE_LIST, [CANARY, f"--file={CANARY}"], "switch_with_value"),
        (SCHEDULE, [CANARY, "abc", "5h"], "value_enum"),
        (SCHEDULE, ["claude", "abc", "5h", CANARY], "too_many_positionals"),
        (SCHEDULE, ["claude", "abc", "5h", f"--{CANARY}"], "unknown_option"),
        (SCHEDULE, ["claude", "abc", "5h", f"--delay={CANARY}"], "unknown_option"),
    ],
)
def test_refusal_messages_never_contain_argument_values(
    interface: Mapping[str, object], argv: list[str], reason: RefusalReason
) -> None:
    assert CANARY not in refused(interface, argv, reason=reason).message


# --------------------------------------------------------------------------- #
# Properties


@given(interface=pattern_bindings(), argv=binding_argv(), stdin=st.booleans())
def test_pattern_mode_refuses_only_with_resolution_failed_and_never_rewrites(
    interface: dict[str, object], argv: list[str], stdin: bool
) -> None:
    try:
        compiled = compile_binding(interface, interface_id=IID, argv=argv, stdin=stdin)
    except ResolutionFailed:
        return
    body = interface["process_binding"]
    assert isinstance(body, dict)
    assert compiled.command == (*body.get("args_prefix", []), *argv)
    assert compiled.takes_stdin == stdin
    assert compiled.pattern


@given(interface=pattern_bindings(), argv=binding_argv(), stdin=st.booleans())
def test_the_compilers_safety_net_is_never_needed(
    interface: dict[str, object], argv: list[str], stdin: bool
) -> None:
    """The inner compiler raises only its own refusal: the broad except stays unused."""
    with contextlib.suppress(BindingRefused):
        binding_module._compile(interface, argv, stdin)


@given(data=st.data(), argv=binding_argv(), stdin=st.booleans())
def test_mutated_corpus_bindings_only_ever_refuse_cleanly(
    data: st.DataObject, argv: list[str], stdin: bool
) -> None:
    original = data.draw(st.sampled_from([UPDATE_LIST, WEATHER, SCHEDULE, RICH]))
    mutated = data.draw(nested_mutations(original))
    if original is RICH:
        argv = data.draw(st.lists(st.sampled_from(RICH_TOKENS), max_size=10))
    with contextlib.suppress(BindingRefused):
        binding_module._compile(mutated, argv, stdin)


@given(
    argv=st.lists(
        st.sampled_from(["claude", "codex", "abc", "5h", "--message", "--delay", "--", "-x", "2m"]),
        max_size=8,
    )
)
def test_argument_mode_refuses_only_with_resolution_failed(argv: list[str]) -> None:
    with contextlib.suppress(BindingRefused):
        binding_module._compile(SCHEDULE, argv, stdin=False)


@given(argv=st.lists(st.sampled_from(RICH_TOKENS), max_size=12), stdin=st.booleans())
def test_every_type_kind_refuses_only_with_resolution_failed(argv: list[str], stdin: bool) -> None:
    try:
        compiled = compile_binding(RICH, interface_id=IID, argv=argv, stdin=stdin)
    except ResolutionFailed:
        return
    assert compiled.command[:1] == ("run",)
    assert compiled.command[-3:] == ("--level", "3", "--safe")
    assert compiled.takes_stdin == stdin


def test_the_rich_interface_compiles_deterministically() -> None:
    argv = [
        "2026-01-02T05:00",
        "a_b",
        "c",
        "--on",
        "TRUE",
        "--mode",
        "2",
        "a",
        "--fast",
        "--id",
        "abc",
    ]
    assert compile_(RICH, argv, stdin=True) == (
        "run",
        "2026-01-02T05:00",
        "mid",
        "a_b",
        "c",
        "--count",
        "1",
        "--day",
        "2026-01-02",
        "--fast",
        "--id",
        "abc",
        "--mode",
        "2",
        "a",
        "--on",
        "true",
        "--level",
        "3",
        "--safe",
    )


RECORD = ModuleRecord(
    module_id="get-weather._rtx",
    root=Path("/r"),
    configured_root=Path("/r"),
    version=1,
    data={"authority": {"owns_filesystem": [{"path": r"^\$tmp/.*$", "match": "regex"}]}},
)


@given(data=st.data())
def test_mutated_contracts_give_a_level_or_unavailable_and_audiences_never_fail(
    data: st.DataObject,
) -> None:
    original = data.draw(st.sampled_from([UPDATE_LIST, WEATHER, SCHEDULE]))
    mutated = data.draw(nested_mutations(original))
    mutated_data = data.draw(nested_mutations(RECORD.data))
    assert isinstance(mutated_data, dict)
    module = ModuleRecord(
        module_id=RECORD.module_id,
        root=RECORD.root,
        configured_root=RECORD.configured_root,
        version=1,
        data=mutated_data,
    )
    assert isinstance(mutated, dict)
    with contextlib.suppress(SecurityLevelUnavailable):
        assert derive_level(mutated, module) in {0, 1, 2}
    assert set(output_audiences(mutated).values()) <= {"machine", "human", "both"}


def test_a_pattern_mode_secret_flag_in_argv_is_refused_without_echoing_it() -> None:
    from boring_dispatch.errors import ResolutionFailed
    from boring_dispatch.records import RouteRequest
    from boring_dispatch.repository.repository import Repository
    from kits.cases import corpus_config

    repository = Repository.open(corpus_config("famulus"))
    for argv in (
        ("--client-secret", "TOPSECRET-CANARY"),
        ("--client-secret=TOPSECRET-CANARY",),
    ):
        request = RouteRequest(
            caller="g-calendar", target="g-calendar._rtx.interface.setup-oauth", argv=argv
        )
        with pytest.raises(ResolutionFailed) as caught:
            repository.resolve(request)
        assert "TOPSECRET-CANARY" not in caught.value.message
        assert "--client-secret" in caught.value.message
        assert caught.value.reason == "secret_in_argv"  # kept through the pipeline
