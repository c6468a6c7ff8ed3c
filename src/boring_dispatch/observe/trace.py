"""Trace ids and best-effort timing spans (stdlib only: the child-side runner imports it).

A span is one JSON line appended to ``$ASSISTANT_LOGS/dispatch/spans-YYYYMMDD.jsonl``
(UTC date). When ``ASSISTANT_LOGS`` is unset or not an absolute path, the logs
directory is ``~/.local/state/boring-dispatch/logs``.

What a span holds is fixed by :class:`Span`: a trace id, a constant span name,
the start time, the duration, a status code and canonical identifiers. It has
no field that could hold arguments, process output, environment values, URLs,
credentials, working directories or exception text, and values that do not
look like identifiers are replaced by ``"?"`` before writing.

Writing never fails a call: every error is swallowed. With
``BORING_DISPATCH_OTEL=1`` and ``opentelemetry`` importable, spans are also
emitted through ``opentelemetry.trace``; otherwise OpenTelemetry is never imported.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from boring_dispatch._value import value

__all__ = [
    "TRACE_ID_ENV",
    "Span",
    "SpanTimer",
    "default_logs_dir",
    "new_trace_id",
    "span",
    "spans_path",
    "valid_trace_id",
    "write_span",
]

#: Environment variable that carries the trace id from the dispatcher to the runner.
TRACE_ID_ENV: Final = "BORING_DISPATCH_TRACE_ID"
_OTEL_ENV: Final = "BORING_DISPATCH_OTEL"
_TRACE_ID: Final = re.compile(r"[0-9a-f]{32}")
# Canonical IDs, span names and status codes all fit this; anything else is replaced.
_IDENT: Final = re.compile(r"[A-Za-z0-9_.@:-]{1,200}")
_STATUS: Final = re.compile(r"[a-z0-9_.]{1,64}")
_MAX_LINE: Final = 4096


def new_trace_id() -> str:
    """A fresh random trace id: 32 lowercase hexadecimal characters."""
    return os.urandom(16).hex()


def valid_trace_id(value: object) -> bool:
    """Whether ``value`` has the exact shape of a trace id (32 lowercase hex)."""
    return isinstance(value, str) and _TRACE_ID.fullmatch(value) is not None


@value
class Span:
    """One timed step. Only identifiers: never arguments, output or text."""

    trace_id: str
    #: A constant name chosen by the code (``"dispatcher.process"``), never by a caller.
    name: str
    #: Wall-clock start, seconds since the epoch.
    start: float
    duration_ms: float
    #: A short status code (``"ok"``, ``"exit_nonzero"``, ``"exception"``, ...).
    status: str
    interface_id: str | None = None
    module_id: str | None = None
    caller_module_id: str | None = None

    def to_dict(self) -> dict[str, object]:
        """The JSON object written for this span, with non-identifiers replaced."""
        out: dict[str, object] = {}
        fields = (
            self.trace_id,
            self.name,
            self.start,
            self.duration_ms,
            self.status,
            self.interface_id,
            self.module_id,
            self.caller_module_id,
        )
        for key, field in zip(self.__match_args__, fields, strict=True):
            if isinstance(field, str):
                pattern = _STATUS if key == "status" else _IDENT
                out[key] = field if pattern.fullmatch(field) else "?"
            elif isinstance(field, float) and math.isfinite(field):
                out[key] = round(field, 3) if key == "duration_ms" else field
            elif field is None:
                out[key] = None
            else:
                out[key] = "?"
        return out


def default_logs_dir() -> Path:
    """``~/.local/state/boring-dispatch/logs``: the logs directory without ``ASSISTANT_LOGS``."""
    return Path.home() / ".local" / "state" / "boring-dispatch" / "logs"


def spans_path(now: float | None = None) -> Path:
    """The span file of the UTC day of ``now`` (default: today).

    ``ASSISTANT_LOGS`` is used only when it is an absolute path.
    """
    logs = Path(os.environ.get("ASSISTANT_LOGS") or "relative")
    base = logs if logs.is_absolute() else default_logs_dir()
    day = time.strftime("%Y%m%d", time.gmtime(time.time() if now is None else now))
    return base / "dispatch" / f"spans-{day}.jsonl"


def write_span(record: Span) -> None:
    """Append ``record`` as one JSON line; swallow every failure.

    The file is opened by the safe appender the audit sinks use
    (:func:`boring_dispatch._files.open_append`: ``O_APPEND|O_CREAT|O_NOFOLLOW|O_NONBLOCK``,
    mode 0o600, a regular file of ours with one link, group/world write bits
    removed) and gets one ``write`` per line, on a fresh line after a torn one.
    A symlink at the file's place is refused (the directories above it are trusted).
    """
    if not valid_trace_id(record.trace_id):
        return
    # Tracing is best-effort by contract: no failure to write reaches the caller.
    with contextlib.suppress(Exception):
        _append_line(record)
    if os.environ.get(_OTEL_ENV) == "1":
        _emit_otel(record)


def _append_line(record: Span) -> None:
    line = json.dumps(record.to_dict(), separators=(",", ":"), sort_keys=True) + "\n"
    data = line.encode("utf-8")
    if len(data) > _MAX_LINE:
        return
    # Imported here: a gateway child loads this module, and only what it writes a span with.
    from boring_dispatch._files import append_once

    path = spans_path(record.start)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    append_once(path, data)


def _emit_otel(record: Span) -> None:
    try:
        # Optional dependency, imported only when the user asked for it.
        from opentelemetry import trace as otel_trace

        payload = record.to_dict()
        attributes = {
            f"boring_dispatch.{key}": value
            for key, value in payload.items()
            if key not in {"name", "start", "duration_ms"} and isinstance(value, str)
        }
        start_ns = int(record.start * 1e9)
        end_ns = start_ns + int(record.duration_ms * 1e6)
        tracer = otel_trace.get_tracer("boring_dispatch")
        otel_span = tracer.start_span(
            str(payload["name"]), start_time=start_ns, attributes=attributes
        )
        otel_span.end(end_time=end_ns)
    except Exception:  # noqa: BLE001, S110 - an exporter failure never fails a call
        pass


class SpanTimer:
    """The handle :func:`span` yields: set a status code before the block ends."""

    __slots__ = ("status",)

    def __init__(self) -> None:
        #: Status code recorded when the block ends without an exception.
        self.status = "ok"


@contextmanager
def span(
    name: str,
    trace_id: str | None,
    *,
    interface_id: str | None = None,
    module_id: str | None = None,
    caller_module_id: str | None = None,
) -> Iterator[SpanTimer]:
    """Time the block and write one span when ``trace_id`` is a valid trace id.

    The status is the timer's ``status`` (default ``"ok"``), ``"system_exit"``
    when ``SystemExit`` leaves the block, or ``"exception"`` for any other
    exception; the exception itself is never recorded and always propagates.
    Without a trace id nothing is written.
    """
    timer = SpanTimer()
    start = time.time()
    began = time.perf_counter()
    try:
        yield timer
    except SystemExit:
        timer.status = "system_exit"
        raise
    except BaseException:
        timer.status = "exception"
        raise
    finally:
        if trace_id is not None:
            write_span(
                Span(
                    trace_id=trace_id,
                    name=name,
                    start=start,
                    duration_ms=(time.perf_counter() - began) * 1000.0,
                    status=timer.status,
                    interface_id=interface_id,
                    module_id=module_id,
                    caller_module_id=caller_module_id,
                )
            )
