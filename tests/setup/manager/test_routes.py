"""The manager's routes through the Python API: a whole flow, bad input, leases, lifecycle."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from boring_dispatch.errors import (
    InvalidRouteRequest,
    RouteError,
    SecurityLevelMismatch,
    SetupBusy,
    SetupFlowRefused,
    SetupGraphInvalid,
    SetupRequired,
)
from boring_dispatch.records import RouteRequest
from boring_dispatch.repository.repository import Repository
from boring_dispatch.setup.manager.routes import SetupManager
from kits.setup_repo import CALLER, write_setup_repository

RESUME = json.dumps({"caller": CALLER, "interface": "app.interface.read", "version": 1})


@pytest.fixture
def ledger_path(tmp_path: Path) -> Path:
    return tmp_path / "ledger.sqlite3"


@pytest.fixture
def manager(tmp_path: Path, ledger_path: Path) -> SetupManager:
    config = write_setup_repository(tmp_path / "repo")
    return SetupManager(Repository.open(config, ledger=str(ledger_path)))


def _snapshot(path: Path) -> list[object]:
    with sqlite3.connect(path) as connection:
        return [
            connection.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()  # noqa: S608
            for table in ("setups", "flows", "events")
        ]


def _control(manager: SetupManager, mode: str) -> None:
    (manager.repository.config_path.parent / "skills" / "base" / "control.txt").write_text(mode)


def _begin(manager: SetupManager) -> dict[str, object]:
    return manager.call("begin", CALLER, {"setup": "app.interface.setup@1", "resume": RESUME})


def _opts(result: dict[str, object]) -> dict[str, object]:
    request = result["manager"]
    assert isinstance(request, dict)
    arguments = request["arguments"]
    assert isinstance(arguments, dict)
    options = arguments["options"]
    assert isinstance(options, dict)
    return options


def test_a_whole_flow_ends_with_the_resumed_call(manager: SetupManager) -> None:
    repository = manager.repository
    with pytest.raises(SetupRequired):
        repository.invoke(RouteRequest(CALLER, "app.interface.read"))
    status = manager.call("status", CALLER, {"interface": "app.interface.read"})
    assert status["status"] == "setup_required"
    setups: Any = status["setups"]
    assert [s["state"] for s in setups] == ["absent", "absent"]

    began = _begin(manager)
    assert (began["status"], began["step"]) == ("step", "base.interface.setup@1")
    assert began["manager"]["interface"] == "setup-interface-manager._rtx.interface.run-python"  # type: ignore[index]
    flow = began["flow_id"]
    assert isinstance(flow, str)

    ran = manager.call("run-python", CALLER, _opts(began))
    assert ran["ran"] == {
        "setup": "base.interface.setup@1",
        "ok": True,
        "exit_code": 0,
        "stdout": "setup ok\n",
        "stderr": "",
    }
    assert ran["step"] == "app.interface.setup@1"

    markdown = manager.call("run-markdown", CALLER, _opts(ran))
    assert markdown["setup_flow_id"] == flow
    assert "Call app._rtx.interface.inner" in str(markdown["markdown"])
    # The calls the Markdown asks for, made with the flow's ID.
    assert (
        manager.call(
            "authorize-markdown-call",
            CALLER,
            {"flow": flow, "interface": "app._rtx.interface.inner"},
        )["status"]
        == "authorized"
    )
    inner = repository.invoke(RouteRequest(CALLER, "app._rtx.interface.inner", setup_flow_id=flow))
    assert inner.stdout == "inner\n"

    settle = markdown["settle"]
    assert isinstance(settle, dict)
    done = manager.call("settle", CALLER, settle["arguments"]["options"])
    assert done["status"] == "completed"
    assert done["resume"] == {
        "tool": "invoke_security_0",
        "request": {
            "caller": CALLER,
            "interface": "app.interface.read",
            "version": 1,
            "arguments": {"positionals": [], "options": {}, "stdin": None},
            "dry_run": False,
        },
    }
    assert repository.invoke(RouteRequest(CALLER, "app.interface.read")).stdout == "read\n"
    assert manager.call("status", CALLER, {"interface": "app.interface.read"})["status"] == "ready"
    assert (
        manager.call("authorize", CALLER, {"interface": "app.interface.read"})["status"] == "ready"
    )
    # Begin again when everything is ready: nothing to do, the resumed call straight away.
    assert _begin(manager)["status"] == "ready"


def test_a_failing_python_step_fails_the_flow(manager: SetupManager) -> None:
    _control(manager, "fail")
    ran = manager.call("run-python", CALLER, _opts(_begin(manager)))
    assert ran["ran"]["ok"] is False  # type: ignore[index]
    assert ran["status"] == "failed"
    with pytest.raises(SetupRequired) as refused:
        manager.repository.invoke(RouteRequest(CALLER, "base.interface.work"))
    assert refused.value.reason == "failed"
    _control(manager, "ok")
    again = manager.call("begin", CALLER, {"setup": "base.interface.setup", "resume": RESUME})
    assert manager.call("run-python", CALLER, _opts(again))["status"] == "completed"


def test_one_active_flow_at_a_time(manager: SetupManager) -> None:
    began = _begin(manager)
    with pytest.raises(SetupBusy) as busy:
        manager.call("begin", CALLER, {"setup": "base.interface.setup@1", "resume": RESUME})
    assert busy.value.flow_id == began["flow_id"]


@pytest.mark.parametrize(
    ("route", "options", "error"),
    [
        ("begin", {"setup": "app.interface.read@1", "resume": RESUME}, SetupGraphInvalid),
        ("begin", {"setup": "app.interface.setup@2", "resume": RESUME}, SetupGraphInvalid),
        ("begin", {"setup": "nope", "resume": RESUME}, SetupGraphInvalid),
        ("begin", {"setup": "app.interface.setup@1", "resume": "{}"}, InvalidRouteRequest),
        ("begin", {"setup": "app.interface.setup@1", "resume": "[1]"}, InvalidRouteRequest),
        (
            "begin",
            {
                "setup": "app.interface.setup@1",
                "resume": '{"caller":"h","interface":"x","version":1,"caller":"y"}',
            },
            InvalidRouteRequest,
        ),
        ("begin", {"setup": "app.interface.setup@1"}, InvalidRouteRequest),
        (
            "begin",
            {"setup": "app.interface.setup@1", "resume": RESUME, "x": "1"},
            InvalidRouteRequest,
        ),
        ("begin", {"setup": 1, "resume": RESUME}, InvalidRouteRequest),
        (
            "settle",
            {"flow": "0" * 32, "setup": "app.interface.setup@1", "outcome": "ready"},
            SetupFlowRefused,
        ),
        (
            "settle",
            {"flow": "F", "setup": "app.interface.setup@1", "outcome": "ready"},
            SetupFlowRefused,
        ),
        (
            "settle",
            {"flow": "F", "setup": "base.interface.setup@1", "outcome": "ready"},
            SetupFlowRefused,
        ),
        (
            "settle",
            {"flow": "F", "setup": "base.interface.setup@1", "outcome": "maybe"},
            InvalidRouteRequest,
        ),
        ("run-markdown", {"flow": "F"}, SetupFlowRefused),
        ("run-python", {"flow": "unknown"}, SetupFlowRefused),
        ("recover", {"flow": "unknown"}, SetupFlowRefused),
        ("no-such-route", {}, InvalidRouteRequest),
        ("teardown", {"setup": "app.interface.read"}, SetupGraphInvalid),
        ("invalidate", {"setup": "zz.interface.setup"}, SetupGraphInvalid),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(
    manager: SetupManager,
    ledger_path: Path,
    route: str,
    options: dict[str, object],
    error: type[RouteError],
) -> None:
    flow = _begin(manager)["flow_id"]
    before = _snapshot(ledger_path)
    filled = {k: (flow if v == "F" else v) for k, v in options.items()}
    with pytest.raises(error) as raised:
        manager.call(route, CALLER, filled)
    assert raised.value.code.startswith("dispatcher.")
    assert _snapshot(ledger_path) == before


def _expire(ledger_path: Path) -> None:
    with sqlite3.connect(ledger_path) as connection:
        connection.execute("UPDATE flows SET lease_expires_at = 0 WHERE state = 'active'")


def test_recover_and_recover_busy_need_an_expired_lease(
    manager: SetupManager, ledger_path: Path
) -> None:
    flow = _begin(manager)["flow_id"]
    with sqlite3.connect(ledger_path) as connection:  # a runner that died mid-step
        connection.execute("UPDATE flows SET step_state = 'running'")
    assert manager.call("recover", CALLER, {"flow": flow})["recovered"] is False
    assert manager.call("recover-busy", CALLER, {"flow": flow})["status"] == "active"
    _expire(ledger_path)
    recovered = manager.call("recover", CALLER, {"flow": flow})
    assert recovered["recovered"] is True
    assert manager.call("run-python", CALLER, _opts(recovered))["status"] == "step"
    _expire(ledger_path)
    assert manager.call("recover-busy", CALLER, {"flow": flow})["status"] == "abandoned"
    assert _begin(manager)["status"] == "step"  # the lock is free again


def _complete(manager: SetupManager) -> None:
    ran = manager.call("run-python", CALLER, _opts(_begin(manager)))
    markdown = manager.call("run-markdown", CALLER, _opts(ran))
    settle = markdown["settle"]
    assert isinstance(settle, dict)
    assert manager.call("settle", CALLER, settle["arguments"]["options"])["status"] == "completed"


def test_invalidate_marks_dependents(manager: SetupManager) -> None:
    _complete(manager)
    result = manager.call("invalidate", CALLER, {"setup": "base.interface.setup"})
    assert result["setups"] == ["base.interface.setup", "app.interface.setup"]
    with pytest.raises(SetupRequired) as refused:
        manager.repository.invoke(RouteRequest(CALLER, "app.interface.read"))
    assert refused.value.reason == "invalidated"


def test_teardown_refuses_ready_dependents_unless_cascade(manager: SetupManager) -> None:
    _complete(manager)
    with pytest.raises(SetupFlowRefused):
        manager.call("teardown", CALLER, {"setup": "base.interface.setup"})
    done = manager.call("teardown", CALLER, {"setup": "base.interface.setup", "cascade": True})
    assert done["setups"] == ["app.interface.setup", "base.interface.setup"]
    teardowns: Any = done["teardowns"]
    assert [t["teardown"] for t in teardowns] == [
        "app.interface.teardown",
        "base.interface.teardown",
    ]
    with pytest.raises(SetupRequired):
        manager.repository.invoke(RouteRequest(CALLER, "base.interface.work"))
    _complete(manager)
    everything = manager.call("teardown-all", CALLER, {})
    assert everything["setups"] == ["app.interface.setup", "base.interface.setup"]


def test_status_of_an_unmanaged_interface(manager: SetupManager) -> None:
    result = manager.call("status", CALLER, {"interface": "plain.interface.echo"})
    assert (result["status"], result["managed"]) == ("ready", False)


def test_only_level_2_reaches_the_manager_over_mcp(manager: SetupManager) -> None:
    from boring_dispatch.surfaces.mcp._calls import RepositoryCalls

    calls = RepositoryCalls(manager.repository)
    projection = {
        "caller": CALLER,
        "interface": "setup-interface-manager._rtx.interface.status",
        "version": 1,
        "arguments": {"positionals": [], "options": {"interface": "app.interface.read"}},
    }
    refused = calls.call("invoke_security_0", projection, trace_id="t" * 32)
    error = refused.structured["result"]["dispatcher"]["error"]  # type: ignore[index]
    assert error["code"] == SecurityLevelMismatch.code
    ok = calls.call("invoke_security_2", projection, trace_id="t" * 32)
    assert ok.structured["result"]["dispatcher"]["setup"]["status"] == "setup_required"  # type: ignore[index]


def _at_markdown_step(manager: SetupManager) -> str:
    ran = manager.call("run-python", CALLER, _opts(_begin(manager)))
    assert ran["step"] == "app.interface.setup@1"
    flow = ran["flow_id"]
    assert isinstance(flow, str)
    return flow


_IN_USE = {
    "run-markdown": lambda m, f: m.call("run-markdown", CALLER, {"flow": f}),
    "authorize-markdown-call": lambda m, f: m.call(
        "authorize-markdown-call", CALLER, {"flow": f, "interface": "app._rtx.interface.inner"}
    ),
    "flow-call": lambda m, f: m.repository.invoke(
        RouteRequest(CALLER, "app._rtx.interface.inner", setup_flow_id=f)
    ),
}


@pytest.mark.parametrize("use", sorted(_IN_USE))
def test_a_flow_in_use_renews_its_lease(manager: SetupManager, ledger_path: Path, use: str) -> None:
    # A Markdown step can take long (a person creates an account): the flow's
    # lease is renewed by every route on it and by the calls made for it, so
    # recover-busy frees a flow nobody works on, never one in use.
    flow = _at_markdown_step(manager)
    _expire(ledger_path)  # as long after begin as the flow lease lasts
    _IN_USE[use](manager, flow)
    assert manager.call("recover-busy", CALLER, {"flow": flow})["status"] == "active"
    settle = {"flow": flow, "setup": "app.interface.setup@1", "outcome": "ready"}
    assert manager.call("settle", CALLER, settle)["status"] == "completed"


def test_calls_of_what_is_ready_do_not_keep_a_flow_alive(
    manager: SetupManager, ledger_path: Path
) -> None:
    # Anyone who saw setup_busy knows the flow's ID: calls of ready setups that
    # carry it are admitted, but must not renew the flow (a flow nobody works on
    # would otherwise be kept busy for ever, and no other setup could begin).
    flow = _at_markdown_step(manager)  # base is ready now, app's step is current
    _expire(ledger_path)
    assert manager.repository.invoke(
        RouteRequest(CALLER, "base.interface.work", setup_flow_id=flow)
    ).ok
    assert manager.call("recover-busy", CALLER, {"flow": flow})["status"] == "abandoned"
