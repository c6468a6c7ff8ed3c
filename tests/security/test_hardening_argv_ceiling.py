"""A route whose security level is unavailable gets the lowest ceiling for nested calls.

Without a level there is nothing to bound a nested call by; treating that as
"no ceiling" let a route without a contract reach level-2 interfaces from its
gateway. The broker now fails closed: such a route may call level-0
interfaces only (and, as for every route, none whose level is unavailable).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from boring_dispatch.records import RouteRequest
from boring_dispatch.repository.repository import Repository
from kits.cases import RepositorySpec, _write
from kits.mcp import gateway_module

GATEWAY = """
import json
from boring_dispatch.errors import DispatchError
from boring_dispatch.gateway import ArgvInterface


class Reach(ArgvInterface):
    def run(self, argv):
        outcomes = {}
        for chain in argv:  # "a" or "a>b": call a (which then calls b)
            target, _, rest = chain.partition(">")
            try:
                result = self.dispatch(target, version=1, positionals=[rest] if rest else [])
            except DispatchError as error:
                outcomes[chain] = error.code
            else:
                outcomes[chain] = result.stdout
        print(json.dumps(outcomes))
        return 0


class Hello(ArgvInterface):
    def run(self, argv):
        if argv:  # one more hop, under this route's own ceiling
            return Reach().run(argv)
        print("hello")
        return 0
"""
LEVELS = {"0": 0, "1": 1, "2": 2, "none": None}


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    exports = {f"reach-{name}": ("Reach", level, None) for name, level in LEVELS.items()}
    exports |= {f"target-{name}": ("Hello", level, None) for name, level in LEVELS.items()}
    tools, source = gateway_module("tools", exports, skill=True)
    spec = RepositorySpec(
        roots=("skills",),
        modules={"tools": tools},
        sources={"tools.source.main": source},
        files={"skills/tools/main.py": GATEWAY},
    )
    return _write(spec, tmp_path_factory.mktemp("ceiling"))


def _reach(config: Path, route: str, *targets: str) -> dict[str, str]:
    request = RouteRequest(caller="tools", target=f"tools.interface.{route}", argv=targets)
    result = Repository.open(config).invoke(request)
    assert result.exit_code == 0, result.stderr
    outcome = json.loads(result.stdout)
    assert isinstance(outcome, dict)
    return outcome


@pytest.mark.parametrize(
    ("target", "outcome"),
    [
        ("0", "hello\n"),
        ("1", "dispatcher.security_level_mismatch"),
        ("2", "dispatcher.security_level_mismatch"),
        ("none", "dispatcher.security_level_unavailable"),
    ],
)
def test_a_route_without_a_level_may_nest_into_level_0_only(
    config: Path, target: str, outcome: str
) -> None:
    interface = f"tools.interface.target-{target}"
    assert _reach(config, "reach-none", interface) == {interface: outcome}


def test_the_ceiling_holds_one_hop_further(config: Path) -> None:
    """none -> level 0 (allowed) -> level 2: refused under the level-0 route's ceiling."""
    chain = "tools.interface.target-0>tools.interface.target-2"
    inner = json.dumps({"tools.interface.target-2": "dispatcher.security_level_mismatch"})
    assert _reach(config, "reach-none", chain) == {chain: inner + "\n"}


@pytest.mark.parametrize("route", ["0", "1", "2"])
def test_routes_with_a_level_keep_their_ceiling(config: Path, route: str) -> None:
    targets = [f"tools.interface.target-{name}" for name in LEVELS]
    expected = {
        f"tools.interface.target-{name}": (
            "dispatcher.security_level_unavailable"
            if level is None
            else "hello\n"
            if level <= int(route)
            else "dispatcher.security_level_mismatch"
        )
        for name, level in LEVELS.items()
    }
    assert _reach(config, f"reach-{route}", *targets) == expected
