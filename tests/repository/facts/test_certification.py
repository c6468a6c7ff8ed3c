"""certification_warnings: advisory currentness warnings (BLUEPRINTS-V6 section 8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from boring_dispatch.records import ModuleRecord, RouteWarning
from boring_dispatch.repository.facts.certification import certification_warnings

SOURCE = "list-manager._rtx.source.rtx-yaml-store"


def record(module_id: str) -> ModuleRecord:
    return ModuleRecord(
        module_id=module_id, root=Path("/r"), configured_root=Path("/r"), version=1, data={}
    )


CALLER = (record("daily-plan"),)
TARGET = (record("list-manager"), record("list-manager._rtx"))


def test_without_a_status_mapping_there_is_exactly_one_unavailable_warning() -> None:
    warnings = certification_warnings(CALLER, TARGET, SOURCE, None)
    assert warnings == (
        RouteWarning(
            code="certification-status-unavailable",
            message="precomputed certification status is unavailable",
        ),
    )
    assert warnings[0].to_dict() == {
        "code": "certification-status-unavailable",
        "message": "precomputed certification status is unavailable",
    }


def test_a_value_that_is_not_a_mapping_counts_as_no_status() -> None:
    warnings = certification_warnings(CALLER, TARGET, SOURCE, ["current"])  # type: ignore[arg-type]
    assert [w.code for w in warnings] == ["certification-status-unavailable"]


def test_all_current_gives_no_warning() -> None:
    status = dict.fromkeys(["daily-plan", "list-manager", "list-manager._rtx", SOURCE], "current")
    assert certification_warnings(CALLER, TARGET, SOURCE, status) == ()


def test_each_node_that_is_not_current_warns_in_order_with_its_subject() -> None:
    status: dict[str, object] = {
        "daily-plan": "stale",
        "list-manager": "current",
        "list-manager._rtx": 7,
        SOURCE: "expired",
    }
    warnings = certification_warnings(CALLER, TARGET, SOURCE, status)
    assert warnings == (
        RouteWarning(
            "certification-stale", "certification status for daily-plan is stale", "daily-plan"
        ),
        RouteWarning(
            "certification-malformed",
            "certification status for list-manager._rtx is malformed",
            "list-manager._rtx",
        ),
        RouteWarning(
            "certification-expired", f"certification status for {SOURCE} is expired", SOURCE
        ),
    )


def test_a_missing_node_is_unavailable() -> None:
    warnings = certification_warnings(CALLER, TARGET, SOURCE, {})
    assert [w.code for w in warnings] == ["certification-unavailable"] * 4
    assert [w.subject for w in warnings] == [
        "daily-plan",
        "list-manager",
        "list-manager._rtx",
        SOURCE,
    ]


def test_nodes_shared_by_both_ancestries_are_checked_once() -> None:
    caller = (record("list-manager"), record("list-manager._rtx"))
    warnings = certification_warnings(caller, TARGET, SOURCE, {})
    assert [w.subject for w in warnings] == ["list-manager", "list-manager._rtx", SOURCE]


def test_module_ids_are_accepted_as_well_as_records() -> None:
    warnings = certification_warnings(["a"], ["b", "b.c"], "b.c.source.s", {"a": "current"})
    assert [w.subject for w in warnings] == ["b", "b.c", "b.c.source.s"]


@pytest.mark.parametrize(
    "state", ["", "Current", "stale\nwarning: forged", "a b", "x" * 65, None, ["stale"]]
)
def test_a_state_that_is_not_a_plain_word_is_malformed(state: object) -> None:
    warnings = certification_warnings(
        ["a"], [], "a.source.s", {"a": state, "a.source.s": "current"}
    )
    assert warnings == (
        RouteWarning("certification-malformed", "certification status for a is malformed", "a"),
    )
