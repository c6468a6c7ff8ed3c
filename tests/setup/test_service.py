"""The exact-flow path (``setup_flow_id``) against the ledger's current state.

A call carrying the active flow's ID is admitted for the flow's current step
and for what is ready; it is never admitted for a setup that is no longer
ready (invalidated, its blueprint changed) since the flow began, and it is
never refused where the same call without the ID would run.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from boring_dispatch.errors import SetupFlowRefused
from boring_dispatch.records import RouteRequest
from boring_dispatch.repository.repository import Repository
from boring_dispatch.setup.manager.routes import SetupManager
from kits.setup_repo import CALLER, write_setup_repository

RESUME = json.dumps({"caller": CALLER, "interface": "app.interface.read", "version": 1})


@pytest.fixture
def manager(tmp_path: Path) -> SetupManager:
    config = write_setup_repository(tmp_path / "repo")
    return SetupManager(Repository.open(config, ledger=str(tmp_path / "ledger.sqlite3")))


def _call(manager: SetupManager, target: str, flow: str | None = None) -> str:
    request = RouteRequest(CALLER, target, setup_flow_id=flow)
    return manager.repository.invoke(request).stdout.strip()


def _base_ready_then_app_flow(manager: SetupManager) -> str:
    """``base`` set up by a first flow; then the flow of ``app`` alone (its Markdown step)."""
    began = manager.call("begin", CALLER, {"setup": "base.interface.setup@1", "resume": RESUME})
    ran = manager.call("run-python", CALLER, {"flow": began["flow_id"]})
    assert ran["status"] == "completed"
    began = manager.call("begin", CALLER, {"setup": "app.interface.setup@1", "resume": RESUME})
    assert began["step"] == "app.interface.setup@1"
    flow = began["flow_id"]
    assert isinstance(flow, str)
    return flow


@pytest.mark.parametrize("target", ["base.interface.work"])
def test_a_flow_call_of_a_ready_setup_outside_the_flow_runs(
    manager: SetupManager, target: str
) -> None:
    flow = _base_ready_then_app_flow(manager)
    expected = _call(manager, target)  # runs without the flow's ID: base is ready
    # The Markdown step may well ask for a call of its ready prerequisite: the
    # flow's ID must not turn an admitted call into a refusal.
    assert _call(manager, target, flow) == expected
    allowed = manager.call("authorize-markdown-call", CALLER, {"flow": flow, "interface": target})
    assert allowed["status"] == "authorized"


def _invalidate_base(manager: SetupManager) -> None:
    manager.call("invalidate", CALLER, {"setup": "base.interface.setup"})


def _change_base(manager: SetupManager) -> None:
    blueprint = manager.repository.config_path.parent / "skills" / "base" / "main.yaml"
    blueprint.write_text(blueprint.read_text().replace("Setup", "Work", 1))


@pytest.mark.parametrize("spoil", [_invalidate_base, _change_base], ids=["invalidated", "changed"])
@pytest.mark.parametrize(
    "target", ["app.interface.read", "app._rtx.interface.inner", "base.interface.work"]
)
def test_a_flow_call_is_refused_once_a_setup_it_needs_is_not_ready(
    manager: SetupManager, spoil: Callable[[SetupManager], None], target: str
) -> None:
    flow = _base_ready_then_app_flow(manager)
    assert _call(manager, target, flow) == target.rpartition(".")[2]
    spoil(manager)
    # base is no longer ready: app's step needs it, and base's own calls need it.
    with pytest.raises(SetupFlowRefused):
        _call(manager, target, flow)
    with pytest.raises(SetupFlowRefused):
        manager.call("authorize-markdown-call", CALLER, {"flow": flow, "interface": target})


@pytest.mark.parametrize("spoil", [_invalidate_base, _change_base], ids=["invalidated", "changed"])
def test_a_step_settled_by_the_flow_counts_only_while_it_is_still_ready(
    manager: SetupManager, spoil: Callable[[SetupManager], None]
) -> None:
    began = manager.call("begin", CALLER, {"setup": "app.interface.setup@1", "resume": RESUME})
    flow = began["flow_id"]
    assert isinstance(flow, str)
    manager.call("run-python", CALLER, {"flow": flow})  # base settled ready by this flow
    assert _call(manager, "base.interface.work", flow) == "work"
    spoil(manager)
    with pytest.raises(SetupFlowRefused):
        _call(manager, "base.interface.work", flow)
