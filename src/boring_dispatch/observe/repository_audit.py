"""The audit record of one blueprint-repository call, and the protocol of its sinks.

A repository has no argument schema to redact by: any value of the gateway's
argv may be a secret (BLUEPRINTS-V6, ``sensitivity``), and so may its stdin,
its output, its environment and the text of any exception. The record
therefore holds none of them: only who called (the caller skill, or the
calling module of a nested call), what was asked for (the interface ID and
version, as requested text cut to 128 characters, never evaluated), the
outcome code, the gateway's exit status, the duration, the trace id and the
derived security level once known.

:class:`boring_dispatch.observe.audit.JsonLinesAuditSink` writes these records
too (one JSON line each, ``"kind": "repository_call"``), through the same safe
appender as the Python table's records; a table's lines are unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final, Protocol, final, runtime_checkable

__all__ = [
    "KIND",
    "MAX_TEXT",
    "UNRECORDED",
    "RepositoryAuditEvent",
    "RepositoryAuditSink",
    "cut",
    "minimal",
    "repository_line",
]

#: The ``kind`` of a repository record's JSON line (table lines have no ``kind``).
KIND: Final = "repository_call"
#: Requested names (interface, caller) are cut to this many characters.
MAX_TEXT: Final = 128
#: What stands in for a field the minimal record leaves out.
UNRECORDED: Final = "[not recorded]"


@final
@dataclass(frozen=True, slots=True)
class RepositoryAuditEvent:
    """What one repository call did, safe to write down (no argv, stdin, output or text)."""

    #: Seconds since the epoch when the recorded stage of the call started.
    time: float
    #: The caller skill (a host call) or the calling module (a nested call), as requested.
    caller: str | None
    #: Whether the request is not a host's: a gateway's nested call (or a setup manager step).
    nested: bool
    #: The interface ID: as requested for a refusal, as resolved for a launched call.
    interface: str | None
    #: The requested version for a refusal (``None``: unpinned), the resolved one once launched.
    version: int | None
    #: ``"ok"``, a ``dispatcher.*`` refusal code, ``"exit_nonzero"``, ``"killed"``,
    #: ``"timeout"``, ``"output_truncated"`` or ``"interrupted"`` (docs/repository.md, "Audit").
    outcome: str
    #: The gateway's exit status (negative: the signal that ended it); ``None`` if none ran.
    exit_code: int | None
    #: Wall time of the recorded stage, in milliseconds.
    duration_ms: float
    #: The call's trace id, when the surface gave one.
    trace_id: str | None = None
    #: The route's derived security level, once resolved (``None`` before or when unavailable).
    security_level: int | None = None


@runtime_checkable
class RepositoryAuditSink(Protocol):
    """Anything with ``record(event)``; called once per call, possibly from many threads."""

    def record(self, event: RepositoryAuditEvent) -> None:
        """Write ``event`` down (or keep it). Should not raise; if it does, it is logged."""


def cut(text: object) -> str | None:
    """Requested text as a record keeps it: an exact ``str`` cut to 128 characters, else None.

    A lone surrogate (a byte of a non-UTF-8 argument, through ``surrogateescape``)
    is kept as the visible text ``\\udcff``: as a JSON escape it would be no
    character at all, and a strict reader would refuse the whole line.
    """
    if type(text) is not str:
        return None
    kept = text[:MAX_TEXT]
    if kept.isascii():
        return kept
    return kept.encode("utf-8", "backslashreplace").decode("utf-8")


def repository_line(event: RepositoryAuditEvent) -> dict[str, object]:
    """The JSON line of ``event`` (a sink encodes it with ASCII escapes)."""
    return {
        "time": datetime.fromtimestamp(event.time, UTC).isoformat(timespec="milliseconds"),
        "kind": KIND,
        "caller": event.caller,
        "nested": event.nested,
        "interface": event.interface,
        "version": event.version,
        "outcome": event.outcome,
        "exit_code": event.exit_code,
        "duration_ms": round(event.duration_ms, 3),
        "trace_id": event.trace_id,
        "security_level": event.security_level,
    }


def minimal(event: RepositoryAuditEvent) -> RepositoryAuditEvent:
    """The event without the requested names: what is left to record when the rest fails."""
    return RepositoryAuditEvent(
        time=event.time,
        caller=UNRECORDED,
        nested=event.nested,
        interface=UNRECORDED,
        version=None,
        outcome=event.outcome,
        exit_code=event.exit_code,
        duration_ms=event.duration_ms,
        trace_id=event.trace_id,
        security_level=event.security_level,
    )
