"""The three times over generated sessions, against an oracle built from the generated gaps.

A session is a list of turns; each turn is a person's message, calls (each a
thinking gap, then an execution), and maybe a final answer after a gap. The
oracle says what the definitions give; both hosts' files must agree with it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boring_dispatch.observe.timeline import build_timeline
from kits.sessions import HostCall, Turn, write_claude, write_codex

T0: Final = 1_780_000_000
TRACE: Final = "0123456789abcdef0123456789abcdef"

_MS = st.integers(min_value=0, max_value=5000)
_TURN = st.tuples(
    st.lists(st.tuples(_MS, _MS), max_size=4),  # (decision gap, execution) per call
    st.none() | _MS,  # the answer's gap after the last output, or no answer
)


def _wire() -> dict[str, Any]:
    return {
        "content": [{"type": "text", "text": ""}],
        "structuredContent": {"result": {"dispatcher": {"trace_id": TRACE}}},
        "isError": False,
        "_meta": {"dev.boring-dispatch/trace_id": TRACE},
    }


def _session(
    shape: list[tuple[list[tuple[int, int]], int | None]],
) -> tuple[list[Turn], list[dict[str, Any]]]:
    """The turns, and per call the expected ``decision_ms``, ``execution_ms``, ``response_ms``."""
    now = T0 * 1000  # in ms
    turns: list[Turn] = []
    expected: list[dict[str, Any]] = []
    number = 0
    for calls, answer in shape:
        now += 10_000
        user_at = now
        made: list[HostCall] = []
        for decision, execution in calls:
            called = now + decision
            returned = called + execution
            number += 1
            made.append(
                HostCall(
                    f"call_{number}",
                    "invoke_security_0",
                    {},
                    _wire(),
                    called / 1000,
                    returned / 1000,
                )
            )
            expected.append(
                {"decision_ms": decision, "execution_ms": execution, "response_ms": None}
            )
            now = returned
        final = None
        if answer is not None:
            now += answer
            final = now / 1000
            if calls:
                expected[-1]["response_ms"] = answer
        turns.append(Turn(user_at / 1000, made, final))
    return turns, expected


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
@given(shape=st.lists(_TURN, min_size=1, max_size=4), host=st.sampled_from(["codex", "claude"]))
def test_the_times_follow_the_definitions(tmp_path: Path, shape: Any, host: str) -> None:
    turns, expected = _session(shape)
    path = tmp_path / f"{host}.jsonl"
    if host == "codex":
        write_codex(path, turns)
    else:
        write_claude(path, turns)
    calls = build_timeline(path, tmp_path / "no-logs").calls
    assert len(calls) == len(expected)
    for call, want in zip(calls, expected, strict=True):
        assert call.decision_ms == pytest.approx(want["decision_ms"], abs=1.01)
        assert call.execution_ms == pytest.approx(want["execution_ms"], abs=1.01)
        if want["response_ms"] is None:
            assert call.response_ms is None
        else:
            assert call.response_ms == pytest.approx(want["response_ms"], abs=1.01)
        assert call.trace_id == TRACE
        assert call.dispatcher_ms is None
