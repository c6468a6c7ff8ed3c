"""The argv caps have one definition, and no later stage refuses what the binding admits."""

from __future__ import annotations

from pathlib import Path

import pytest

from boring_dispatch import _limits
from boring_dispatch._value import replace
from boring_dispatch.errors import InvalidRouteRequest, ResolutionFailed
from boring_dispatch.process import _argv, launch
from boring_dispatch.records import CompiledBinding
from boring_dispatch.repository.bind import binding
from boring_dispatch.repository.projection import projection_argv
from boring_dispatch.surfaces.mcp import _calls as _mcp_calls
from kits.gateways import make_repo, make_route


def test_every_stage_uses_the_same_caps() -> None:
    for module in (binding, _argv, launch):
        assert module.MAX_ARGV_TOKENS is _limits.MAX_ARGV_TOKENS
        assert module.MAX_TOKEN_BYTES is _limits.MAX_TOKEN_BYTES
        assert module.MAX_ARGV_BYTES is _limits.MAX_ARGV_BYTES
    assert _mcp_calls.MAX_TOKEN_BYTES is _limits.MAX_TOKEN_BYTES


def _command(tokens: tuple[str, ...], tmp_path: Path) -> tuple[str, ...]:
    route = make_route(make_repo(tmp_path))
    route = replace(
        route, binding=CompiledBinding(command=tokens, pattern="", takes_stdin=False, entry="Echo")
    )
    return launch.child_argv(route)


def test_a_command_at_every_cap_reaches_the_launcher_unrefused(tmp_path: Path) -> None:
    count = _limits.MAX_ARGV_BYTES // _limits.MAX_TOKEN_BYTES
    at_bytes = ("x" * _limits.MAX_TOKEN_BYTES,) * count
    assert _command(at_bytes, tmp_path)[-count:] == at_bytes
    at_count = ("x",) * _limits.MAX_ARGV_TOKENS
    assert _command(at_count, tmp_path / "b")[-len(at_count) :] == at_count


@pytest.mark.parametrize(
    "tokens",
    [
        ("x",) * (_limits.MAX_ARGV_TOKENS + 1),
        ("x" * (_limits.MAX_TOKEN_BYTES + 1),),
        ("x" * _limits.MAX_TOKEN_BYTES,) * (_limits.MAX_ARGV_BYTES // _limits.MAX_TOKEN_BYTES + 1),
    ],
)
def test_the_launcher_backstop_refuses_a_command_over_a_cap(
    tokens: tuple[str, ...], tmp_path: Path
) -> None:
    with pytest.raises(ResolutionFailed) as caught:
        _command(tokens, tmp_path)
    assert caught.value.code == "dispatcher.resolution_failed"
    assert caught.value.reason is None  # the launcher's backstop, not a bind-stage check


def test_a_projection_over_the_token_cap_is_refused() -> None:
    assert len(projection_argv(["p"] * _limits.MAX_ARGV_TOKENS, {})) == _limits.MAX_ARGV_TOKENS
    with pytest.raises(InvalidRouteRequest) as caught:
        projection_argv(["p"] * (_limits.MAX_ARGV_TOKENS + 1), {})
    assert caught.value.code == "dispatcher.invalid_request"
