"""The state of a closure in the ledger: each setup's state and what the call gets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal

from boring_dispatch._value import value

if TYPE_CHECKING:
    from boring_dispatch.setup.closure import SetupNode
    from boring_dispatch.setup.ledger.ops import SetupRecord

__all__ = ["ClosureStatus", "StepState", "step_states"]

#: ``ready`` counts only with the current version and fingerprint.
State = Literal["ready", "absent", "changed", "failed", "invalidated"]


@value
class StepState:
    setup_id: str
    version: int
    state: State

    def to_dict(self) -> dict[str, object]:
        return {"setup": self.setup_id, "version": self.version, "state": self.state}


@value
class ClosureStatus:
    """``ready``, ``setup_required`` (with the first reason) or ``setup_busy`` (with the flow)."""

    status: Literal["ready", "setup_required", "setup_busy"]
    steps: tuple[StepState, ...]
    flow_id: str | None = None

    @property
    def reason(self) -> str:
        """The first not-ready setup's state (prerequisites first)."""
        for step in self.steps:
            if step.state != "ready":
                return step.state
        return "ready"

    def to_dict(self) -> dict[str, object]:
        payload: dict[str, object] = {
            "status": self.status,
            "setups": [step.to_dict() for step in self.steps],
        }
        if self.flow_id is not None:
            payload["flow_id"] = self.flow_id
        return payload


def step_states(
    closure: Sequence[SetupNode], records: Mapping[str, SetupRecord]
) -> tuple[StepState, ...]:
    """Each setup of the order with its state against the current blueprints."""
    out: list[StepState] = []
    for node in closure:
        record = records.get(node.setup_id)
        state: State
        if record is None or record.state == "teardown":
            state = "absent"
        elif record.state in ("failed", "invalidated"):
            state = "failed" if record.state == "failed" else "invalidated"
        elif record.version != node.version or record.fingerprint != node.fingerprint:
            state = "changed"
        else:
            state = "ready"
        out.append(StepState(node.setup_id, node.version, state))
    return tuple(out)
