"""A value that begins with ``-`` reaches the gateway as that value, never as a flag.

The gateway parses its argv with argparse (``boring_dispatch.gateway.Interface``),
which reads any token that begins with ``-`` as an option, ``-h``/``--help``
included, unless it follows ``--``. So the dispatcher must hand every caller
value over in a form argparse cannot misread, in both binding modes and for
every client (CLI argv, MCP projection, a nested ``self.dispatch``):

* argument mode emits ``--`` before the positionals whenever one of them begins
  with ``-`` (named arguments then come first), writes a single option value that
  begins with ``-`` as ``--name=value``, and refuses what argparse cannot receive
  intact (the value ``--``; a dash-led item of a multi-value option);
* pattern mode passes the argv through unchanged, and the projection puts ``--``
  before dash-led positionals.

The properties are checked against the real parser of a real gateway: in
process on the compiled command, and live through child processes.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import inspect
import io
import json
import textwrap
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any, Final

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boring_dispatch.errors import ResolutionFailed
from boring_dispatch.records import RouteRequest
from boring_dispatch.repository.projection import projection_argv
from boring_dispatch.repository.repository import Repository
from kits.cases import RepositorySpec, _write
from kits.mcp import McpServer

EXAMPLE_CONFIG: Final = Path(__file__).resolve().parents[2] / "examples/repository/officina.toml"


def build_parser() -> argparse.ArgumentParser:
    """The gateway's parser: argparse defaults (abbreviations, ``-h``), mirroring the binding."""
    parser = argparse.ArgumentParser(prog="parsed")
    parser.add_argument("first")
    parser.add_argument("rest", nargs="*")
    parser.add_argument("--count", type=int)
    parser.add_argument("--name", nargs="?", const="<no value>")
    parser.add_argument("--tags", nargs="+")
    parser.add_argument("--verbose", action="store_true")
    return parser


GATEWAY: Final = (
    "import argparse, json, sys\n"
    "from boring_dispatch.errors import DispatchError\n"
    "from boring_dispatch.gateway import ArgvInterface, Interface\n\n\n"
    + inspect.getsource(build_parser)
    + textwrap.dedent(
        """

        class Parsed(Interface):
            def build_parser(self):
                return build_parser()

            def run(self, args):
                print(json.dumps(vars(args), sort_keys=True))
                return 0


        class Relay(ArgvInterface):
            def run(self, argv):
                call = json.loads(argv[0])
                try:
                    result = self.dispatch(
                        call["interface"], version=1,
                        positionals=call["positionals"], options=call["options"],
                    )
                except DispatchError as error:
                    print(json.dumps({"refused": error.code}))
                    return 0
                sys.stdout.write(result.stdout)
                sys.stderr.write(result.stderr)
                return result.exit_code
        """
    )
)

_STREAMS: Final = [
    {"id": "out", "medium": "stdout", "access": "write"},
    {"id": "err", "medium": "stderr", "access": "write"},
]
_CONTRACT: Final = {
    "outputs": [
        {"id": "o", "direct_io_ref": "out", "audience": "machine"},
        {"id": "e", "direct_io_ref": "err", "audience": "machine"},
    ],
    "execution": {"state_effect": "read-only"},
    "direct_io": {"reads": [], "writes": _STREAMS, "network": []},
}


def _arg(type_: dict[str, object], *, required: bool = False) -> dict[str, object]:
    return {"description": "d", "required": required, "sensitivity": "public", "type": type_}


_ARGUMENTS: Final = {
    "first": _arg({"kind": "string"}, required=True),
    "rest": _arg({"kind": "string"}),
    "count": _arg({"kind": "integer", "minimum": 1, "maximum": 10}),
    "name": _arg({"kind": "string"}),
    "tags": _arg({"kind": "string"}),
    "verbose": _arg({"kind": "flag"}),
}
_BINDINGS: Final = {
    "first": {"kind": "positional", "position": 0, "arity": {"minimum": 1, "maximum": 1}},
    "rest": {"kind": "positional", "position": 1, "arity": {"minimum": 0, "maximum": None}},
    "count": {"kind": "option", "name": "--count", "arity": {"minimum": 1, "maximum": 1}},
    "name": {"kind": "option", "name": "--name", "arity": {"minimum": 0, "maximum": 1}},
    "tags": {"kind": "option", "name": "--tags", "arity": {"minimum": 1, "maximum": None}},
    "verbose": {"kind": "switch", "name": "--verbose"},
}
_ANY: Final = {"name": "any", "min_positionals": 0, "allow_extra_positionals": True}


def _interface(entry: str, binding: dict[str, object], arguments: object) -> dict[str, object]:
    return {
        "version": 1,
        "contract": {**_CONTRACT, "arguments": arguments},
        "process_binding": {"kind": "process", "entry": entry, **binding},
    }


INTERFACES: Final = {
    "parsed": _interface("Parsed", {"arguments": _BINDINGS}, _ARGUMENTS),
    "parsed-pattern": _interface("Parsed", {"patterns": [_ANY]}, {}),
    "relay": _interface("Relay", {"patterns": [_ANY]}, {}),
}


def _module(module_id: str, **fields: object) -> dict[str, object]:
    document: dict[str, object] = {
        "schema_version": 6,
        "node_type": "module",
        "id": module_id,
        "version": 1,
        "children": {},
        "namespace_exports": {},
        "sources": {},
        "exports": {},
        "discovery": {"mechanism": "skill"},
    }
    document.update(fields)
    return document


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    public = {"allow_all_modules": True, "allowed_callers": []}
    tools = _module(
        "tools",
        sources={"tools.source.main": {"blueprint": {"base": "module-root", "path": "main.yaml"}}},
        exports={
            f"tools.interface.{name}": {
                "source_interface": f"tools.source.main.interface.{name}",
                "access": public,
            }
            for name in INTERFACES
        },
    )
    source = {
        "schema_version": 6,
        "node_type": "behavioral_source",
        "id": "tools.source.main",
        "version": 1,
        "gateway": {"path": "main.py", "language": "Python>=3.11"},
        "interfaces": {
            f"tools.source.main.interface.{name}": body for name, body in INTERFACES.items()
        },
    }
    spec = RepositorySpec(
        roots=("skills",),
        modules={"host": _module("host"), "tools": tools},
        sources={"tools.source.main": source},
        files={"skills/tools/main.py": GATEWAY},
    )
    return _write(spec, tmp_path_factory.mktemp("dash")).resolve()


# --------------------------------------------------------------------------- #
# Generated values: flag look-alikes first, then any text


_LOOKALIKES: Final = [
    "-h",
    "--help",
    "--count=999999",
    "--count",
    "--verbose",
    "--verb",
    "--name=x",
    "--tags",
    "--co=5",
    "--caller-skill",
    "-",
    "-5",
    "-1e3",
    "---",
    "-x y",
    "-vh",
]
_TEXT: Final = st.text(
    st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=10
)
VALUE: Final = st.one_of(
    st.sampled_from(_LOOKALIKES),
    st.builds(lambda text: "-" + text, _TEXT),
    st.builds(lambda text: "--" + text, _TEXT),
    _TEXT,
)
#: Positionals as a client sends them; ``--`` as a value is covered on its own below.
POSITIONALS: Final = st.lists(VALUE, min_size=1, max_size=6).filter(lambda ps: "--" not in ps)


def _request(target: str, argv: tuple[str, ...]) -> RouteRequest:
    return RouteRequest(caller="host", target=f"tools.interface.{target}", argv=argv)


def _gateway_view(command: tuple[str, ...]) -> dict[str, Any]:
    """What the gateway's own parser makes of ``command`` (usage output is a failure)."""
    err = io.StringIO()
    parser = build_parser()
    try:
        with redirect_stdout(err), redirect_stderr(err):
            return vars(parser.parse_args(list(command)))
    except SystemExit:
        pytest.fail(f"the gateway's parser exited on {command!r}: {err.getvalue()[:300]}")


def _as_positionals(positionals: list[str]) -> dict[str, Any]:
    return {
        "first": positionals[0],
        "rest": positionals[1:],
        "count": None,
        "name": None,
        "tags": None,
        "verbose": False,
    }


def _client_forms(positionals: list[str]) -> list[tuple[str, ...]]:
    """The argv a CLI user writes (``-- values``) and the one a projection compiles to."""
    return [("--", *positionals), projection_argv(positionals, {})]


# --------------------------------------------------------------------------- #
# Compiled commands, read by the gateway's parser in process


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(positionals=POSITIONALS)
def test_argument_mode_positionals_reach_the_parser_as_positionals(
    config: Path, positionals: list[str]
) -> None:
    repository = Repository(config)
    for argv in _client_forms(positionals):
        command = repository.resolve(_request("parsed", argv)).binding.command
        assert _gateway_view(command) == _as_positionals(positionals)


@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(positionals=POSITIONALS)
def test_pattern_mode_positionals_from_a_projection_reach_the_parser_as_positionals(
    config: Path, positionals: list[str]
) -> None:
    argv = projection_argv(positionals, {})
    command = Repository(config).resolve(_request("parsed-pattern", argv)).binding.command
    assert command == argv
    assert _gateway_view(command) == _as_positionals(positionals)


@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    first=_TEXT.filter(lambda text: not text.startswith("-")),
    name=VALUE.filter(lambda value: not value.startswith("--")),
    count=st.integers(1, 10),
)
def test_a_single_option_value_that_begins_with_a_dash_stays_that_options_value(
    config: Path, first: str, name: str, count: int
) -> None:
    """(A ``--x`` token after an option is a flag of the binding's own grammar.)"""
    argv = (first, "--count", str(count), "--name", name)
    command = Repository(config).resolve(_request("parsed", argv)).binding.command
    expected = _as_positionals([first]) | {"count": count, "name": name}
    assert _gateway_view(command) == expected


@pytest.mark.parametrize("value", ["-h", "-x", "-5", "-vh", "-x y"])
def test_a_dash_led_item_among_several_of_a_multi_value_option_is_refused(
    config: Path, value: str
) -> None:
    """No argv form keeps it a value for ``nargs="+"``: refused, the value not echoed."""
    for argv in (("a", "--tags", "t", value), ("a", "--tags", value, "t")):
        with pytest.raises(ResolutionFailed) as caught:
            Repository(config).resolve(_request("parsed", argv))
        assert value not in caught.value.message
        assert caught.value.reason == "dash_value"
    alone = Repository(config).resolve(_request("parsed", ("a", "--tags", value))).binding
    assert _gateway_view(alone.command) == _as_positionals(["a"]) | {"tags": [value]}


def test_a_lone_dash_is_an_ordinary_option_item(config: Path) -> None:
    command = Repository(config).resolve(_request("parsed", ("a", "--tags", "-", "t"))).binding
    assert _gateway_view(command.command) == _as_positionals(["a"]) | {"tags": ["-", "t"]}


@pytest.mark.parametrize(
    "argv",
    [("--", "--"), ("--", "a", "--"), ("a", "--name", "--", "--"), ("--", "a", "b", "--", "c")],
)
def test_the_value_double_dash_is_refused_in_argument_mode(
    config: Path, argv: tuple[str, ...]
) -> None:
    """argparse drops a second ``--`` (Python 3.11), so the gateway would not see the value."""
    with pytest.raises(ResolutionFailed) as caught:
        Repository(config).resolve(_request("parsed", argv))
    assert caught.value.reason == "dash_value"


# --------------------------------------------------------------------------- #
# Live: the gateway process reports what its parser saw


def _live(config: Path, target: str, argv: tuple[str, ...]) -> dict[str, Any]:
    result = Repository(config).invoke(_request(target, argv))
    assert result.exit_code == 0, result.stderr[-500:]
    seen = json.loads(result.stdout)
    assert isinstance(seen, dict)
    return seen


@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(positionals=POSITIONALS)
def test_live_argument_mode_gateway_sees_exactly_the_positionals(
    config: Path, positionals: list[str]
) -> None:
    assert _live(config, "parsed", ("--", *positionals)) == _as_positionals(positionals)


@settings(max_examples=10, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(positionals=POSITIONALS, target=st.sampled_from(["parsed", "parsed-pattern"]))
def test_live_nested_dispatch_positionals_reach_the_nested_gateway_as_positionals(
    config: Path, positionals: list[str], target: str
) -> None:
    call = {"interface": f"tools.interface.{target}", "positionals": positionals, "options": {}}
    assert _live(config, "relay", (json.dumps(call),)) == _as_positionals(positionals)


@pytest.mark.parametrize(
    ("argv", "seen"),
    [
        (("on", "claude", "--", "--help"), {"first": "on", "rest": ["claude", "--help"]}),
        (("-h",), {"first": "-h"}),
        (("--", "-h"), {"first": "-h"}),
        (("x", "--", "--count=999999"), {"first": "x", "rest": ["--count=999999"]}),
        (
            ("x", "--", "--verbose", "--tags", "a"),
            {"first": "x", "rest": ["--verbose", "--tags", "a"]},
        ),
        (("-h", "--count", "2"), {"first": "-h", "count": 2}),
        (("x", "--name", "-h"), {"first": "x", "name": "-h"}),
        (("x", "--name", "-vh", "--verbose"), {"first": "x", "name": "-vh", "verbose": True}),
    ],
)
def test_live_dash_led_inputs_are_values_not_flags(
    config: Path, argv: tuple[str, ...], seen: dict[str, Any]
) -> None:
    expected = _as_positionals([seen.pop("first"), *seen.pop("rest", [])]) | seen
    assert _live(config, "parsed", argv) == expected


# --------------------------------------------------------------------------- #
# MCP: the example's sign-message (argument mode) signs a dash-led message


@pytest.fixture(scope="module")
def example_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpServer]:
    log = tmp_path_factory.mktemp("mcp-log") / "server.log"
    with (
        log.open("w+", encoding="utf-8") as errlog,
        McpServer(
            ["mcp", "--config", str(EXAMPLE_CONFIG)],
            env={},
            cwd=EXAMPLE_CONFIG.parent,
            errlog=errlog,
        ) as server,
    ):
        yield server


@pytest.mark.parametrize("message", ["--help", "-h", "--audit-argv", "--key=k", "-", "-5"])
def test_mcp_sign_message_signs_a_dash_led_message_instead_of_reading_a_flag(
    example_server: McpServer, message: str
) -> None:
    call = {
        "caller": "signer",
        "interface": "signer._rtx.interface.sign-message",
        "version": 1,
        "arguments": {"positionals": [message], "options": {}, "stdin": "key"},
    }
    result = example_server.call("invoke_security_0", call)["structuredContent"]["result"]
    assert result["exit_code"] == 0, result
    signed = json.loads(result["stdout"])
    expected = hmac.new(b"key", message.encode(), hashlib.sha256).hexdigest()
    assert signed == {"algorithm": "hmac-sha256", "signature": expected}
