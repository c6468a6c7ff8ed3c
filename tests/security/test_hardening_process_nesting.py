"""Nested calls have a depth limit and a per-call process budget, kept by the dispatcher.

A gateway that calls its own export through ``self.dispatch`` used to recurse
until the machine ran out of memory (depth 277, 3.9 GB in 15 s). The parent
broker now refuses a nested call deeper than ``ExecLimits.max_nested_depth``
and any launch past ``ExecLimits.max_gateway_processes`` for one top-level
call, with ``dispatcher.nested_limit_exceeded``. Real gateways recurse, fan
out and build trees here; a pure model of the rule predicts every outcome.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from boring_dispatch import Repository
from boring_dispatch.errors import RouteError
from boring_dispatch.records import ExecLimits, RouteRequest
from kits.cases import RepositorySpec, _write
from kits.mcp import gateway_module

REFUSED = "dispatcher.nested_limit_exceeded"

GATEWAY = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from boring_dispatch import gateway
    from boring_dispatch.process import context as gateway_context
    from boring_dispatch._value import replace
    from boring_dispatch.errors import DispatchError


    class Recurse(gateway.ArgvInterface):
        # Calls its own export until refused; the deepest one reports its depth.
        def run(self, argv):
            depth = int(argv[0]) if argv else 0
            if len(argv) > 1 and argv[1] == "forge":
                # Whatever this process believes about itself, the parent decides.
                gateway_context._CONTEXT[0] = replace(
                    gateway.runtime_context(), module_id="other", level=None,
                    config_path=Path("/nonexistent/officina.toml"),
                )
            try:
                result = self.dispatch(
                    "tools.interface.recurse", version=1, positionals=[str(depth + 1), *argv[1:]]
                )
            except DispatchError as error:
                print(json.dumps({"depth": depth, "refused": error.code}))
                return 0
            sys.stdout.write(result.stdout)
            return 0 if result.ok else 1


    class Tree(gateway.ArgvInterface):
        # argv = fan-out per level ("3", "2" -> three children with "2" -> two leaves each).
        def run(self, argv):
            outcomes = []
            for _ in range(int(argv[0]) if argv else 0):
                try:
                    result = self.dispatch(
                        "tools.interface.tree", version=1, positionals=list(argv[1:])
                    )
                except DispatchError as error:
                    outcomes.append(error.code)
                    continue
                outcomes.append(json.loads(result.stdout) if result.ok else result.exit_code)
            print(json.dumps(outcomes))
            return 0
    """
)


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tools, source = gateway_module(
        "tools", {"recurse": ("Recurse", 0, None), "tree": ("Tree", 0, None)}, skill=True
    )
    spec = RepositorySpec(
        roots=("skills",),
        modules={"tools": tools},
        sources={"tools.source.main": source},
        files={"skills/tools/main.py": GATEWAY},
    )
    return _write(spec, tmp_path_factory.mktemp("nesting"))


def _invoke(config: Path, export: str, argv: Sequence[str], limits: ExecLimits) -> object:
    request = RouteRequest(caller="tools", target=f"tools.interface.{export}", argv=tuple(argv))
    result = Repository.open(config).invoke(request, limits=limits)
    assert result.ok, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize(
    ("max_depth", "forge"), [(0, False), (0, True), (1, True), (3, False), (3, True)]
)
def test_a_self_recursive_gateway_is_refused_at_the_configured_depth(
    config: Path, max_depth: int, forge: bool
) -> None:
    limits = ExecLimits(timeout_s=60.0, max_nested_depth=max_depth)
    argv = ["0", "forge"] if forge else ["0"]
    began = time.monotonic()
    seen = _invoke(config, "recurse", argv, limits)
    assert seen == {"depth": max_depth, "refused": REFUSED}
    assert time.monotonic() - began < 30


def test_the_default_depth_limit_stops_a_self_recursive_gateway_quickly(config: Path) -> None:
    # The finding: without a limit this recursed to depth 277 in 15 s.
    default = ExecLimits()
    assert 1 <= default.max_nested_depth <= 16
    began = time.monotonic()
    seen = _invoke(config, "recurse", ["0"], ExecLimits(timeout_s=60.0))
    assert seen == {"depth": default.max_nested_depth, "refused": REFUSED}
    assert time.monotonic() - began < 30


def _model(shape: Sequence[int], depth: int, state: list[int], limits: ExecLimits) -> list[object]:
    """What the Tree gateway at ``depth`` prints: the rule, written out for a sequential tree."""
    outcomes: list[object] = []
    for _ in range(shape[0] if shape else 0):
        if depth + 1 > limits.max_nested_depth or state[0] >= limits.max_gateway_processes:
            outcomes.append(REFUSED)
            continue
        state[0] += 1
        outcomes.append(_model(shape[1:], depth + 1, state, limits))
    return outcomes


@pytest.mark.parametrize(
    ("shape", "max_processes", "max_depth"),
    [
        ((5,), 1, 8),  # a budget of one: the top-level gateway itself, no nested call
        ((5,), 3, 8),  # fan-out: two nested calls, then refusals
        ((3,), 64, 8),  # under the budget: every call runs
        ((2, 2), 4, 8),  # a tree: the budget is shared across levels
        ((2, 2), 64, 1),  # a tree cut by depth, not by budget
        ((1, 1, 3), 4, 8),  # a chain that fans out at the bottom
    ],
)
def test_fan_out_and_trees_share_one_process_budget_per_top_level_call(
    config: Path, shape: tuple[int, ...], max_processes: int, max_depth: int
) -> None:
    limits = ExecLimits(
        timeout_s=60.0, max_gateway_processes=max_processes, max_nested_depth=max_depth
    )
    expected = _model(shape, 0, [1], limits)
    assert _invoke(config, "tree", [str(n) for n in shape], limits) == expected


def test_the_budget_is_per_top_level_call(config: Path) -> None:
    limits = ExecLimits(timeout_s=60.0, max_gateway_processes=2)
    for _ in range(2):  # the second call starts afresh
        assert _invoke(config, "tree", ["2"], limits) == [[], REFUSED]


def test_the_cli_stops_a_self_recursive_gateway_at_the_default_depth(config: Path) -> None:
    script = Path(sys.executable).with_name("dispatcher")
    command = [str(script), "--config", str(config), "--caller-skill", "tools"]
    done = subprocess.run(
        [*command, "tools.interface.recurse", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen == {"depth": ExecLimits().max_nested_depth, "refused": REFUSED}


@pytest.mark.parametrize(
    "limits",
    [
        ExecLimits(max_nested_depth=-1),
        ExecLimits(max_nested_depth=10**6),
        ExecLimits(max_nested_depth=True),
        ExecLimits(max_nested_depth=2.0),  # type: ignore[arg-type]
        ExecLimits(max_gateway_processes=0),
        ExecLimits(max_gateway_processes=-3),
        ExecLimits(max_gateway_processes=None),  # type: ignore[arg-type]
        ExecLimits(max_gateway_processes=float("inf")),  # type: ignore[arg-type]
    ],
)
def test_nesting_limits_out_of_range_are_a_structured_refusal(
    config: Path, limits: ExecLimits
) -> None:
    request = RouteRequest(caller="tools", target="tools.interface.tree", argv=("1",))
    with pytest.raises(RouteError) as caught:
        Repository.open(config).invoke(request, limits=limits)
    assert caught.value.code == "dispatcher.runtime_misconfigured"
