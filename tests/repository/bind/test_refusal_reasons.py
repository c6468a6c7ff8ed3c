"""Bind refusals carry an internal reason; the public code and messages stay as they were.

``ResolutionFailed.reason`` names the check that refused, so a test asserting a
refusal fails when a different check refuses. Three rules are pinned here:

* every raise site of the bind stage names a reason from the closed
  vocabulary :data:`RefusalReason` (checked on the source, with ``ast``);
* one sample refusal per reason keeps its exact public error (code, message,
  ``to_dict()``), pinned as literals recorded before reasons existed;
* the reason reaches no client: not the JSON error line, not the MCP result.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Final

import pytest

from boring_dispatch.errors import ResolutionFailed
from boring_dispatch.records import ModuleRecord, SourceRecord
from boring_dispatch.repository import _shapes
from boring_dispatch.repository._shapes import REFUSAL_REASONS, BindingRefused, RefusalReason
from boring_dispatch.repository.bind import binding as binding_module
from boring_dispatch.repository.bind.binding import compile_binding, python_target
from boring_dispatch.surfaces.mcp._results import error_outcome

IID: Final = "demo._rtx.interface.run"
BIND: Final = Path(binding_module.__file__).parent
#: The modules whose raise sites must name a reason: the bind package and its shape helpers.
MODULES: Final = (*sorted(BIND.glob("*.py")), Path(_shapes.__file__))
CORPUS_CONFIG: Final = Path(__file__).resolve().parents[2] / "corpus" / "famulus" / "officina.toml"


# --------------------------------------------------------------------------- #
# Every raise site names a reason from the vocabulary


def _calls(path: Path, name: str) -> Iterator[tuple[ast.Call, ast.FunctionDef | None]]:
    """Every call of ``name`` in ``path``, with the function it sits in."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    functions = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)]
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name:
            inside = [f for f in functions if f.lineno <= node.lineno <= (f.end_lineno or 0)]
            yield node, max(inside, key=lambda f: f.lineno, default=None)


def _reason_problem(call: ast.Call, function: ast.FunctionDef | None) -> str | None:
    """Why this call does not name a vocabulary reason, or ``None`` when it does."""
    reasons = [keyword.value for keyword in call.keywords if keyword.arg == "reason"]
    if len(reasons) != 1 or len(call.args) != 1:
        return "needs exactly one message and one reason= keyword"
    value = reasons[0]
    if isinstance(value, ast.Constant):
        return None if value.value in REFUSAL_REASONS else f"unknown reason {value.value!r}"
    if isinstance(value, ast.Name) and function is not None:
        # A pass-through parameter: mypy holds its callers to the RefusalReason literal.
        typed = {
            arg.arg: ast.unparse(arg.annotation)
            for arg in function.args.args + function.args.kwonlyargs
            if arg.annotation is not None
        }
        if typed.get(value.id) == "RefusalReason":
            return None
    if isinstance(value, ast.Attribute) and value.attr == "reason":
        return None  # a refusal's own reason, carried on (``refusal.reason``)
    return f"reason is not a vocabulary literal: {ast.unparse(value)}"


def test_every_binding_refusal_names_a_reason_from_the_vocabulary() -> None:
    sites = [(path, *found) for path in MODULES for found in _calls(path, "BindingRefused")]
    assert len(sites) >= 90  # the parse found the raise sites
    problems = [
        f"{path.name}:{call.lineno}: {problem}"
        for path, call, function in sites
        if (problem := _reason_problem(call, function)) is not None
    ]
    assert problems == []


def test_every_resolution_failed_of_the_bind_stage_carries_a_reason() -> None:
    sites = [(path, *found) for path in MODULES for found in _calls(path, "ResolutionFailed")]
    assert len(sites) >= 2
    for path, call, _ in sites:
        assert any(keyword.arg == "reason" for keyword in call.keywords), (path.name, call.lineno)


def test_every_reason_of_the_vocabulary_is_used_by_some_check() -> None:
    """A closed vocabulary without dead words: each reason is passed by some call."""
    named: set[object] = set()
    for path in MODULES:
        for call in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(call, ast.Call):
                values = [*call.args, *(keyword.value for keyword in call.keywords)]
                named |= {value.value for value in values if isinstance(value, ast.Constant)}
    assert set(REFUSAL_REASONS) <= named


@pytest.mark.parametrize("args", [("message",), ("message", "no_pattern")])
def test_a_refusal_cannot_be_raised_without_naming_its_reason(args: tuple[str, ...]) -> None:
    with pytest.raises(TypeError):
        BindingRefused(*args)  # type: ignore[call-arg]


@pytest.mark.parametrize("reason", sorted(REFUSAL_REASONS))
def test_the_reason_travels_from_the_check_to_the_refusal(reason: RefusalReason) -> None:
    refusal = BindingRefused("m", reason=reason)
    assert refusal.reason == reason
    assert str(refusal) == "m"


# --------------------------------------------------------------------------- #
# One sample per reason: the public error is unchanged


def _patterns(*patterns: Mapping[str, object], **binding: object) -> dict[str, object]:
    body = {"kind": "process", "entry": "I", **binding, "patterns": [dict(p) for p in patterns]}
    return {"process_binding": body}


def _arguments(
    arguments: Mapping[str, object], bindings: Mapping[str, object], **binding: object
) -> dict[str, object]:
    contract = {
        arg_id: {"description": "d", "required": False, "sensitivity": "public", **dict(body)}  # type: ignore[call-overload]
        for arg_id, body in arguments.items()
    }
    body = {"kind": "process", "entry": "I", "arguments": dict(bindings), **binding}
    return {"contract": {"arguments": contract}, "process_binding": body}


ONE: Final = {"minimum": 1, "maximum": 1}
POS0: Final = {"kind": "positional", "position": 0, "arity": ONE}
STRING: Final = {"type": {"kind": "string"}}
STDIN: Final = {"kind": "stdin", "encoding": "utf-8", "framing": "raw"}
EXTRA: Final = {"allow_extra_positionals": True}


class _Unlistable(Mapping[str, object]):
    """A binding mapping that answers lookups but breaks when listed (the safety net's case)."""

    def __getitem__(self, key: str) -> object:
        if key == "kind":
            return "process"
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        raise TypeError

    def __len__(self) -> int:
        return 1


#: reason -> (interface, argv, stdin, the exact message after ``cannot compile <IID>: ``),
#: messages as the bind stage wrote them before reasons existed.
SAMPLES: Final[dict[str, tuple[object, list[str], bool, str]]] = {
    "binding_malformed": (_patterns(), [], False, "process binding must have at least one pattern"),
    "not_bindable": ({"version": 1}, [], False, "interface is not process-bindable"),
    "regex_refused": (
        _patterns({"positional_patterns": {"0": "(a+)+"}}),
        ["a"],
        False,
        "pattern 0: positional pattern 0: pattern repeats a group whose repetitions are ambiguous",
    ),
    "secret_in_argv": (
        {
            **_patterns(EXTRA),
            "contract": {"arguments": {"token": {"sensitivity": "secret"}}},
        },
        ["--tok", "CANARY"],
        False,
        "secret argument --token must travel on stdin, not argv",
    ),
    "argv_malformed": (_patterns(EXTRA), ["a\x00"], False, "argv token 0 contains a NUL byte"),
    "command_malformed": (
        _patterns({}, args_prefix=["a\x00"]),
        [],
        False,
        "compiled command token 0 contains a NUL byte",
    ),
    "no_pattern": (_patterns({}), ["a"], False, "invocation does not match any declared pattern"),
    "ambiguous_pattern": (
        _patterns({"name": "one", **EXTRA}, {"name": "two", **EXTRA}),
        ["a"],
        False,
        "invocation matches multiple patterns; ambiguous",
    ),
    "duplicate_option": (
        _patterns(EXTRA),
        ["--x", "--x"],
        False,
        "duplicate flag (an undeclared flag)",
    ),
    "switch_with_value": (
        _patterns({"allowed_flags": ["--x"]}),
        ["--x=1"],
        False,
        "switch --x does not take a value",
    ),
    "missing_option_value": (
        _patterns({"flag_patterns": {"--v": ".*"}}),
        ["--v"],
        False,
        "flag --v requires a value",
    ),
    "unknown_option": (
        _arguments({"a": STRING}, {"a": {"kind": "option", "name": "--a", "arity": ONE}}),
        ["--b"],
        False,
        "unknown option (not declared by the binding)",
    ),
    "fixed_override": (
        _arguments({}, {}, fixed=[{"kind": "switch", "name": "--safe"}]),
        ["--safe"],
        False,
        "caller cannot override fixed option --safe",
    ),
    "extra_value": (
        _arguments({"on": {"type": {"kind": "flag"}}}, {"on": {"kind": "switch", "name": "--on"}}),
        ["--on", "x"],
        False,
        "unexpected trailing value in the named arguments",
    ),
    "too_many_positionals": (
        _arguments({}, {}),
        ["x"],
        False,
        "unexpected trailing value (positional 0)",
    ),
    "missing_argument": (
        _arguments({"a": {**STRING, "required": True}}, {"a": POS0}),
        [],
        False,
        "missing required argument a",
    ),
    "value_type": (
        _arguments({"n": {"type": {"kind": "integer"}}}, {"n": POS0}),
        ["x"],
        False,
        "argument n: value must be an integer",
    ),
    "value_range": (
        _arguments({"n": {"type": {"kind": "integer", "minimum": 1}}}, {"n": POS0}),
        ["0"],
        False,
        "argument n: value is below the minimum",
    ),
    "value_enum": (
        _arguments(
            {"e": {"type": {"kind": "enum", "values": [{"value": "a", "description": "d"}]}}},
            {"e": POS0},
        ),
        ["b"],
        False,
        "argument e: value is not in enum",
    ),
    "value_format": (
        _arguments({"u": {"type": {"kind": "string", "format": {"named": "uuid"}}}}, {"u": POS0}),
        ["x"],
        False,
        "argument u: value is not a valid uuid",
    ),
    "dash_value": (
        _arguments({"a": STRING}, {"a": POS0}),
        ["--", "--"],
        False,
        "the value '--' cannot be passed to the gateway",
    ),
    "stdin_refused": (_arguments({}, {}), [], True, "interface does not declare stdin"),
    "stdin_required": (
        _arguments({"t": {**STRING, "required": True}}, {"t": STDIN}),
        [],
        False,
        "t requires --stdin",
    ),
    "safety_net": (
        {"process_binding": _Unlistable()},
        [],
        False,
        "malformed process binding",
    ),
}


def test_the_samples_cover_every_reason_of_compile_binding() -> None:
    assert set(SAMPLES) == REFUSAL_REASONS - {"target_malformed"}  # python_target's, below


@pytest.mark.parametrize("reason", sorted(SAMPLES))
def test_each_reason_keeps_its_public_error(reason: str) -> None:
    interface, argv, stdin, message = SAMPLES[reason]
    with pytest.raises(ResolutionFailed) as caught:
        compile_binding(interface, interface_id=IID, argv=argv, stdin=stdin)  # type: ignore[arg-type]
    error = caught.value
    assert error.reason == reason
    assert error.code == "dispatcher.resolution_failed"
    assert error.to_dict() == {
        "schema_version": 1,
        "code": "dispatcher.resolution_failed",
        "caller_module_id": "",
        "target_module_id": "demo._rtx",
        "message": f"cannot compile {IID}: {message}",
    }
    assert "CANARY" not in error.message


def test_python_target_refusals_keep_their_public_error() -> None:
    module = ModuleRecord(
        module_id="wakeup", root=Path("/r/wakeup"), configured_root=Path("/r"), version=1, data={}
    )
    source = SourceRecord(
        source_id="wakeup.source.s", module=module, version=1, gateway_path="cli.sh", data={}
    )
    with pytest.raises(ResolutionFailed) as caught:
        python_target(module, source, "Interface")
    assert caught.value.reason == "target_malformed"
    assert caught.value.to_dict() == {
        "schema_version": 1,
        "code": "dispatcher.resolution_failed",
        "caller_module_id": "",
        "target_module_id": "wakeup",
        "message": "cannot build Python target for wakeup.source.s: "
        "gateway path must be a relative POSIX path ending in .py",
    }


# --------------------------------------------------------------------------- #
# The reason reaches no client


@pytest.mark.parametrize("reason", [*sorted(REFUSAL_REASONS), None])
def test_the_reason_changes_neither_the_json_error_line_nor_the_mcp_result(
    reason: str | None,
) -> None:
    plain = ResolutionFailed("m", caller_module_id="c", target_module_id="t")
    tagged = ResolutionFailed("m", caller_module_id="c", target_module_id="t", reason=reason)
    assert tagged.reason == reason
    assert json.dumps(tagged.to_dict()) == json.dumps(plain.to_dict())
    assert error_outcome(tagged, request=None, trace_id=None) == error_outcome(
        plain, request=None, trace_id=None
    )


def test_the_cli_json_error_line_of_a_binding_refusal_is_unchanged() -> None:
    """The exact line the CLI wrote before reasons existed (a real subprocess)."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "boring_dispatch",
            "--config",
            str(CORPUS_CONFIG),
            "--caller-skill",
            "daily-plan",
            "--error-format",
            "json",
            "--dry-run",
            "daily-plan._rtx.interface.render-plan",
            "--route-smoke",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        '{"schema_version": 1, "code": "dispatcher.resolution_failed", '
        '"caller_module_id": "daily-plan", "target_module_id": "daily-plan._rtx", '
        '"message": "cannot compile daily-plan._rtx.interface.render-plan: '
        'invocation does not match any declared pattern"}\n'
    )
