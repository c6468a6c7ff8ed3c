"""A nested call may not exceed the security level of the route that makes it.

Without this rule a level-0 interface, served by ``invoke_security_0`` as
read-only, could reach a level-2 interface from inside its gateway and the MCP
tier would mean nothing. The parent brokers every ``self.dispatch`` and sets
the running route's derived level as the ceiling (the child cannot change it:
``tests/security/test_nested_broker.py``).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from boring_dispatch.records import RouteRequest
from boring_dispatch.repository.repository import Repository
from kits.cases import RepositorySpec, _write
from kits.mcp import gateway_module

GATEWAY = textwrap.dedent(
    """
    import json, sys
    from boring_dispatch.errors import DispatchError
    from boring_dispatch.gateway import ArgvInterface


    class Reach(ArgvInterface):
        def run(self, argv):
            try:
                result = self.dispatch(argv[0], version=1)
            except DispatchError as error:
                print(json.dumps({"refused": error.code}))
                return 0
            print(json.dumps({"exit_code": result.exit_code, "stdout": result.stdout}))
            return 0


    class Hello(ArgvInterface):
        def run(self, argv):
            print("hello")
            return 0
    """
)
#: export name -> (entry class, derived level; None = no contract)
EXPORTS = {
    "reach-0": ("Reach", 0),
    "reach-1": ("Reach", 1),
    "reach-2": ("Reach", 2),
    "reach-none": ("Reach", None),
    "target-0": ("Hello", 0),
    "target-1": ("Hello", 1),
    "target-2": ("Hello", 2),
    "target-none": ("Hello", None),
}


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tools, source = gateway_module(
        "tools",
        {name: (entry, level, None) for name, (entry, level) in EXPORTS.items()},
        skill=True,
    )
    spec = RepositorySpec(
        roots=("skills",),
        modules={"tools": tools},
        sources={"tools.source.main": source},
        files={"skills/tools/main.py": GATEWAY},
    )
    return _write(spec, tmp_path_factory.mktemp("levels"))


def _reach(config: Path, caller_level: str, target_level: str) -> dict[str, object]:
    request = RouteRequest(
        caller="tools",
        target=f"tools.interface.reach-{caller_level}",
        argv=(f"tools.interface.target-{target_level}",),
    )
    result = Repository.open(config).invoke(request)
    assert result.exit_code == 0, result.stderr
    outcome = json.loads(result.stdout)
    assert isinstance(outcome, dict)
    return outcome


@pytest.mark.parametrize(
    ("caller", "target"),
    [("0", "0"), ("1", "0"), ("1", "1"), ("2", "0"), ("2", "1"), ("2", "2")],
)
def test_a_nested_call_at_or_below_the_callers_level_runs(
    config: Path, caller: str, target: str
) -> None:
    assert _reach(config, caller, target) == {"exit_code": 0, "stdout": "hello\n"}


@pytest.mark.parametrize(("caller", "target"), [("0", "1"), ("0", "2"), ("1", "2")])
def test_a_nested_call_above_the_callers_level_is_refused(
    config: Path, caller: str, target: str
) -> None:
    assert _reach(config, caller, target) == {"refused": "dispatcher.security_level_mismatch"}


@pytest.mark.parametrize("caller", ["0", "1", "2"])
def test_a_nested_call_to_an_interface_without_a_level_fails_closed(
    config: Path, caller: str
) -> None:
    assert _reach(config, caller, "none") == {"refused": "dispatcher.security_level_unavailable"}


def test_a_route_without_a_level_gets_the_lowest_ceiling(config: Path) -> None:
    # Fail closed (tests/security/test_hardening_argv_ceiling.py has the family).
    assert _reach(config, "none", "0") == {"exit_code": 0, "stdout": "hello\n"}
    assert _reach(config, "none", "2") == {"refused": "dispatcher.security_level_mismatch"}
