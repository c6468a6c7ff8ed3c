"""An abbreviated flag cannot slip past a check made on the exact flag.

argparse expands an unambiguous prefix (``--toke`` -> ``--token``) by default,
so a check on the exact spelling is blind to it. Two rules close this:

* the runner turns abbreviations off on the parser a gateway builds (and on
  its subparsers), so the gateway reads exactly the flags the dispatcher saw;
* pattern mode also refuses, before launch, any ``--x`` flag that is a proper
  prefix of a secret argument's flag (``--<id>``, for gateways that parse
  their own argv), and a flag that abbreviates a ``forbidden_flags`` entry
  matches no pattern, unless the pattern declares that flag itself.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Final

import pytest
from hypothesis import given
from hypothesis import strategies as st

from boring_dispatch.errors import ResolutionFailed
from boring_dispatch.records import RouteRequest
from boring_dispatch.repository.bind.binding import compile_binding
from boring_dispatch.repository.repository import Repository
from kits.cases import RepositorySpec, _write

IID: Final = "demo.interface.run"
SECRET: Final = "S3CRET-canary-51c2"
SECRET_FLAG: Final = "--api-token"


def _secret_interface(pattern: dict[str, object]) -> dict[str, object]:
    return {
        "contract": {
            "arguments": {
                "api-token": {
                    "description": "d",
                    "required": False,
                    "sensitivity": "secret",
                    "type": {"kind": "string"},
                }
            }
        },
        "process_binding": {"kind": "process", "entry": "I", "patterns": [pattern]},
    }


#: Accepts any flag and any number of positionals.
OPEN: Final = _secret_interface({"allow_extra_positionals": True})
#: Declares a value flag for the secret, as corpus patterns do.
DECLARED: Final = _secret_interface(
    {"allow_extra_positionals": True, "flag_patterns": {SECRET_FLAG: ".+"}}
)


def _compile(interface: Mapping[str, object], argv: list[str]) -> tuple[str, ...]:
    return compile_binding(interface, interface_id=IID, argv=argv, stdin=False).command


#: Every abbreviation of the secret flag argparse could expand (``--a`` .. ``--api-token``).
PREFIXES: Final = [SECRET_FLAG[:end] for end in range(3, len(SECRET_FLAG) + 1)]


@given(
    prefix=st.sampled_from(PREFIXES),
    inline=st.booleans(),
    before=st.lists(st.sampled_from(["a", "-v", "--other", "x y"]), max_size=3),
    interface=st.sampled_from([OPEN, DECLARED]),
)
def test_every_abbreviation_of_a_secret_flag_is_refused_in_pattern_mode(
    prefix: str, inline: bool, before: list[str], interface: dict[str, object]
) -> None:
    flag = [f"{prefix}={SECRET}"] if inline else [prefix, SECRET]
    with pytest.raises(ResolutionFailed) as caught:
        _compile(interface, [*before, *flag])
    assert "must travel on stdin" in caught.value.message
    assert SECRET not in caught.value.message
    assert caught.value.reason == "secret_in_argv"


@pytest.mark.parametrize(
    "argv", [["--", "--api-tok", SECRET], ["--apis"], ["--b"], ["--api-token-file", "f"], ["-a"]]
)
def test_what_abbreviates_no_secret_flag_still_passes(argv: list[str]) -> None:
    """After ``--`` a token is a value; the others expand to no secret flag."""
    assert _compile(OPEN, argv) == tuple(argv)


@pytest.mark.parametrize("end", range(3, len("--force-delete")))
def test_an_abbreviation_of_a_forbidden_flag_matches_no_pattern(end: int) -> None:
    pattern = {"allow_extra_positionals": True, "forbidden_flags": ["--force-delete"]}
    interface = {"process_binding": {"kind": "process", "entry": "I", "patterns": [pattern]}}
    with pytest.raises(ResolutionFailed) as caught:
        _compile(interface, ["x", "--force-delete"[:end]])
    assert "does not match any declared pattern" in caught.value.message
    assert caught.value.reason == "no_pattern"


def test_a_flag_the_pattern_declares_is_not_an_abbreviation() -> None:
    pattern = {
        "allow_extra_positionals": True,
        "forbidden_flags": ["--force-delete"],
        "allowed_flags": ["--force"],
    }
    interface = {"process_binding": {"kind": "process", "entry": "I", "patterns": [pattern]}}
    assert _compile(interface, ["x", "--force"]) == ("x", "--force")


# --------------------------------------------------------------------------- #
# Live: the gateway's parser does not expand abbreviations

GATEWAY: Final = textwrap.dedent(
    """
    import argparse, json
    from boring_dispatch.gateway import Interface


    class Flags(Interface):
        def build_parser(self):
            parser = argparse.ArgumentParser(prog="flags")
            parser.add_argument("--verbose", action="store_true")
            parser.add_argument("--limit")
            sub = parser.add_subparsers(dest="command")
            nested = sub.add_parser("go")
            nested.add_argument("--dangerous", action="store_true")
            deeper = nested.add_subparsers(dest="mode").add_parser("now")
            deeper.add_argument("--really", action="store_true")
            return parser

        def run(self, args):
            print(json.dumps(vars(args), sort_keys=True))
            return 0
    """
)


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    contract = {
        "arguments": {},
        "execution": {"state_effect": "read-only"},
        "direct_io": {
            "reads": [],
            "writes": [
                {"id": "out", "medium": "stdout", "access": "write"},
                {"id": "err", "medium": "stderr", "access": "write"},
            ],
            "network": [],
        },
    }
    module = {
        "schema_version": 6,
        "node_type": "module",
        "id": "flags",
        "version": 1,
        "children": {},
        "namespace_exports": {},
        "discovery": {"mechanism": "skill"},
        "sources": {"flags.source.main": {"blueprint": {"base": "module-root", "path": "m.yaml"}}},
        "exports": {
            "flags.interface.run": {
                "source_interface": "flags.source.main.interface.run",
                "access": {"allow_all_modules": True, "allowed_callers": []},
            }
        },
    }
    source = {
        "schema_version": 6,
        "node_type": "behavioral_source",
        "id": "flags.source.main",
        "version": 1,
        "gateway": {"path": "main.py", "language": "Python>=3.11"},
        "interfaces": {
            "flags.source.main.interface.run": {
                "version": 1,
                "contract": contract,
                "process_binding": {
                    "kind": "process",
                    "entry": "Flags",
                    "patterns": [
                        {"allow_extra_positionals": True, "flag_patterns": {"--limit": "[0-9]+"}}
                    ],
                },
            }
        },
    }
    spec = RepositorySpec(
        roots=("skills",),
        modules={"flags": module},
        sources={"flags.source.main": source},
        files={"skills/flags/main.py": GATEWAY},
    )
    return _write(spec, tmp_path_factory.mktemp("abbrev")).resolve()


def _run(config: Path, *argv: str) -> tuple[int, str]:
    request = RouteRequest(caller="flags", target="flags.interface.run", argv=argv)
    result = Repository(config).invoke(request)
    return result.exit_code or 0, result.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ("--verb",),
        ("--v",),
        ("--lim", "5"),
        ("go", "--danger"),
        ("go", "--d"),
        ("go", "now", "--rea"),
    ],
)
def test_live_the_gateway_parser_refuses_an_abbreviation(config: Path, argv: tuple[str]) -> None:
    exit_code, stdout = _run(config, *argv)
    assert (exit_code, stdout) == (2, "")


def test_live_exact_flags_still_parse(config: Path) -> None:
    exit_code, stdout = _run(config, "--verbose", "--limit", "5", "go", "--dangerous", "now")
    assert exit_code == 0
    assert json.loads(stdout) == {
        "command": "go",
        "dangerous": True,
        "limit": "5",
        "mode": "now",
        "really": False,
        "verbose": True,
    }
