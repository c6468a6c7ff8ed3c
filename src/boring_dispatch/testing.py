"""Public test helpers: test a table without a model.

- :func:`assert_golden`: the CI check that the printed names equal the golden file.
- :class:`FakeModel` and :func:`run_agent`: a scripted list of ``{name, args}``
  calls pushed through ``dispatch`` by a minimal agent loop, which is just one
  more client of the table.
- :class:`CapturingSink`: an audit sink that keeps the events in memory.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, final

from boring_dispatch.golden import compare, format_difference
from boring_dispatch.observe.audit import AuditEvent

if TYPE_CHECKING:
    from boring_dispatch.observation import Observation
    from boring_dispatch.registry.registry import Registry

__all__ = [
    "AgentStep",
    "CapturingSink",
    "FakeModel",
    "Model",
    "ScriptedCall",
    "assert_golden",
    "run_agent",
]

#: One model turn: ``{"name": ..., "args": {...}}``, or raw request text for ``dispatch_json``.
ScriptedCall = Mapping[str, object] | str


def assert_golden(registry: Registry, golden: str | Path) -> None:
    """Fail unless ``registry.names()`` equals the names in the golden file.

    Raises:
        AssertionError: listing every surprise and every missing name.
        FileRefused: the golden file was refused (not a regular file, too large,
            a refused character); ``reason`` and ``line`` say why and where.
        OSError: the golden file cannot be opened.
    """
    difference = compare(registry.names(), golden)
    if not difference.ok:
        raise AssertionError(format_difference(difference))


class Model(Protocol):
    """What :func:`run_agent` needs from a model: the next call, given the last observation."""

    def next_call(self, last: Observation | None) -> ScriptedCall | None:
        """The next tool call, or ``None`` when the model is done."""


@final
class FakeModel:
    """A model that emits a scripted list of calls and keeps every observation it was shown."""

    def __init__(self, calls: Iterable[ScriptedCall]) -> None:
        self._script: tuple[ScriptedCall, ...] = tuple(calls)
        self._cursor = 0
        #: The observations :func:`run_agent` showed this model, in order.
        self.seen: list[Observation] = []

    def next_call(self, last: Observation | None) -> ScriptedCall | None:
        """Record ``last`` and return the next scripted call (``None`` when the script ends)."""
        if last is not None:
            self.seen.append(last)
        if self._cursor >= len(self._script):
            return None
        call = self._script[self._cursor]
        self._cursor += 1
        return call


@final
@dataclass(frozen=True, slots=True)
class AgentStep:
    """One turn of :func:`run_agent`: what was asked and what came back."""

    call: ScriptedCall
    observation: Observation


def run_agent(
    model: Model,
    registry: Registry,
    *,
    stop_after: Iterable[str] = ("finish",),
    max_steps: int = 100,
) -> tuple[AgentStep, ...]:
    """A minimal agent loop: ask the model, dispatch, show the observation, repeat.

    Stops when the model returns ``None``, after a successful call to a tool
    named in ``stop_after``, or after ``max_steps`` turns. The loop imports no
    handler and knows no tool: every call goes through ``dispatch`` (or
    ``dispatch_json`` for raw text), exactly as replay and production do.
    """
    stops = frozenset(stop_after)
    steps: list[AgentStep] = []
    last: Observation | None = None
    for _ in range(max_steps):
        call = model.next_call(last)
        if call is None:
            break
        if isinstance(call, str):
            last = registry.dispatch_json(call)
        else:
            args = call.get("args")
            last = registry.dispatch(call.get("name"), args)  # type: ignore[arg-type]
        steps.append(AgentStep(call, last))
        if last.ok and not isinstance(call, str) and call.get("name") in stops:
            break
    return tuple(steps)


@final
class CapturingSink:
    """An audit sink that keeps every event, for assertions in tests."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: Every event recorded so far, in order.
        self.events: list[AuditEvent] = []

    def record(self, event: AuditEvent) -> None:
        """Keep ``event``."""
        with self._lock:
            self.events.append(event)

    def outcomes(self) -> list[str]:
        """The outcome codes of the recorded events, in order."""
        return [event.outcome for event in self.events]
