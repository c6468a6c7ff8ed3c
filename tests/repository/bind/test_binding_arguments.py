"""compile_binding in argument mode (BLUEPRINTS-V6 6.3)."""

from __future__ import annotations

import copy
from collections.abc import Mapping

import pytest
import yaml

from boring_dispatch.errors import ResolutionFailed
from boring_dispatch.records import CompiledBinding
from boring_dispatch.repository._shapes import RefusalReason
from boring_dispatch.repository.bind.binding import compile_binding
from kits.cases import corpus_config

IID = "wakeup.interface.explicit-schedule"


def schedule_interface() -> dict[str, object]:
    path = corpus_config("famulus").parent / "src/officina/wakeup/blueprints/cli.yaml"
    source = yaml.safe_load(path.read_text(encoding="utf-8"))
    interface: dict[str, object] = source["interfaces"][
        "wakeup.source.cli.interface.explicit-schedule"
    ]
    return interface


SCHEDULE = schedule_interface()


def arg(
    kind: str = "string", *, required: bool = False, sensitivity: str = "public", **more: object
) -> dict[str, object]:
    body: dict[str, object] = {"description": "d", "required": required, "sensitivity": sensitivity}
    body["type"] = more.pop("type", {"kind": kind})
    body.update(more)
    return body


def iface(
    arguments: Mapping[str, dict[str, object]],
    bindings: Mapping[str, dict[str, object]],
    **binding: object,
) -> dict[str, object]:
    return {
        "contract": {"arguments": dict(arguments)},
        "process_binding": {
            "kind": "process",
            "entry": "Interface",
            "arguments": dict(bindings),
            **binding,
        },
    }


ONE = {"minimum": 1, "maximum": 1}
OPT = {"minimum": 0, "maximum": 1}


def pos(position: int, arity: Mapping[str, object] = ONE) -> dict[str, object]:
    return {"kind": "positional", "position": position, "arity": dict(arity)}


def opt(name: str, arity: Mapping[str, object] = ONE) -> dict[str, object]:
    return {"kind": "option", "name": name, "arity": dict(arity)}


def compile_(interface: Mapping[str, object], *argv: str, stdin: bool = False) -> CompiledBinding:
    return compile_binding(interface, interface_id=IID, argv=argv, stdin=stdin)


def refused(
    interface: Mapping[str, object], *argv: str, stdin: bool = False, reason: RefusalReason
) -> str:
    with pytest.raises(ResolutionFailed) as caught:
        compile_(interface, *argv, stdin=stdin)
    assert caught.value.code == "dispatcher.resolution_failed"
    assert caught.value.reason == reason, caught.value.message
    assert caught.value.message.startswith(f"cannot compile {IID}: ")
    return caught.value.message


def one_value(type_: Mapping[str, object], *argv: str) -> list[str]:
    interface = iface({"v": arg(type=dict(type_))}, {"v": pos(0)})
    return list(compile_(interface, *argv).command)


# --------------------------------------------------------------------------- #
# The observed table of BLUEPRINTS-V6 6.3 (wakeup.interface.explicit-schedule)


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["claude", "abc123", "5h"], ["schedule", "claude", "abc123", "5h", "--delay", "1 minute"]),
        (
            ["codex", "abc", "5h", "--message", "hi there", "--delay", "2m"],
            ["schedule", "codex", "abc", "5h", "--delay", "2m", "--message", "hi there"],
        ),
        (
            ["codex", "abc", "5h", "--message"],
            ["schedule", "codex", "abc", "5h", "--delay", "1 minute", "--message"],
        ),
        (
            ["claude", "abc123", "2026-01-01T05:00", "--delay", "5m"],
            ["schedule", "claude", "abc123", "2026-01-01T05:00", "--delay", "5m"],
        ),
    ],
)
def test_explicit_schedule_compiles_as_observed(argv: list[str], command: list[str]) -> None:
    binding = compile_(SCHEDULE, *argv)
    assert list(binding.command) == command
    assert binding.pattern == ""
    assert binding.takes_stdin is False
    assert binding.entry == "Interface"


@pytest.mark.parametrize(
    ("argv", "stdin", "reason"),
    [
        (["gemini", "abc", "5h"], False, "value_enum"),
        (["--delay", "2m", "codex", "abc", "5h"], False, "extra_value"),
        (["codex", "abc", "5h", "--caller-skill", "x"], False, "unknown_option"),
        (["codex", "abc", "5h"], True, "stdin_refused"),
    ],
)
def test_explicit_schedule_refusals_as_observed(
    argv: list[str], stdin: bool, reason: RefusalReason
) -> None:
    refused(SCHEDULE, *argv, stdin=stdin, reason=reason)


def test_explicit_schedule_refusal_messages_name_the_reason() -> None:
    assert refused(SCHEDULE, "gemini", "abc", "5h", reason="value_enum").endswith(
        "argument provider: value is not in enum"
    )
    assert "unexpected trailing value" in refused(
        SCHEDULE, "--delay", "2m", "codex", "abc", "5h", reason="extra_value"
    )
    assert refused(
        SCHEDULE, "codex", "abc", "5h", "--caller-skill", "x", reason="unknown_option"
    ).endswith("unknown option --caller-skill (a dispatcher option)")
    assert refused(SCHEDULE, "codex", "abc", "5h", stdin=True, reason="stdin_refused").endswith(
        "interface does not declare stdin"
    )


def test_a_missing_required_positional_is_refused() -> None:
    assert refused(SCHEDULE, "claude", "abc", reason="missing_argument").endswith(
        "missing required argument provider"
    )


def test_the_route_smoke_token_is_an_unknown_option_in_argument_mode() -> None:
    refused(SCHEDULE, "--route-smoke", reason="unknown_option")


# --------------------------------------------------------------------------- #
# Layout validation


def test_bindings_must_cover_the_contract_exactly() -> None:
    refused(iface({"a": arg(), "b": arg()}, {"a": pos(0)}), "x", reason="binding_malformed")
    refused(iface({"a": arg()}, {"a": pos(0), "b": pos(1)}), "x", reason="binding_malformed")


@pytest.mark.parametrize(
    "binding",
    [
        {"kind": "positional", "position": -1, "arity": ONE},
        {"kind": "positional", "position": True, "arity": ONE},
        {"kind": "positional", "position": 0},
        {"kind": "positional", "position": 0, "arity": {"minimum": 2, "maximum": 1}},
        {"kind": "positional", "position": 0, "arity": {"minimum": 0, "maximum": 0}},
        {"kind": "positional", "position": 0, "arity": {"minimum": -1, "maximum": 1}},
        {"kind": "positional", "position": 0, "arity": {"minimum": 1}},
        {"kind": "option", "name": "-x", "arity": ONE},
        {"kind": "option", "name": "--x=1", "arity": ONE},
        {"kind": "option", "name": "--stdin", "arity": ONE},
        {"kind": "option", "name": "--caller-skill", "arity": ONE},
        {"kind": "option", "name": "--dry-run", "arity": ONE},
        {"kind": "option", "name": "--config", "arity": ONE},
        {"kind": "option", "name": "--x"},
        {"kind": "switch", "name": "--x"},
        {"kind": "stdin", "encoding": "latin-1", "framing": "raw"},
        {"kind": "stdin", "encoding": "utf-8", "framing": "lines"},
        {"kind": "fixed"},
        {"kind": ["positional"]},
    ],
)
def test_a_malformed_binding_is_refused(binding: dict[str, object]) -> None:
    refused(iface({"a": arg()}, {"a": binding}), reason="binding_malformed")


def test_positions_and_names_must_be_unique_across_fixed_and_caller_bindings() -> None:
    fixed_pos = [{"kind": "positional", "position": 0, "value": "f", "type": {"kind": "string"}}]
    refused(iface({"a": arg()}, {"a": pos(0)}, fixed=fixed_pos), "x", reason="binding_malformed")
    refused(
        iface({"a": arg(), "b": arg()}, {"a": opt("--x"), "b": opt("--x")}),
        reason="binding_malformed",
    )
    refused(
        iface({"a": arg()}, {"a": opt("--x")}, fixed=[{"kind": "switch", "name": "--x"}]),
        reason="binding_malformed",
    )


@pytest.mark.parametrize(
    "contract",
    [
        {
            "description": "d",
            "required": "yes",
            "sensitivity": "public",
            "type": {"kind": "string"},
        },
        {"description": "d", "required": False, "sensitivity": "open", "type": {"kind": "string"}},
        {"description": "d", "required": False, "sensitivity": "public"},
        {"description": "d", "required": False, "sensitivity": "public", "type": {"kind": "blob"}},
        {
            "description": "d",
            "required": True,
            "sensitivity": "public",
            "type": {"kind": "string"},
            "default": "x",
        },
    ],
)
def test_a_malformed_contract_argument_is_refused(contract: dict[str, object]) -> None:
    refused(iface({"a": contract}, {"a": pos(0)}), "x", reason="binding_malformed")


@pytest.mark.parametrize(
    "contract_arguments",
    [[], "x", {"a": None}, {1: arg()}],
)
def test_contract_arguments_must_map_ids_to_mappings(contract_arguments: object) -> None:
    interface = {
        "contract": {"arguments": contract_arguments},
        "process_binding": {"kind": "process", "entry": "I", "arguments": {}},
    }
    refused(interface, reason="binding_malformed")


def test_an_interface_without_arguments_compiles_to_its_prefix() -> None:
    interface = {"process_binding": {"kind": "process", "entry": "I", "args_prefix": ["go"]}}
    assert compile_(interface).command == ("go",)
    refused(interface, "x", reason="too_many_positionals")


def test_an_unbounded_positional_must_come_last() -> None:
    many = {"minimum": 0, "maximum": None}
    refused(
        iface({"a": arg(), "b": arg()}, {"a": pos(0, many), "b": pos(1)}),
        reason="binding_malformed",
    )
    fixed = [{"kind": "positional", "position": 5, "value": "f", "type": {"kind": "string"}}]
    refused(iface({"a": arg()}, {"a": pos(0, many)}, fixed=fixed), reason="binding_malformed")
    assert compile_(
        iface({"a": arg(), "b": arg()}, {"a": pos(0), "b": pos(1, many)}), "x", "y", "z"
    ).command == (
        "x",
        "y",
        "z",
    )


def test_at_most_one_stdin_argument() -> None:
    stdin: dict[str, object] = {"kind": "stdin", "encoding": "utf-8", "framing": "raw"}
    refused(
        iface({"a": arg(), "b": arg()}, {"a": stdin, "b": dict(stdin)}), reason="binding_malformed"
    )


# --------------------------------------------------------------------------- #
# Secrets must travel on stdin


@pytest.mark.parametrize(
    "contract",
    [
        arg(sensitivity="secret"),
        arg(sensitivity="credential"),
        arg(type={"kind": "string", "sensitivity": "secret"}),
        arg(type={"kind": "list", "element_type": {"kind": "string", "sensitivity": "credential"}}),
        arg(
            type={
                "kind": "file",
                "syntax": "literal",
                "relative_to": "caller-cwd",
                "must_exist": True,
                "access": "read",
                "content_type": {"kind": "string", "sensitivity": "secret"},
            }
        ),
    ],
)
def test_a_secret_argument_not_bound_as_stdin_is_refused(contract: dict[str, object]) -> None:
    refused(
        iface({"token": contract}, {"token": opt("--token")}),
        "--token",
        "hunter2",
        reason="secret_in_argv",
    )
    refused(iface({"token": contract}, {"token": pos(0)}), "hunter2", reason="secret_in_argv")


def test_a_secret_argument_bound_as_stdin_compiles_and_never_reaches_argv() -> None:
    interface = iface(
        {"token": arg(sensitivity="secret", required=True), "name": arg()},
        {"token": {"kind": "stdin", "encoding": "utf-8", "framing": "text"}, "name": pos(0)},
    )
    binding = compile_(interface, "n", stdin=True)
    assert binding.command == ("n",)
    assert binding.takes_stdin is True
    assert refused(interface, "n", reason="stdin_required").endswith("token requires --stdin")


def test_a_fixed_value_cannot_be_secret() -> None:
    fixed = [
        {
            "kind": "option",
            "name": "--key",
            "value": "k",
            "type": {"kind": "string", "sensitivity": "secret"},
        }
    ]
    refused(iface({}, {}, fixed=fixed), reason="secret_in_argv")


def test_an_optional_stdin_argument_follows_the_request() -> None:
    interface = iface(
        {"body": arg()}, {"body": {"kind": "stdin", "encoding": "utf-8", "framing": "raw"}}
    )
    assert compile_(interface).takes_stdin is False
    assert compile_(interface, stdin=True).takes_stdin is True


# --------------------------------------------------------------------------- #
# Tokens, positionals, options


def test_tokens_after_double_dash_are_positional() -> None:
    interface = iface(
        {"a": arg(), "b": arg(), "m": arg()}, {"a": pos(0), "b": pos(1), "m": opt("--m", OPT)}
    )
    # A dash-led positional: the named arguments first, then "--" (SECURITY D2).
    assert compile_(interface, "x", "--m", "v", "--", "--m").command == (
        "--m",
        "v",
        "--",
        "x",
        "--m",
    )


def test_single_dash_tokens_are_positional() -> None:
    interface = iface({"a": arg()}, {"a": pos(0)})
    assert compile_(interface, "-x").command == ("--", "-x")


def test_positionals_fill_greedily_leaving_later_minimums() -> None:
    many = {"minimum": 1, "maximum": None}
    interface = iface(
        {"a": arg(required=True), "b": arg(), "c": arg()},
        {"a": pos(0, {"minimum": 1, "maximum": 2}), "b": pos(1, OPT), "c": pos(2, many)},
    )
    assert compile_(interface, "1", "2", "3", "4", "5").command == ("1", "2", "3", "4", "5")
    assert compile_(interface, "1", "2").command == ("1", "2")
    # one token: c keeps its minimum, so a gets none and is missing
    assert refused(interface, "1", reason="missing_argument").endswith(
        "missing required argument a"
    )
    assert "unexpected trailing value" in refused(
        iface({"a": arg()}, {"a": pos(0)}), "1", "2", reason="too_many_positionals"
    )


def test_an_option_takes_values_up_to_its_maximum_or_the_next_name() -> None:
    interface = iface(
        {"tags": arg(), "flag": arg(type={"kind": "flag"})},
        {
            "tags": opt("--tags", {"minimum": 1, "maximum": None}),
            "flag": {"kind": "switch", "name": "--on"},
        },
    )
    assert compile_(interface, "--tags", "a", "b", "c", "--on").command == (
        "--on",
        "--tags",
        "a",
        "b",
        "c",
    )
    refused(
        interface, "--tags", "a", "-b", "c", reason="dash_value"
    )  # no form keeps "-b" one of several values
    assert refused(interface, "--tags", reason="missing_option_value").endswith(
        "missing option value for --tags"
    )
    refused(interface, "--tags", "a", "--off", reason="unknown_option")
    refused(interface, "--on", "x", reason="extra_value")


def test_a_name_may_appear_only_once() -> None:
    interface = iface({"m": arg()}, {"m": opt("--m")})
    assert refused(interface, "--m", "a", "--m", "b", reason="duplicate_option").endswith(
        "option --m supplied more than once"
    )


def test_a_fixed_name_cannot_be_supplied_by_the_caller() -> None:
    fixed = [{"kind": "switch", "name": "--safe"}]
    interface = iface({"m": arg()}, {"m": opt("--m", OPT)}, fixed=fixed)
    assert refused(interface, "--safe", reason="fixed_override").endswith(
        "caller cannot override fixed option --safe"
    )
    refused(interface, "--m", "--safe", reason="fixed_override")


def test_option_values_with_an_equals_sign_are_unknown_options() -> None:
    interface = iface({"m": arg()}, {"m": opt("--m")})
    message = refused(interface, "--m=secret-value", reason="unknown_option")
    assert "secret-value" not in message


# --------------------------------------------------------------------------- #
# Emission order


def test_emission_order_is_prefix_positionals_caller_named_by_id_then_fixed_by_name() -> None:
    fixed = [
        {"kind": "option", "name": "--zeta", "value": 3, "type": {"kind": "integer"}},
        {"kind": "switch", "name": "--alpha"},
        {"kind": "positional", "position": 1, "value": "mid", "type": {"kind": "string"}},
    ]
    interface = iface(
        {
            "b-id": arg(),
            "a-id": arg(),
            "first": arg(),
            "last": arg(),
            "on": arg(type={"kind": "boolean"}),
        },
        {
            "b-id": opt("--aaa"),
            "a-id": opt("--zzz"),
            "first": pos(0),
            "last": pos(2),
            "on": {"kind": "switch", "name": "--on"},
        },
        args_prefix=["run"],
        fixed=fixed,
    )
    command = compile_(interface, "p0", "p2", "--aaa", "B", "--zzz", "A")
    assert command.command == (
        "run",
        "p0",
        "mid",
        "p2",
        "--zzz",
        "A",
        "--aaa",
        "B",
        "--alpha",
        "--zeta",
        "3",
    )


def test_a_list_default_of_a_repeatable_option_expands() -> None:
    interface = iface(
        {"n": arg(type={"kind": "integer"}, default=[1, 2])},
        {"n": opt("--n", {"minimum": 1, "maximum": None})},
    )
    assert compile_(interface).command == ("--n", "1", "2")


@pytest.mark.parametrize(
    "fixed",
    [
        "switch",
        {"kind": "stdin", "encoding": "utf-8", "framing": "raw"},
        {"kind": "option", "name": "--x", "type": {"kind": "string"}},
        {"kind": "option", "name": "--x", "value": "1.0", "type": {"kind": "integer"}},
        {"kind": "option", "name": "--x", "value": "v"},
        {"kind": "positional", "value": "v", "type": {"kind": "string"}},
        {"kind": "switch", "name": "--stdin"},
    ],
)
def test_a_malformed_fixed_binding_is_refused(fixed: object) -> None:
    refused(iface({}, {}, fixed=[fixed]), reason="binding_malformed")


@pytest.mark.parametrize("fixed", [{}, "--safe", None])
def test_fixed_must_be_a_list(fixed: object) -> None:
    refused(iface({}, {}, fixed=fixed), reason="binding_malformed")


def test_lists_expand_and_booleans_are_lowercase_words() -> None:
    interface = iface(
        {
            "n": arg(type={"kind": "list", "element_type": {"kind": "integer"}}),
            "b": arg(type={"kind": "boolean"}),
        },
        {"n": opt("--n", {"minimum": 0, "maximum": None}), "b": opt("--b")},
    )
    assert compile_(interface, "--n", "1", "2", "--b", "TRUE").command == (
        "--b",
        "true",
        "--n",
        "1",
        "2",
    )
    assert compile_(interface, "--n").command == ("--n",)


def test_defaults_are_typed_and_emitted_as_if_supplied() -> None:
    interface = iface(
        {
            "count": arg(type={"kind": "integer"}, default=3),
            "mode": arg(
                type={"kind": "enum", "values": [{"value": "fast", "description": "d"}]},
                default="fast",
            ),
            "verbose": arg(type={"kind": "flag"}, default=True),
            "quiet": arg(type={"kind": "flag"}),
        },
        {
            "count": opt("--count"),
            "mode": pos(0, OPT),
            "verbose": {"kind": "switch", "name": "--verbose"},
            "quiet": {"kind": "switch", "name": "--quiet"},
        },
    )
    assert compile_(interface).command == ("fast", "--count", "3", "--verbose")


@pytest.mark.parametrize(
    ("type_", "default"),
    [
        ({"kind": "integer"}, True),
        ({"kind": "integer"}, 1.0),
        ({"kind": "integer"}, "1.0"),
        ({"kind": "string"}, 5),
        ({"kind": "flag"}, "true"),
        ({"kind": "enum", "values": [{"value": "a", "description": "d"}]}, "b"),
        ({"kind": "list", "element_type": {"kind": "string"}}, "x"),
        ({"kind": "integer"}, [1, "two"]),
    ],
)
def test_an_ill_typed_default_is_refused(type_: dict[str, object], default: object) -> None:
    refused(
        iface({"a": arg(type=type_, default=default)}, {"a": opt("--a")}),
        reason="binding_malformed",
    )


# --------------------------------------------------------------------------- #
# Typing


@pytest.mark.parametrize("text", ["0", "7", "-12", "007", "123456789012345678901234567890"])
def test_integers_are_optional_minus_and_ascii_digits(text: str) -> None:
    separator = ["--"] if text.startswith("-") else []
    assert one_value({"kind": "integer"}, text) == [*separator, str(int(text))]


@pytest.mark.parametrize(
    "text", ["1.0", "+1", " 1", "1 ", "1_000", "\u0661", "0x10", "1e3", "", "-", "true", "1" * 65]
)
def test_integers_refuse_everything_else(text: str) -> None:
    refused(
        iface({"v": arg(type={"kind": "integer"})}, {"v": pos(0)}), "--", text, reason="value_type"
    )


@pytest.mark.parametrize(
    ("text", "out"), [("1", "1"), ("-2.5", "-2.5"), ("1e3", "1000.0"), ("0.10", "0.1")]
)
def test_numbers_accept_plain_decimal_notation_and_integers_stay_integers(
    text: str, out: str
) -> None:
    separator = ["--"] if out.startswith("-") else []
    assert one_value({"kind": "number"}, "--", text) == [*separator, out]


@pytest.mark.parametrize(
    "text", ["nan", "inf", "-Infinity", "1e999", ".5", "1.", "+1", "1,5", "0x1"]
)
def test_numbers_refuse_non_finite_and_other_notations(text: str) -> None:
    refused(
        iface({"v": arg(type={"kind": "number"})}, {"v": pos(0)}), "--", text, reason="value_type"
    )


def test_numeric_bounds_are_checked() -> None:
    interface = iface(
        {"v": arg(type={"kind": "integer", "minimum": 1, "maximum": 3})}, {"v": pos(0)}
    )
    assert compile_(interface, "3").command == ("3",)
    refused(interface, "0", reason="value_range")
    refused(interface, "4", reason="value_range")
    refused(
        iface({"v": arg(type={"kind": "integer", "minimum": "1"})}, {"v": pos(0)}),
        "3",
        reason="binding_malformed",
    )
    refused(
        iface({"v": arg(type={"kind": "integer", "minimum": True})}, {"v": pos(0)}),
        "3",
        reason="binding_malformed",
    )


@pytest.mark.parametrize(("text", "out"), [("true", "true"), ("False", "false"), ("TRUE", "true")])
def test_booleans_accept_true_and_false_in_any_case(text: str, out: str) -> None:
    assert one_value({"kind": "boolean"}, text) == [out]


@pytest.mark.parametrize("text", ["yes", "1", "on", "t", ""])
def test_booleans_refuse_other_words(text: str) -> None:
    refused(iface({"v": arg(type={"kind": "boolean"})}, {"v": pos(0)}), text, reason="value_type")


def test_a_flag_typed_value_from_argv_is_refused() -> None:
    refused(iface({"v": arg(type={"kind": "flag"})}, {"v": pos(0)}), "true", reason="value_type")


def test_enums_compare_text_and_return_the_declared_value() -> None:
    type_ = {
        "kind": "enum",
        "values": [{"value": 5, "description": "d"}, {"value": True, "description": "d"}],
    }
    assert one_value(type_, "5") == ["5"]
    assert one_value(type_, "true") == ["true"]
    refused(iface({"v": arg(type=type_)}, {"v": pos(0)}), "True", reason="value_enum")
    assert one_value({"kind": "enum", "values_from_helper": {"x": 1}}, "anything") == ["anything"]


@pytest.mark.parametrize(
    "values", ["a", [None], [{"description": "no value"}], [{"value": None, "description": "d"}]]
)
def test_malformed_enum_values_are_refused(values: object) -> None:
    refused(
        iface({"v": arg(type={"kind": "enum", "values": values})}, {"v": pos(0)}),
        "a",
        reason="binding_malformed",
    )


@pytest.mark.parametrize(
    ("fmt", "good", "bad"),
    [
        ({"named": "identifier"}, "snake_case", "kebab-case"),
        ({"named": "json"}, '{"a": [1, 2]}', "{a: 1}"),
        ({"named": "json"}, "[1]", "NaN"),
        ({"named": "yaml"}, "a: [1, 2]", "a: [1"),
        ({"named": "yaml"}, "plain", "a: &x 1\nb: *x"),
        ({"named": "email"}, "me@example.org", "me@example"),
        ({"named": "uri"}, "https://example.org/x", "example.org/x"),
        ({"named": "uri"}, "mailto:me@example.org", "http://[::1"),
        (
            {"named": "uuid"},
            "12345678-1234-5678-1234-567812345678",
            "12345678123456781234567812345678",
        ),
        ({"named": "literal"}, "anything at all", None),
        ({"template": "id-{value}"}, "anything", None),
        ({"regex": {"pattern": "[a-z]+", "matching": "full", "dialect": "python"}}, "abc", "abc1"),
        (
            {"regex": {"pattern": "[a-z]+", "matching": "prefix", "dialect": "python"}},
            "abc1",
            "1abc",
        ),
    ],
)
def test_string_formats(fmt: dict[str, object], good: str, bad: str | None) -> None:
    type_ = {"kind": "string", "format": fmt}
    assert one_value(type_, good) == [good]
    if bad is not None:
        refused(iface({"v": arg(type=type_)}, {"v": pos(0)}), bad, reason="value_format")


@pytest.mark.parametrize(
    ("fmt", "reason"),
    [
        ({"named": "xml"}, "binding_malformed"),
        ({"named": ["json"]}, "binding_malformed"),
        ({"template": "no placeholder"}, "binding_malformed"),
        ({"regex": {"pattern": "("}}, "regex_refused"),
        ({"regex": {"pattern": "(a+)+"}}, "regex_refused"),
        ({"regex": "x"}, "binding_malformed"),
        ({"named": "json", "template": "{value}"}, "binding_malformed"),
        ({}, "binding_malformed"),
        ("json", "binding_malformed"),
    ],
)
def test_malformed_or_unsafe_formats_are_refused_before_any_value(
    fmt: object, reason: RefusalReason
) -> None:
    refused(
        iface({"v": arg(type={"kind": "string", "format": fmt}, default="x")}, {"v": pos(0, OPT)}),
        reason=reason,
    )


def test_a_format_regex_is_never_run_on_text_longer_than_4096_characters() -> None:
    type_ = {"kind": "string", "format": {"regex": {"pattern": ".*", "matching": "full"}}}
    assert one_value(type_, "a" * 4096) == ["a" * 4096]
    refused(iface({"v": arg(type=type_)}, {"v": pos(0)}), "a" * 4097, reason="value_format")


def test_dates_and_datetimes_parse_with_a_declared_format() -> None:
    assert one_value({"kind": "date", "date_formats": ["iso-8601"]}, "2026-01-02") == ["2026-01-02"]
    assert one_value({"kind": "date", "date_formats": ["%d/%m/%Y", "iso-8601"]}, "02/01/2026") == [
        "02/01/2026"
    ]
    refused(
        iface({"v": arg(type={"kind": "date", "date_formats": ["iso-8601"]})}, {"v": pos(0)}),
        "2026-13-01",
        reason="value_format",
    )
    aware = {"kind": "datetime", "date_formats": ["iso-8601"], "timezone": "required"}
    assert one_value(aware, "2026-01-02T05:00+01:00") == ["2026-01-02T05:00+01:00"]
    refused(iface({"v": arg(type=aware)}, {"v": pos(0)}), "2026-01-02T05:00", reason="value_format")
    refused(
        iface({"v": arg(type={"kind": "date", "date_formats": ["%Y"]})}, {"v": pos(0)}),
        "2" * 65,
        reason="value_format",
    )
    naive = {"kind": "datetime", "date_formats": ["iso-8601"], "timezone": "forbidden"}
    refused(
        iface({"v": arg(type=naive)}, {"v": pos(0)}),
        "2026-01-02T05:00+01:00",
        reason="value_format",
    )


@pytest.mark.parametrize(
    "type_",
    [
        {"kind": "date"},
        {"kind": "date", "date_formats": []},
        {"kind": "date", "date_formats": [1]},
        {"kind": "date", "date_formats": ["%Y %Y"]},
        {"kind": "datetime", "date_formats": ["iso-8601"], "timezone": "sometimes"},
        {"kind": "list"},
        {"kind": "list", "element_type": {"kind": "nope"}},
    ],
)
def test_malformed_types_are_refused(type_: dict[str, object]) -> None:
    refused(
        iface({"v": arg(type=type_, default=[])}, {"v": pos(0, OPT)}), reason="binding_malformed"
    )


def test_path_like_kinds_are_strings() -> None:
    for kind in ("path", "file", "dir", "duration"):
        assert one_value({"kind": kind}, "--", "-weird name") == ["--", "-weird name"]


def test_deeply_nested_list_types_are_refused() -> None:
    type_: dict[str, object] = {"kind": "string"}
    for _ in range(12):
        type_ = {"kind": "list", "element_type": type_}
    refused(iface({"v": arg(type=type_)}, {"v": pos(0)}), "x", reason="binding_malformed")


def test_the_interface_is_not_modified() -> None:
    before = copy.deepcopy(SCHEDULE)
    compile_(SCHEDULE, "claude", "abc", "5h")
    assert before == SCHEDULE
