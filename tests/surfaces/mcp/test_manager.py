"""Live MCP calls of the setup manager's routes are repository calls: audited like any other.

In process over a real repository on disk (kits.setup_repo) and a real SQLite
ledger: a manager route changes the ledger (``teardown-all``, ``invalidate``,
``authorize``...) without launching a gateway of its own, so the record is
the route's, written whatever it ends with, and a failing sink stops it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from boring_dispatch import Repository
from boring_dispatch.observe.repository_audit import RepositoryAuditEvent
from boring_dispatch.surfaces.mcp._calls import RepositoryCalls
from kits.mcp import read_spans
from kits.setup_repo import CALLER, write_setup_repository

MANAGER = "setup-interface-manager._rtx.interface."
TRACE = "b" * 32


class Keep:
    """Keeps every event; fails every record while ``broken``."""

    def __init__(self) -> None:
        self.events: list[RepositoryAuditEvent] = []
        self.broken = False

    def record(self, event: RepositoryAuditEvent) -> None:
        if self.broken:
            raise OSError("the disk is full")
        self.events.append(event)


def _projection(
    route: str, options: dict[str, object], *, dry_run: bool = False
) -> dict[str, object]:
    return {
        "caller": CALLER,
        "interface": MANAGER + route,
        "version": 1,
        "arguments": {"positionals": [], "options": options, "stdin": None},
        "dry_run": dry_run,
    }


@pytest.fixture
def calls_and_sink(tmp_path: Path) -> tuple[RepositoryCalls, Keep]:
    sink = Keep()
    config = write_setup_repository(tmp_path / "repo")
    repository = Repository.open(config, ledger=str(tmp_path / "ledger.sqlite3"), audit=(sink,))
    return RepositoryCalls(repository), sink


# route, tool, options, expected outcome
CASES = [
    ("teardown-all", "invoke_security_2", {}, "ok"),
    ("status", "invoke_security_2", {"interface": "app.interface.read"}, "ok"),
    ("teardown-all", "invoke_security_0", {}, "dispatcher.security_level_mismatch"),
    ("status", "invoke_security_2", {"no-such-option": "x"}, "dispatcher.invalid_request"),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[3]}" for c in CASES])
def test_a_live_manager_call_leaves_one_record_of_its_own(
    calls_and_sink: tuple[RepositoryCalls, Keep], case: tuple[str, str, dict[str, object], str]
) -> None:
    calls, sink = calls_and_sink
    route, tool, options, outcome = case
    result = calls.call(tool, _projection(route, options), trace_id=TRACE)
    assert result.is_error is (outcome != "ok")
    (record,) = [e for e in sink.events if not e.nested]
    assert record.outcome == outcome
    assert (record.caller, record.interface, record.trace_id) == (CALLER, MANAGER + route, TRACE)
    assert record.exit_code is None  # no gateway of its own ran


def test_a_manager_dry_run_is_not_recorded(calls_and_sink: tuple[RepositoryCalls, Keep]) -> None:
    calls, sink = calls_and_sink
    result = calls.call(
        "invoke_security_2", _projection("teardown-all", {}, dry_run=True), trace_id=TRACE
    )
    assert result.is_error is False
    assert sink.events == []


def test_a_failing_sink_stops_live_manager_calls(
    calls_and_sink: tuple[RepositoryCalls, Keep],
) -> None:
    calls, sink = calls_and_sink
    sink.broken = True  # the full and the minimal record of this call fail: the sink is failing
    calls.call(
        "invoke_security_2",
        _projection("status", {"interface": "app.interface.read"}),
        trace_id=TRACE,
    )
    refused = calls.call("invoke_security_2", _projection("teardown-all", {}), trace_id=TRACE)
    assert refused.is_error is True
    assert "dispatcher.internal_error" in str(refused.structured)
    sink.broken = False
    noticed = calls.call("invoke_security_2", _projection("teardown-all", {}), trace_id=TRACE)
    assert noticed.is_error is True  # still refused; its record is how the sink is noticed
    ran = calls.call("invoke_security_2", _projection("teardown-all", {}), trace_id=TRACE)
    assert ran.is_error is False
    assert [e.outcome for e in sink.events] == ["dispatcher.internal_error", "ok"]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[3]}" for c in CASES])
def test_a_live_manager_call_carries_its_trace_id_as_every_repository_call_does(
    calls_and_sink: tuple[RepositoryCalls, Keep],
    case: tuple[str, str, dict[str, object], str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """docs/mcp.md section 6: every non-dry call, refusals included: result, _meta, span."""
    logs = tmp_path / "logs"
    monkeypatch.setenv("ASSISTANT_LOGS", str(logs))
    calls, _ = calls_and_sink
    route, tool, options, outcome = case
    result = calls.call(tool, _projection(route, options), trace_id=TRACE)
    spans = [s for s in read_spans(logs) if s["name"] == "mcp.tool_call"]
    assert [(s["trace_id"], s["status"]) for s in spans] == [(TRACE, outcome)]
    dispatcher = result.structured["result"]["dispatcher"]  # type: ignore[index]
    assert dispatcher["trace_id"] == TRACE
    assert (result.wire_meta() or {}).get("dev.boring-dispatch/trace_id") == TRACE
    dry = calls.call(tool, _projection(route, options, dry_run=True), trace_id=TRACE)
    assert "trace_id" not in dry.structured["result"]["dispatcher"]  # type: ignore[index]
    assert "dev.boring-dispatch/trace_id" not in (dry.wire_meta() or {})
