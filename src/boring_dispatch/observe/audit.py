"""Audit sinks of the Python table: off unless configured.

A sink receives one :class:`AuditEvent` per call, after the call, with the
arguments already redacted by schema (a JSON snapshot taken before the call)
and a result that holds a sensitive value already withheld whole from the
observation. Two file sinks ship here:

- :class:`JsonLinesAuditSink`: one line per call (time, surface, tool,
  outcome code, duration, redacted arguments, correlation id if any);
- :class:`TraceRecorder`: a replayable trace, ``{"name", "args",
  "observation"}`` per line, for :mod:`boring_dispatch.registry.replay`.

A sink that raises is logged (by type, without its message) and given a
minimal record instead (no arguments, result or message); it never changes
the observation of the call it records. Audit is written after the call, so it
records what happened. A sink that fails even the minimal record is logged as
an ERROR and stops the table: no handler runs until that sink records again
(see :class:`boring_dispatch.registry.pipeline.AuditHealth`).
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Final, Protocol, Self, final, runtime_checkable

from boring_dispatch.observation import Observation

__all__ = ["AuditEvent", "AuditSink", "JsonLinesAuditSink", "TraceRecorder"]

_ENCODER: Final = json.JSONEncoder(
    ensure_ascii=True, allow_nan=False, separators=(",", ":"), default=lambda o: type(o).__name__
)


@final
@dataclass(frozen=True, slots=True)
class AuditEvent:
    """What one call did, safe to write down."""

    #: Seconds since the epoch when the call started.
    time: float
    #: The surface (registry) name: ``support``, ``billing``.
    surface: str
    #: The requested tool name (cut to 128 characters); ``None`` if there was no string name.
    tool: str | None
    #: ``"ok"`` or the observation's error code.
    outcome: str
    #: Wall time of the whole pipeline, in milliseconds.
    duration_ms: float
    #: The arguments with sensitive values redacted; ``None`` if there was no object.
    args: dict[str, object] | None
    #: The observation; a result holding a sensitive argument value is withheld whole.
    observation: Observation


@runtime_checkable
class AuditSink(Protocol):
    """Anything with ``record(event)``. Called once per call, possibly from many threads."""

    def record(self, event: AuditEvent) -> None:
        """Write ``event`` down (or keep it). Should not raise; if it does, it is logged."""


class _AppendFile:
    """An append-only file of JSON lines, created 0600, one ``write`` per line."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path: Final = Path(path)
        self._lock = threading.Lock()
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
        self._fd: int | None = os.open(self.path, flags, 0o600)

    def _write(self, payload: dict[str, object]) -> None:
        data = (_ENCODER.encode(payload) + "\n").encode("ascii")
        with self._lock:
            if self._fd is None:
                raise ValueError("the sink is closed")
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view) :]

    def close(self) -> None:
        """Close the file; later records raise (and are logged by the pipeline)."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


@final
class JsonLinesAuditSink(_AppendFile):
    """One JSON line per call: ``time`` (ISO 8601, UTC), ``surface``, ``tool``,
    ``outcome``, ``duration_ms``, ``args`` (redacted) and ``correlation_id`` when set.
    """

    def record(self, event: AuditEvent) -> None:
        """Append the event's line."""
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(event.time, UTC).isoformat(timespec="milliseconds"),
            "surface": event.surface,
            "tool": event.tool,
            "outcome": event.outcome,
            "duration_ms": round(event.duration_ms, 3),
            "args": event.args,
        }
        error = event.observation.error
        if error is not None and error.correlation_id is not None:
            line["correlation_id"] = error.correlation_id
        self._write(line)


@final
class TraceRecorder(_AppendFile):
    """A replayable trace: ``{"name", "args", "observation"}`` per call, redacted.

    Requests without a string name or an arguments object are not recorded
    (there is no call to replay). Replaying a sensitive tool feeds it the
    placeholder, so such lines replay only against a fixture world that
    accepts ``"[redacted]"``.
    """

    def record(self, event: AuditEvent) -> None:
        """Append the call and its observation."""
        if event.tool is None or event.args is None:
            return
        self._write(
            {"name": event.tool, "args": event.args, "observation": event.observation.to_json()}
        )
