"""What the table's audit sinks are told about a call, and how a failing sink is handled.

A sink that raises gets a minimal record instead; one that fails that too is
logged as an ERROR and stops the table (see
:class:`boring_dispatch.observe.audit.AuditHealth`).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Final

from boring_dispatch._quote import shown
from boring_dispatch.observation import Observation
from boring_dispatch.observe._logtext import log_text
from boring_dispatch.observe.audit import AuditEvent, AuditSink
from boring_dispatch.observe.redact import redact
from boring_dispatch.registry import _call_guards as guards
from boring_dispatch.registry._canonical import fixture_args
from boring_dispatch.registry._outcomes import withhold_result

if TYPE_CHECKING:
    from boring_dispatch.registry.records import Table
    from boring_dispatch.registry.schema import ArgumentSchema

_LOG: Final = logging.getLogger("boring_dispatch")


_UNRECORDED: Final = "[not recorded]"


class Trail:
    """What the sinks will be told; exists only when the table has sinks."""

    __slots__ = ("args", "clock", "fixture_args", "secrets", "started", "tool")

    def __init__(self) -> None:
        self.started = time.time()
        self.clock = time.perf_counter()
        self.tool: str | None = None
        self.args: dict[str, object] | None = None
        self.secrets: tuple[str, ...] = ()
        self.fixture_args: dict[str, object] | None = None

    def note_arguments(
        self, schema: ArgumentSchema, args: dict[str, object], secrets: tuple[str, ...]
    ) -> None:
        """Stage 4: what sinks will see, redacted and copied before the call (which may not
        return)."""
        redacted = redact(args, schema.sensitive)
        self.args = guards.record_copy(redacted) if isinstance(redacted, dict) else {}
        self.secrets = secrets

    def note_fixture_args(self, schema: ArgumentSchema, kwargs: dict[str, object]) -> None:
        """The call's fixture key, for a recorder; ``None`` when the arguments have no JSON
        form."""
        try:
            self.fixture_args = fixture_args(schema, kwargs)
        except ValueError:
            self.fixture_args = None


def emit(table: Table, trail: Trail, observation: Observation) -> None:
    if trail.secrets and observation.ok:
        observation = withhold_result(observation, trail.secrets)
    event = AuditEvent(
        time=trail.started,
        surface=table.surface,
        tool=trail.tool,
        outcome=observation.code,
        duration_ms=(time.perf_counter() - trail.clock) * 1000.0,
        args=trail.args,
        observation=observation,
        fixture_args=trail.fixture_args,
    )
    for sink in table.sinks:
        _record(table, sink, event)


def _record(table: Table, sink: AuditSink, event: AuditEvent) -> None:
    """Offer ``sink`` the event: no handler of the table runs while it cannot record."""

    def lost() -> str:
        error = event.observation.error
        return (
            f"surface={log_text(event.surface)} tool={log_text(shown(event.tool, 64))} "
            f"outcome={event.outcome} "
            f"correlation_id={error.correlation_id if error else None}; "
            "no handler of this table runs until the sink records again"
        )

    table.audit.offer(sink, event, _minimal, lost)


def _minimal(event: AuditEvent) -> AuditEvent:
    """The event without arguments, result or message: what is left to record when the rest fails.

    Its arguments are one ``"[not recorded]"`` member, so a trace line made of it
    replays as a refused call (a difference), never as a call with no arguments.
    """
    error = event.observation.error
    observation = (
        Observation.success(_UNRECORDED)
        if error is None
        else Observation.failure(error.code, _UNRECORDED, correlation_id=error.correlation_id)
    )
    return AuditEvent(
        time=event.time,
        surface=event.surface,
        tool=event.tool,
        outcome=event.outcome,
        duration_ms=event.duration_ms,
        args=None if event.args is None else {_UNRECORDED: _UNRECORDED},
        observation=observation,
    )
