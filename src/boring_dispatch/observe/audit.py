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
(see :class:`AuditHealth`, which a blueprint repository's sinks share).

Both files are opened by the one safe appender of :mod:`boring_dispatch._files`
(no symlink, no FIFO, a regular file of ours; group/world write bits removed)
and get one ``write`` per record. A record larger than ``max_record_bytes`` is
replaced by a small record saying so. A writer killed mid-write or a full disk
can leave a torn line; the next record starts on a fresh line, and
:func:`read_records` skips torn lines and reports their numbers.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Final, Protocol, Self, TypeVar, final, runtime_checkable

from boring_dispatch._files import (
    MAX_TRACE_BYTES,
    FileRefused,
    append_record,
    open_append,
    read_capped,
    split_lines,
)
from boring_dispatch.observation import Observation
from boring_dispatch.observe._logtext import log_text
from boring_dispatch.observe.repository_audit import RepositoryAuditEvent, repository_line

__all__ = [
    "MAX_RECORD_BYTES",
    "AppendFile",
    "AuditEvent",
    "AuditHealth",
    "AuditSink",
    "FileRefused",
    "JsonLinesAuditSink",
    "Records",
    "TraceRecorder",
    "read_records",
]

#: Default cap on one record (one line); a larger record is replaced by a small one.
MAX_RECORD_BYTES: Final = 1 << 20
# The small replacement record (tool name cut to 128 characters, however escaped) fits this.
_MIN_RECORD_BYTES: Final = 4096

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
    #: The canonical validated arguments (defaults filled in, sensitive values redacted),
    #: set only for a call that reached its handler and only when a sink has a true
    #: ``wants_fixture_args`` attribute (a fixture recorder).
    fixture_args: dict[str, object] | None = None


@runtime_checkable
class AuditSink(Protocol):
    """Anything with ``record(event)``. Called once per call, possibly from many threads."""

    def record(self, event: AuditEvent) -> None:
        """Write ``event`` down (or keep it). Should not raise; if it does, it is logged."""


_LOG: Final = logging.getLogger("boring_dispatch")
_E = TypeVar("_E")
_E_contra = TypeVar("_E_contra", contravariant=True)


class _Recorder(Protocol[_E_contra]):
    def record(self, event: _E_contra, /) -> None: ...


@final
class AuditHealth:
    """The sinks of one table whose last record failed (ids), and how a record is offered.

    Both kinds of table use it: a Python table (shared by its restricted
    copies) and a blueprint repository. While it is not empty the table runs
    nothing: the call is refused as an internal error and its record is
    offered to every sink, which is how a recovered sink is noticed.
    """

    __slots__ = ("failing",)

    def __init__(self) -> None:
        self.failing: set[int] = set()

    def failing_names(self, sinks: Sequence[object]) -> str:
        """The type names of the failing sinks, for a log line (never their contents)."""
        return ", ".join(sorted({type(s).__name__ for s in sinks if id(s) in self.failing}))

    def offer(
        self,
        sink: _Recorder[_E],
        event: _E,
        minimal: Callable[[_E], _E],
        lost: Callable[[], str],
    ) -> None:
        """Give ``sink`` the event; if it fails, ``minimal(event)``; if that fails, say so loudly.

        A sink never changes the outcome of the call it records: its failure is
        logged by the exception's type only. A sink that could not record even
        the minimal event is marked failing; ``lost()`` names the lost record
        (and what stops) in the ERROR line. A record that succeeds clears the mark.
        """
        name = log_text(type(sink).__name__)
        # BaseException too, as for a handler: a sink's SystemExit, KeyboardInterrupt or
        # CancelledError is a failing sink, never the end of the process that serves the table.
        try:
            sink.record(event)
        except BaseException as error:  # noqa: BLE001 - a sink never changes the outcome
            _LOG.warning("audit sink %s failed: %s", name, log_text(type(error).__name__))
        else:
            self.failing.discard(id(sink))
            return
        try:
            sink.record(minimal(event))
        except BaseException as error:  # noqa: BLE001 - reported below, never raised
            self.failing.add(id(sink))
            _LOG.error(
                "audit record lost: sink %s failed again (%s) on the minimal record of %s",
                name,
                log_text(type(error).__name__),
                lost(),
            )
        else:
            self.failing.discard(id(sink))
            _LOG.warning("audit sink %s: wrote a minimal record instead", name)


class AppendFile:
    """An append-only file of JSON lines, created 0600, one ``write`` per line.

    Raises:
        FileRefused: at construction, for a symlink, a FIFO or other non-regular
            file, a file of another user or with several hard links.
        OSError: the file cannot be opened or created.
        ValueError: ``max_record_bytes`` is not an int of at least 4096 (the
            small record that replaces a larger one always fits that).
    """

    def __init__(
        self, path: str | os.PathLike[str], *, max_record_bytes: int = MAX_RECORD_BYTES
    ) -> None:
        if type(max_record_bytes) is not int or max_record_bytes < _MIN_RECORD_BYTES:
            raise ValueError("max_record_bytes must be an int of at least 4096")
        self.path: Final = Path(path)
        self.max_record_bytes: Final = max_record_bytes
        self._lock = threading.RLock()  # a subclass may hold it across a check and a write
        self._fd: int | None = open_append(self.path)

    def _write(self, payload: dict[str, object], small: dict[str, object]) -> None:
        """Append ``payload``, or ``small`` (which says so) when ``payload`` is over the cap."""
        data = (_ENCODER.encode(payload) + "\n").encode("ascii")
        if len(data) > self.max_record_bytes:
            small["record_too_large"] = len(data)
            data = (_ENCODER.encode(small) + "\n").encode("ascii")
        self._append(data)

    def _append(self, data: bytes) -> None:
        """One ``write`` of one whole record (see :func:`boring_dispatch._files.append_record`)."""
        with self._lock:
            if self._fd is None:
                raise ValueError("the sink is closed")
            append_record(self._fd, data)

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
class JsonLinesAuditSink(AppendFile):
    """One JSON line per call: ``time`` (ISO 8601, UTC), ``surface``, ``tool``,
    ``outcome``, ``duration_ms``, ``args`` (redacted) and ``correlation_id`` when set.

    It is a repository's sink too: a
    :class:`~boring_dispatch.observe.repository_audit.RepositoryAuditEvent` becomes a
    line of ``"kind": "repository_call"`` (see
    :func:`~boring_dispatch.observe.repository_audit.repository_line`).
    """

    def record(self, event: AuditEvent | RepositoryAuditEvent) -> None:
        """Append the event's line."""
        if isinstance(event, RepositoryAuditEvent):
            line = repository_line(event)
            self._write(line, {**line, "caller": None, "interface": None})
            return
        line = {
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
        self._write(line, {**line, "args": None})


@final
class TraceRecorder(AppendFile):
    """A replayable trace: ``{"name", "args", "observation"}`` per call, redacted.

    Requests without a string name or an arguments object are not recorded
    (there is no call to replay). Replaying a sensitive tool feeds it the
    placeholder, so such lines replay only against a fixture world that
    accepts ``"[redacted]"``. A call over ``max_record_bytes`` is recorded as
    ``{"name", "record_too_large"}``, which replays as a malformed line (a
    difference): the trace cannot reproduce it.
    """

    def record(self, event: AuditEvent) -> None:
        """Append the call and its observation."""
        if event.tool is None or event.args is None:
            return
        self._write(
            {"name": event.tool, "args": event.args, "observation": event.observation.to_dict()},
            {"name": event.tool},
        )


@final
@dataclass(frozen=True, slots=True)
class Records:
    """The records of a JSON-lines audit or trace file, and the lines that were skipped."""

    #: ``(line number, record)`` for every line that is a JSON object.
    records: tuple[tuple[int, dict[str, object]], ...]
    #: Line numbers of lines that are not a record: torn by an interrupted writer
    #: (a kill, a full disk) or otherwise damaged.
    skipped: tuple[int, ...]


def read_records(path: str | os.PathLike[str], *, max_bytes: int = MAX_TRACE_BYTES) -> Records:
    """Read a file written by :class:`JsonLinesAuditSink` or :class:`TraceRecorder`.

    The file must be a regular file of at most ``max_bytes`` (a FIFO or
    ``/dev/zero`` is refused, not read). Lines end at ``\\n`` only. A line that
    is not one JSON object (a torn record, not UTF-8, a refused character) is
    skipped and its number reported; it never hides the record after it.

    Raises:
        FileRefused: not a regular file, world-writable or too large.
        OSError: the file cannot be opened.
    """
    records: list[tuple[int, dict[str, object]]] = []
    skipped: list[int] = []
    for line in split_lines(read_capped(path, max_bytes)):
        if line.text is None or line.problem is not None:
            skipped.append(line.number)
            continue
        if not line.text.strip():
            continue
        try:
            value = json.loads(line.text)
        except (ValueError, RecursionError):
            value = None
        if isinstance(value, dict):
            records.append((line.number, value))
        else:
            skipped.append(line.number)
    return Records(tuple(records), tuple(skipped))
