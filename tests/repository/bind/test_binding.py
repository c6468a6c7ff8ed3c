"""compile_binding in pattern mode, mode selection, python_target and secret_arguments."""

from __future__ import annotations

import keyword
import re
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import example, given

from boring_dispatch.errors import ResolutionFailed
from boring_dispatch.records import CompiledBinding, ModuleRecord, PythonTarget, SourceRecord
from boring_dispatch.repository import ids
from boring_dispatch.repository._shapes import RefusalReason
from boring_dispatch.repository.bind import binding
from boring_dispatch.repository.bind.binding import compile_binding, python_target, secret_arguments
from kits.regex_twins import MANY, texts_near

IID = "demo._rtx.interface.run"


def iface(*patterns: Mapping[str, object], **binding: object) -> dict[str, object]:
    body: dict[str, object] = {"kind": "process", "entry": "Interface", **binding}
    if patterns:
        body["patterns"] = [dict(pattern) for pattern in patterns]
    return {"version": 1, "process_binding": body}


def compile_(interface: dict[str, object], *argv: str, stdin: bool = False) -> CompiledBinding:
    return compile_binding(interface, interface_id=IID, argv=argv, stdin=stdin)


def refused(
    interface: dict[str, object], *argv: str, stdin: bool = False, reason: RefusalReason
) -> str:
    with pytest.raises(ResolutionFailed) as caught:
        compile_(interface, *argv, stdin=stdin)
    assert caught.value.code == "dispatcher.resolution_failed"
    assert caught.value.reason == reason, caught.value.message
    assert caught.value.message.startswith(f"cannot compile {IID}: ")
    return caught.value.message


# --------------------------------------------------------------------------- #
# Mode selection (6.1)


@pytest.mark.parametrize(
    "interface",
    [
        {"version": 1},
        {"process_binding": None},
        {"process_binding": {"kind": "python", "entry": "X", "patterns": [{}]}},
        {"process_binding": ["kind", "process"]},
        {"process_binding": {"entry": "X", "patterns": [{}]}},
    ],
)
def test_an_interface_without_a_process_binding_is_not_process_bindable(
    interface: dict[str, object],
) -> None:
    assert refused(interface, reason="not_bindable").endswith("interface is not process-bindable")


@pytest.mark.parametrize("interface", [[], "process", None])
def test_an_interface_that_is_not_a_mapping_is_refused(interface: object) -> None:
    with pytest.raises(ResolutionFailed) as caught:
        compile_binding(interface, interface_id=IID, argv=(), stdin=False)  # type: ignore[arg-type]
    assert caught.value.reason == "binding_malformed"


def test_the_refusal_names_the_terminal_module_of_the_requested_export() -> None:
    with pytest.raises(ResolutionFailed) as caught:
        compile_({"version": 1})
    assert caught.value.target_module_id == "demo._rtx"
    assert caught.value.reason == "not_bindable"


def test_route_smoke_is_matched_like_any_other_token() -> None:
    """ARCHITECTURE 3.4: upstream's ``--route-smoke`` shortcut does not exist."""
    interface = iface({"min_positionals": 1}, args_prefix=["read"])
    refused(interface, "--route-smoke", reason="no_pattern")
    smoke_allowed = iface({"allowed_flags": ["--route-smoke"]})
    assert compile_(smoke_allowed, "--route-smoke").command == ("--route-smoke",)


def test_patterns_cannot_mix_with_explicit_bindings() -> None:
    refused(iface({}, arguments={"a": {"kind": "positional"}}), reason="binding_malformed")
    refused(iface({}, fixed=[{"kind": "switch", "name": "--x"}]), reason="binding_malformed")
    assert compile_(iface({}, arguments={}, fixed=[])).command == ()


@pytest.mark.parametrize(
    "binding",
    [
        {"kind": "process", "entry": "", "patterns": [{}]},
        {"kind": "process", "entry": 3, "patterns": [{}]},
        {"kind": "process", "patterns": [{}]},
        {"kind": "process", "entry": "I", "patterns": [{}], "args_prefix": "read"},
        {"kind": "process", "entry": "I", "patterns": [{}], "args_prefix": [""]},
        {"kind": "process", "entry": "I", "patterns": [{}], "args_prefix": [1]},
        {"kind": "process", "entry": "I", "patterns": [{}], "unknown": 1},
        {"kind": "process", "entry": "I", "patterns": []},
        {"kind": "process", "entry": "I", "patterns": {}},
        {"kind": "process", "entry": "I", "patterns": [[]]},
    ],
)
def test_a_malformed_binding_is_refused(binding: dict[str, object]) -> None:
    refused({"process_binding": binding}, reason="binding_malformed")


def test_transport_descriptions_are_accepted_and_ignored() -> None:
    interface = iface({}, outputs=[1], outcomes={}, cancellation="x", stop=None)
    assert compile_(interface).entry == "Interface"


# --------------------------------------------------------------------------- #
# Tokenising (6.2 step 1)


VALUE = {"flag_patterns": {"--date": r"^\d{4}$"}, "allow_extra_positionals": True}


def test_the_command_is_the_prefix_plus_the_argv_unchanged() -> None:
    interface = iface(VALUE, args_prefix=["read", "x"])
    argv = ("a", "--date=2026", "b", "--date2", "-D", "--", "--date", "-")
    assert compile_(interface, *argv).command == ("read", "x", *argv)


def test_a_repeated_flag_is_a_hard_error() -> None:
    assert refused(
        iface(VALUE), "--date", "2026", "--date=2027", reason="duplicate_option"
    ).endswith("duplicate flag --date")
    refused(iface({"allow_extra_positionals": True}), "-x", "-x", reason="duplicate_option")


def test_a_repeated_undeclared_flag_is_not_echoed() -> None:
    message = refused(
        iface({"allow_extra_positionals": True}), "-hunter2", "-hunter2", reason="duplicate_option"
    )
    assert "hunter2" not in message


@pytest.mark.parametrize(
    "argv",
    [("--date",), ("--date=",), ("--date", "--"), ("--date", "-x"), ("--date", "--other")],
)
def test_a_value_flag_without_a_value_is_a_hard_error(argv: tuple[str, ...]) -> None:
    assert refused(iface(VALUE), *argv, reason="missing_option_value").endswith(
        "flag --date requires a value"
    )


def test_a_lone_dash_is_a_value_and_an_empty_next_token_is_a_value() -> None:
    interface = iface({"flag_patterns": {"--f": r"-|"}})
    assert compile_(interface, "--f", "-").command == ("--f", "-")
    assert compile_(interface, "--f", "").command == ("--f", "")


def test_a_switch_with_an_inline_value_is_a_hard_error() -> None:
    assert refused(iface({}), "--verbose=1", reason="switch_with_value").endswith(
        "switch (an undeclared flag) does not take a value"
    )
    assert refused(iface({"allowed_flags": ["--v"]}), "--v=", reason="switch_with_value").endswith(
        "switch --v does not take a value"
    )


def test_a_tokenising_error_in_any_pattern_refuses_even_if_another_would_match() -> None:
    """A9: the second pattern treats --file as a switch, so --file=p is a hard error."""
    file_mode = {"name": "file", "flag_patterns": {"--file": ".+"}, "required_flags": ["--file"]}
    batch = {"name": "batch", "forbidden_flags": ["--file"]}
    refused(iface(file_mode, batch), "--file=p", reason="switch_with_value")
    assert compile_(iface(file_mode, batch), "--file", "p").pattern == "file"


def test_negative_numbers_are_flag_tokens() -> None:
    interface = iface({"min_positionals": 1})
    refused(interface, "-5", reason="no_pattern")
    assert compile_(interface, "--", "-5").command == ("--", "-5")


def test_after_double_dash_every_token_is_positional() -> None:
    interface = iface({"min_positionals": 2, "allowed_flags": []})
    assert compile_(interface, "--", "--x", "--x=1").command == ("--", "--x", "--x=1")


# --------------------------------------------------------------------------- #
# stdin, counts and flag sets (6.2 steps 2-4)


def test_stdin_needs_a_pattern_that_allows_it_but_is_never_required() -> None:
    refused(iface({}), stdin=True, reason="no_pattern")
    allows = iface({"allow_stdin": True})
    assert compile_(allows, stdin=True).takes_stdin is True
    assert compile_(allows).takes_stdin is False


@pytest.mark.parametrize(
    ("pattern", "accepted", "rejected"),
    [
        ({}, [0], [1, 2]),
        ({"min_positionals": 2}, [2], [0, 1, 3]),
        ({"min_positionals": 1, "allow_extra_positionals": True}, [1, 2, 5], [0]),
        ({"min_positionals": 1, "max_positionals": 3}, [1, 2, 3], [0, 4]),
        ({"max_positionals": 0}, [0], [1]),
        ({"max_positionals": 2, "allow_extra_positionals": False}, [0, 1, 2], [3]),
    ],
)
def test_positional_counts(
    pattern: dict[str, object], accepted: list[int], rejected: list[int]
) -> None:
    for count in accepted:
        assert compile_(iface(pattern), *["p"] * count).pattern == "pattern_0"
    for count in rejected:
        refused(iface(pattern), *["p"] * count, reason="no_pattern")


@pytest.mark.parametrize(
    "pattern",
    [
        {"min_positionals": -1},
        {"min_positionals": True},
        {"min_positionals": 1.0},
        {"min_positionals": "1"},
        {"min_positionals": 2, "max_positionals": 1},
        {"max_positionals": None},
        {"max_positionals": False},
        {"allow_extra_positionals": "yes"},
        {"allow_stdin": 1},
        {"name": ""},
        {"name": 7},
        {"required_flags": "--x"},
        {"required_flags": [""]},
        {"allowed_flags": [None]},
        {"forbidden_flags": ["x"]},
        {"allowed_flags": ["--x=1"]},
        {"flag_patterns": ["--x"]},
        {"flag_patterns": {"--x": 1}},
        {"flag_patterns": {"x": ".*"}},
        {"positional_patterns": {"a": ".*"}},
        {"positional_patterns": {"-1": ".*"}},
        {"positional_patterns": {" 1": ".*"}},
        {"positional_patterns": {True: ".*"}},
        {"positional_patterns": {"0": None}},
        {"positional_patterns": [".*"]},
        {"alowed_flags": []},
    ],
)
def test_a_malformed_pattern_is_a_hard_error_even_when_another_pattern_matches(
    pattern: dict[str, object],
) -> None:
    refused(iface({"max_positionals": 5}, pattern), reason="binding_malformed")


def test_required_forbidden_and_allowed_flags() -> None:
    pattern = {
        "required_flags": ["--a"],
        "forbidden_flags": ["--b"],
        "allowed_flags": ["--a", "-c"],
    }
    assert compile_(iface(pattern), "--a", "-c").pattern == "pattern_0"
    refused(iface(pattern), reason="no_pattern")
    refused(iface(pattern), "--a", "--b", reason="no_pattern")
    refused(iface(pattern), "--a", "--d", reason="no_pattern")


def test_an_empty_allowed_flags_list_allows_no_flag_while_an_absent_one_allows_any() -> None:
    refused(iface({"allowed_flags": []}), "--x", reason="no_pattern")
    assert compile_(iface({}), "--x", "-y").command == ("--x", "-y")


# --------------------------------------------------------------------------- #
# Regexes (6.2 steps 5-6)


def test_positional_patterns_anchor_at_the_start_only() -> None:
    interface = iface({"min_positionals": 1, "positional_patterns": {"0": "lists/"}})
    assert compile_(interface, "lists/x").pattern == "pattern_0"
    refused(interface, "x/lists/", reason="no_pattern")


def test_an_integer_positional_index_from_yaml_is_accepted() -> None:
    interface = iface({"min_positionals": 1, "positional_patterns": {0: "^a$"}})
    assert compile_(interface, "a").pattern == "pattern_0"


def test_a_positional_pattern_beyond_the_positionals_does_not_match() -> None:
    refused(
        iface({"max_positionals": 2, "positional_patterns": {"1": ".*"}}), "a", reason="no_pattern"
    )


def test_flag_patterns_match_fully() -> None:
    interface = iface({"flag_patterns": {"--date": r"\d{4}-\d{2}-\d{2}"}})
    assert compile_(interface, "--date", "2026-01-02").pattern == "pattern_0"
    refused(interface, "--date", "2026-01-02x", reason="no_pattern")
    refused(interface, "--date", "2026-1-2", reason="no_pattern")


def test_a_flag_pattern_is_skipped_when_the_flag_is_absent() -> None:
    assert compile_(iface({"flag_patterns": {"--date": "x"}})).command == ()


def test_flag_values_longer_than_4096_characters_never_match() -> None:
    interface = iface({"flag_patterns": {"--v": ".*"}})
    assert compile_(interface, "--v", "a" * 4096).pattern == "pattern_0"
    refused(interface, "--v", "a" * 4097, reason="no_pattern")


def test_flag_patterns_longer_than_1024_characters_never_match() -> None:
    long_pattern = "a?" * 512 + "b"
    interface = iface({"flag_patterns": {"--v": long_pattern}})
    refused(interface, "--v", "b", reason="no_pattern")
    assert compile_(interface).command == ()


def test_an_invalid_regex_is_a_structured_refusal() -> None:
    """A23: upstream raised an uncaught re.error."""
    refused(iface({"flag_patterns": {"--v": "("}}), reason="regex_refused")
    refused(iface({"positional_patterns": {"0": "[a-"}}), "a", reason="regex_refused")


# --------------------------------------------------------------------------- #
# Selection (6.2 step 7)


def test_exactly_one_pattern_must_match() -> None:
    one = {"name": "one", "max_positionals": 1}
    two = {"name": "two", "min_positionals": 1, "max_positionals": 2}
    assert compile_(iface(one, two)).pattern == "one"
    assert compile_(iface(one, two), "a", "b").pattern == "two"
    assert refused(iface(one, two), "a", reason="ambiguous_pattern").endswith("ambiguous")
    assert refused(iface(one, two), "a", "b", "c", reason="no_pattern").endswith(
        "does not match any declared pattern"
    )


def test_unnamed_patterns_are_named_by_index() -> None:
    interface = iface({"max_positionals": 0}, {"min_positionals": 1})
    assert compile_(interface, "a").pattern == "pattern_1"


# --------------------------------------------------------------------------- #
# Input checks


@pytest.mark.parametrize("argv", ["abc", b"abc", None, {"a": 1}, ["a", 1], ("a", None)])
def test_an_argv_that_is_not_a_list_of_strings_is_refused(argv: object) -> None:
    with pytest.raises(ResolutionFailed) as caught:
        compile_binding(iface({}), interface_id=IID, argv=argv, stdin=False)  # type: ignore[arg-type]
    assert caught.value.reason == "argv_malformed"


@pytest.mark.parametrize("stdin", [None, 1, "true", 0])
def test_stdin_must_be_a_real_boolean(stdin: object) -> None:
    with pytest.raises(ResolutionFailed) as caught:
        compile_binding(iface({}), interface_id=IID, argv=(), stdin=stdin)  # type: ignore[arg-type]
    assert caught.value.reason == "argv_malformed"


# --------------------------------------------------------------------------- #
# secret_arguments


def test_secret_arguments_counts_absurdly_deep_types_as_secret() -> None:
    type_: dict[str, object] = {"kind": "string"}
    for _ in range(10):
        type_ = {"kind": "list", "element_type": type_}
    interface = {"contract": {"arguments": {"deep": {"sensitivity": "public", "type": type_}}}}
    assert secret_arguments(interface) == ("deep",)


def test_secret_arguments_lists_secret_and_credential_arguments_sorted() -> None:
    interface = {
        "contract": {
            "arguments": {
                "z-token": {"sensitivity": "credential", "type": {"kind": "string"}},
                "name": {"sensitivity": "public", "type": {"kind": "string"}},
                "password": {
                    "sensitivity": "public",
                    "type": {"kind": "string", "sensitivity": "secret"},
                },
                "keys": {
                    "sensitivity": "public",
                    "type": {
                        "kind": "list",
                        "element_type": {"kind": "string", "sensitivity": "secret"},
                    },
                },
                "cert": {
                    "sensitivity": "public",
                    "type": {"kind": "file", "content_type": {"sensitivity": "credential"}},
                },
                "dir": {
                    "sensitivity": "public",
                    "type": {"kind": "dir", "entry_type": {"sensitivity": "secret"}},
                },
            }
        }
    }
    assert secret_arguments(interface) == ("cert", "dir", "keys", "password", "z-token")


@pytest.mark.parametrize(
    "interface",
    [
        {},
        {"contract": None},
        {"contract": {"arguments": []}},
        {
            "contract": {
                "arguments": {"a": None, "b": {"sensitivity": ["secret"]}, "c": {"type": 3}}
            }
        },
    ],
)
def test_secret_arguments_never_raises_on_malformed_contracts(interface: dict[str, object]) -> None:
    assert secret_arguments(interface) == ()


# --------------------------------------------------------------------------- #
# python_target (6.5)


def records(module_id: str, gateway_path: str) -> tuple[ModuleRecord, SourceRecord]:
    module = ModuleRecord(
        module_id=module_id,
        root=Path("/r") / module_id,
        configured_root=Path("/r"),
        version=1,
        data={},
    )
    source = SourceRecord(
        source_id=f"{module_id}.source.s",
        module=module,
        version=1,
        gateway_path=gateway_path,
        data={},
    )
    return module, source


@pytest.mark.parametrize(
    ("module_id", "path", "entrypoint"),
    [
        (
            "list-manager._rtx",
            "_yaml_store.py",
            "_officina_module_6c6973742d6d616e616765722e5f727478._yaml_store",
        ),
        ("wakeup", "cli.py", "_officina_module_77616b657570.cli"),
        ("wakeup", "__init__.py", "_officina_module_77616b657570"),
        ("wakeup", "a/b.py", "_officina_module_77616b657570.a.b"),
        ("wakeup", "a/__init__.py", "_officina_module_77616b657570.a"),
    ],
)
def test_python_target_derives_package_and_entrypoint(
    module_id: str, path: str, entrypoint: str
) -> None:
    module, source = records(module_id, path)
    assert python_target(module, source, "Interface") == PythonTarget(
        gateway_path=path,
        process_entry="Interface",
        logical_package=ids.logical_package(module_id),
        logical_entrypoint=entrypoint,
    )


@pytest.mark.parametrize(
    "entry",
    [
        "",
        " Interface",
        "Interface ",
        "module.Interface",
        "class",
        "None",
        "Ιnterface",
        "__class__",
        "1x",
        "a-b",
    ],
)
def test_python_target_refuses_entries_that_are_not_plain_identifiers(entry: str) -> None:
    module, source = records("wakeup", "cli.py")
    with pytest.raises(ResolutionFailed) as caught:
        python_target(module, source, entry)
    assert caught.value.message.startswith("cannot build Python target for wakeup.source.s: ")
    assert caught.value.reason == "target_malformed"


@pytest.mark.parametrize(
    "path",
    [
        "",
        ".py",
        "cli",
        "cli.sh",
        "/abs/cli.py",
        "./cli.py",
        "../cli.py",
        "a/../cli.py",
        "a//cli.py",
        "a\\cli.py",
        "my-module.py",
        "a b.py",
        "class.py",
        "a.b/cli.py",
        "cli.py\x00",
        "çli.py",
    ],
)
def test_python_target_refuses_unsafe_or_non_importable_gateway_paths(path: str) -> None:
    module, source = records("wakeup", path)
    with pytest.raises(ResolutionFailed) as caught:
        python_target(module, source, "Interface")
    assert caught.value.reason == "target_malformed"


def test_python_target_refuses_a_source_of_another_module() -> None:
    module, _ = records("wakeup", "cli.py")
    _, source = records("other", "cli.py")
    with pytest.raises(ResolutionFailed) as caught:
        python_target(module, source, "Interface")
    assert caught.value.reason == "target_malformed"


_IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]*"


@MANY
@example("\u0131f")
@example("_1")
@example("1_")
@example("class")
@given(texts_near(_IDENTIFIER, re.ASCII, extra="_x1"))
def test_an_entry_identifier_is_exactly_what_the_regex_matched(text: str) -> None:
    expected = re.fullmatch(_IDENTIFIER, text, re.ASCII) is not None
    assert binding._is_identifier(text) is (expected and not keyword.iskeyword(text))
