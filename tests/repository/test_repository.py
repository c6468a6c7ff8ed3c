"""The dry run explains its decision: crossed gates, the admitted caller, and each policy."""

from __future__ import annotations

from pathlib import Path

from boring_dispatch import Repository, RouteRequest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "repository" / "officina.toml"


def test_a_dry_run_through_a_namespace_route_names_every_policy_and_why_it_admitted() -> None:
    payload = Repository.open(EXAMPLE).dry_run(
        RouteRequest(caller="planner", target="notes._rtx.interface.read-note", argv=("today",))
    )
    assert payload["authorization"] == {
        "crossed_gates": ["notes"],
        "immediate_caller": "notes",
        "policies": [
            {
                "kind": "namespace-route",
                "owner": "notes",
                "caller": "planner",
                "admitted_by": "all_modules",
            },
            {
                "kind": "namespace-interface",
                "owner": "notes",
                "caller": "planner",
                "admitted_by": "allowed_callers",
            },
            {
                "kind": "terminal-export",
                "owner": "notes._rtx",
                "caller": "notes",
                "admitted_by": "allowed_callers",
            },
        ],
    }


def test_a_call_inside_the_owner_crosses_no_gate() -> None:
    payload = Repository.open(EXAMPLE).dry_run(
        RouteRequest(caller="notes", target="notes._rtx.interface.read-note", argv=("today",))
    )
    authorization = payload["authorization"]
    assert isinstance(authorization, dict)
    assert authorization["crossed_gates"] == []
    assert [p["kind"] for p in authorization["policies"]] == ["terminal-export"]
