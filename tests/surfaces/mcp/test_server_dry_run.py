"""A call that asks for a dry run takes one plain thread hop: its preparation never launches."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boring_dispatch.process._argv import _limits_token
from boring_dispatch.records import ExecLimits
from boring_dispatch.repository.repository import Repository
from boring_dispatch.surfaces.mcp._calls import RepositoryCalls
from boring_dispatch.surfaces.mcp._manager import MANAGER_PREFIX
from boring_dispatch.surfaces.mcp._results import ToolOutcome
from boring_dispatch.surfaces.mcp.server import _asks_dry_run
from kits.mcp import CALLER, INTERFACES, projection, write_tools_repository

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
_TRUTHY_NOT_TRUE = st.sampled_from([1, "true", "yes", [True], {"x": True}, 1.0])


@given(_JSON)
def test_only_an_object_whose_dry_run_is_exactly_true_asks_for_one(value: object) -> None:
    expected = type(value) is dict and value.get("dry_run") is True
    assert _asks_dry_run(value) is expected


@given(_TRUTHY_NOT_TRUE)
def test_a_truthy_dry_run_that_is_not_true_asks_for_none(flag: object) -> None:
    assert not _asks_dry_run({"dry_run": flag})


@pytest.fixture(scope="module")
def calls(tmp_path_factory: pytest.TempPathFactory) -> RepositoryCalls:
    config = write_tools_repository(tmp_path_factory.mktemp("repo"))
    return RepositoryCalls(Repository.open(config))


_INTERFACE = st.sampled_from(
    [
        *(f"tools.interface.{name}" for name in INTERFACES),
        "tools.interface.missing",
        MANAGER_PREFIX + "status",
        MANAGER_PREFIX + "run",
        "no-dot",
    ]
)
_PROJECTION = st.fixed_dictionaries(
    {
        "caller": st.sampled_from([CALLER, "other", "nobody"]),
        "interface": _INTERFACE,
        "dry_run": st.just(value=True),
    },
    optional={
        "version": st.sampled_from([1, 2, None, "1"]),
        "arguments": st.fixed_dictionaries(
            {},
            optional={
                "positionals": st.lists(st.text(max_size=6), max_size=3),
                "options": st.dictionaries(st.sampled_from(["--a", "b", "--c"]), _JSON, max_size=2),
                "stdin": st.none() | st.text(max_size=6),
            },
        ),
        "setup_flow_id": st.text(max_size=4),
        "extra": _JSON,
    },
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(arguments=_PROJECTION, tier=st.integers(min_value=0, max_value=3))
def test_preparing_a_call_that_asks_for_a_dry_run_never_yields_a_launch(
    calls: RepositoryCalls, arguments: dict[str, object], tier: int
) -> None:
    assert _asks_dry_run(arguments)
    step = calls.prepare(f"invoke_security_{tier}", arguments, trace_id="0" * 31 + "1")
    assert isinstance(step, ToolOutcome)  # a result or a refusal, never a launch


@pytest.mark.parametrize(
    "name", [n for n, spec in INTERFACES.items() if spec[3] is not None and n != "private"]
)
def test_the_family_reaches_real_dry_runs(calls: RepositoryCalls, name: str) -> None:
    level = INTERFACES[name][3]
    step = calls.prepare(
        f"invoke_security_{level}", projection(name, dry_run=True), trace_id="0" * 31 + "1"
    )
    assert isinstance(step, ToolOutcome)
    assert not step.is_error, step.structured
    assert "dry_run" in step.structured["result"]["dispatcher"]  # type: ignore[index]


@pytest.mark.parametrize("timeout", [0.5, 5.0, 61.0, 604800.0])
@pytest.mark.parametrize("interface", ["echo", "write-own", "fetch"])
def test_a_dry_run_shows_the_child_argv_with_the_servers_limits(
    tmp_path_factory: pytest.TempPathFactory, timeout: float, interface: str
) -> None:
    # "the full child argv": the --limits token a live call of this server would pass.
    config = write_tools_repository(tmp_path_factory.mktemp("repo"))
    limits = ExecLimits(timeout_s=timeout, max_output_bytes=4096)
    server_calls = RepositoryCalls(Repository.open(config), limits=limits)
    tool = f"invoke_security_{INTERFACES[interface][3]}"
    outcome = server_calls.prepare(tool, projection(interface, dry_run=True), trace_id="t" * 32)
    assert isinstance(outcome, ToolOutcome)
    payload = outcome.structured["result"]["dispatcher"]["dry_run"]  # type: ignore[index]
    tokens = [t for t in payload["argv"] if t.startswith("--limits=")]
    assert tokens == [f"--limits={_limits_token(limits)}"]
