"""The gate on live calls: classification, status and authorize, refusals, nested calls."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from boring_dispatch.errors import (
    RuntimeMisconfigured,
    SetupBusy,
    SetupFlowRefused,
    SetupManaged,
    SetupRequired,
    SetupUnavailable,
)
from boring_dispatch.records import RouteRequest
from boring_dispatch.repository.load.config import load_config
from boring_dispatch.repository.load.lookup import ModuleLoader
from boring_dispatch.repository.repository import Repository
from boring_dispatch.setup import service
from boring_dispatch.setup.closure import SetupNode, load_closure
from boring_dispatch.setup.gate import LedgerGate
from boring_dispatch.setup.status import ClosureStatus
from kits.setup_repo import CALLER, LOOKALIKES, write_setup_repository


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    config = write_setup_repository(tmp_path / "repo")
    return Repository.open(config, ledger=str(tmp_path / "ledger.sqlite3"))


def _call(repository: Repository, target: str, flow: str | None = None) -> str:
    request = RouteRequest(CALLER, target, setup_flow_id=flow)
    return repository.invoke(request).stdout.strip()


def _closure(repository: Repository, setup: str) -> tuple[SetupNode, ...]:
    return load_closure(ModuleLoader(load_config(repository.config_path)), setup)


def _gate(repository: Repository) -> LedgerGate:
    gate = repository.setup_gate()
    assert isinstance(gate, LedgerGate)
    return gate


def _make_ready(repository: Repository, setup: str = "app.interface.setup") -> str:
    closure = load_closure(ModuleLoader(load_config(repository.config_path)), setup)
    ledger = _gate(repository).ledger()
    flow = service.begin(ledger, closure, "{}")
    assert not isinstance(flow, ClosureStatus)
    for node in closure:
        service.settle(ledger, flow.flow_id, node, "ready")
    return flow.flow_id


def test_unmanaged_calls_run(repo: Repository) -> None:
    assert _call(repo, "plain.interface.echo") == "echo"


@pytest.mark.parametrize("target", ["app.interface.read", "app._rtx.interface.inner"])
def test_a_managed_target_needs_its_setup_then_runs(repo: Repository, target: str) -> None:
    with pytest.raises(SetupRequired) as refused:
        _call(repo, target)
    status = refused.value.status()
    assert status == {
        "status": "setup_required",
        "setup": "app.interface.setup",
        "version": 1,
        "reason": "absent",
        "call_path": [target],
    }
    _make_ready(repo)
    assert _call(repo, target) == target.rpartition(".")[2]


def test_a_changed_setup_blueprint_requires_setup_again(repo: Repository) -> None:
    _make_ready(repo)
    assert _call(repo, "app.interface.read") == "read"
    blueprint = repo.config_path.parent / "skills" / "base" / "main.yaml"
    blueprint.write_text(blueprint.read_text().replace("Setup", "Work", 1))
    with pytest.raises(SetupRequired) as refused:
        _call(repo, "app.interface.read")
    assert refused.value.reason == "changed"


def test_a_failed_step_is_the_reason(repo: Repository) -> None:
    closure = _closure(repo, "base.interface.setup")
    ledger = _gate(repo).ledger()
    flow = service.begin(ledger, closure, "{}")
    assert not isinstance(flow, ClosureStatus)
    service.settle(ledger, flow.flow_id, closure[0], "failed")
    with pytest.raises(SetupRequired) as refused:
        _call(repo, "base.interface.work")
    assert refused.value.reason == "failed"


def test_an_active_flow_makes_others_busy_and_shows_only_its_id(repo: Repository) -> None:
    closure = _closure(repo, "base.interface.setup")
    flow = service.begin(_gate(repo).ledger(), closure, "{}")
    assert not isinstance(flow, ClosureStatus)
    with pytest.raises(SetupBusy) as busy:
        _call(repo, "app.interface.read")
    assert busy.value.status() == {"status": "setup_busy", "flow_id": flow.flow_id}
    assert _call(repo, "plain.interface.echo") == "echo"


def test_setup_and_teardown_exports_are_intercepted(repo: Repository) -> None:
    for target, setup in (
        ("app.interface.setup", "app.interface.setup"),
        ("base.interface.setup", "base.interface.setup"),
        ("base.interface.teardown", "base.interface.setup"),
    ):
        with pytest.raises(SetupManaged) as managed:
            _call(repo, target)
        assert managed.value.setup == setup
    _make_ready(repo)
    with pytest.raises(SetupManaged):  # even when ready: only the manager runs them
        _call(repo, "base.interface.setup")


def test_the_exact_flow_path(repo: Repository) -> None:
    closure = _closure(repo, "app.interface.setup")
    ledger = _gate(repo).ledger()
    flow = service.begin(ledger, closure, "{}")
    assert not isinstance(flow, ClosureStatus)
    # The current step is base's: app's calls are not part of it yet.
    with pytest.raises(SetupFlowRefused):
        _call(repo, "app._rtx.interface.inner", flow.flow_id)
    assert _call(repo, "base.interface.work", flow.flow_id) == "work"
    service.settle(ledger, flow.flow_id, closure[0], "ready")
    assert _call(repo, "app._rtx.interface.inner", flow.flow_id) == "inner"
    assert _call(repo, "base.interface.work", flow.flow_id) == "work"  # settled earlier
    for wrong in ("0" * 32, "unknown", flow.flow_id + "x"):
        with pytest.raises(SetupFlowRefused):
            _call(repo, "app._rtx.interface.inner", wrong)
    service.settle(ledger, flow.flow_id, closure[1], "ready")
    with pytest.raises(SetupFlowRefused):  # the flow ended: its ID admits nothing more
        _call(repo, "app._rtx.interface.inner", flow.flow_id)
    assert _call(repo, "app._rtx.interface.inner") == "inner"


@pytest.mark.parametrize(
    "outer", ["plain.interface.nest", *(f"{a}.{b}.interface.nest" for a, b in LOOKALIKES)]
)
def test_a_nested_refusal_wins_over_the_gateways_output(repo: Repository, outer: str) -> None:
    with pytest.raises(SetupRequired) as refused:
        _call(repo, outer)
    assert refused.value.call_path == (outer, "app.interface.read")
    _make_ready(repo)
    assert _call(repo, outer) == "NESTED-OK"


def test_the_streaming_path_is_gated_too(repo: Repository) -> None:
    route = repo.resolve(RouteRequest(CALLER, "plain.interface.nest"))
    with pytest.raises(SetupRequired):
        repo.run_streaming(route, stdin=None)


def test_dry_runs_never_reach_the_gate(tmp_path: Path) -> None:
    config = write_setup_repository(tmp_path / "repo")
    ledger = tmp_path / "ledger.sqlite3"
    repository = Repository.open(config, ledger=str(ledger))
    for target in ("app.interface.read", "base.interface.setup", "base.interface.teardown"):
        payload = repository.dry_run(RouteRequest(CALLER, target))
        assert payload["target"] == target
    assert not ledger.exists()


def test_a_repository_module_may_not_take_the_managers_id(tmp_path: Path) -> None:
    config = write_setup_repository(tmp_path / "repo")
    skills = config.parent / "skills"
    src = skills / "setup-interface-managers"
    dst = skills / "setup-interface-manager"
    for path in sorted(src.rglob("*")):
        target = dst / path.relative_to(src)
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(
                path.read_text().replace("setup-interface-managers", "setup-interface-manager")
            )
    repository = Repository.open(config, ledger=str(tmp_path / "l.sqlite3"))
    with pytest.raises(RuntimeMisconfigured, match="reserved"):
        _call(repository, "setup-interface-manager._rtx.interface.nest")


def test_an_unreachable_postgresql_fails_closed(tmp_path: Path) -> None:
    config = write_setup_repository(tmp_path / "repo")
    repository = Repository.open(config, ledger="postgresql://nobody@127.0.0.1:1/none")
    with pytest.raises(SetupUnavailable):
        _call(repository, "app.interface.read")
    assert _call(repository, "plain.interface.echo") == "echo"


_PROBE = textwrap.dedent(
    """
    import json, sys
    events = []
    def hook(event, args):
        if event == "sqlite3.connect" or (event == "open" and "boring-dispatch" in str(args[0])):
            events.append(event)
    sys.addaudithook(hook)
    from boring_dispatch import Repository, RouteRequest
    repository = Repository.open(sys.argv[1])
    result = repository.invoke(RouteRequest("host", sys.argv[2]))
    loaded = sorted(m for m in sys.modules if m.startswith("boring_dispatch.setup.ledger"))
    print(json.dumps({"stdout": result.stdout, "events": events,
                      "sqlite3": "sqlite3" in sys.modules, "ledger_modules": loaded}))
    """
)


def test_unmanaged_calls_never_touch_the_ledger(tmp_path: Path) -> None:
    config = write_setup_repository(tmp_path / "repo")
    state = tmp_path / "state"
    env = {"PATH": "/usr/bin:/bin", "XDG_STATE_HOME": str(state), "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(config), "plain.interface.echo"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=True,
    )
    report = json.loads(done.stdout)
    assert report == {"stdout": "echo\n", "events": [], "sqlite3": False, "ledger_modules": []}
    assert not state.exists()
    # The same probe on a managed target does open the ledger (the hook sees it).
    managed = subprocess.run(
        [sys.executable, "-c", _PROBE, str(config), "app.interface.read"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert "SetupRequired" in managed.stderr
    assert any(state.rglob("ledger-*.sqlite3"))
