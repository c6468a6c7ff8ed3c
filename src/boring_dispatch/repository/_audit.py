"""The audit trail of one :class:`~boring_dispatch.repository.repository.Repository`.

One record per live call, written when the call ends: at the refusal (resolve,
authorize, setup gate, bind) or after the launch (the gateway's exit, a
timeout, a launch failure, a nested setup refusal). The record never holds the
argv, stdin, output, environment or exception text (see
:mod:`boring_dispatch.observe.repository_audit`).

Failing sinks follow the Python table's rule: a sink that raises is logged by
the exception's type only and given a minimal record (no requested names); a
sink that fails that too is logged as an ERROR and stops the repository: every
live call of this object is refused as ``dispatcher.internal_error`` before
anything is resolved or launched, and the refusal's record is still offered
to every sink, which is how a recovered sink is noticed.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Final

from boring_dispatch._quote import shown, shown_path
from boring_dispatch.errors import InternalFailure, RouteError, RuntimeMisconfigured
from boring_dispatch.observe._logtext import log_text
from boring_dispatch.observe.repository_audit import (
    RepositoryAuditEvent,
    RepositoryAuditSink,
    cut,
    minimal,
)
from boring_dispatch.records import Route, RouteRequest

if TYPE_CHECKING:
    import os
    from collections.abc import Sequence

    from boring_dispatch.observe.audit import JsonLinesAuditSink

__all__ = [
    "RepositoryAudit",
    "Stage",
    "launch_outcome",
    "open_audit_file",
    "refusal_outcome",
    "streaming_outcome",
]

_LOG: Final = logging.getLogger("boring_dispatch")
#: The outcome of an exception that is not a refusal (a bug): never its text.
_INTERNAL: Final = InternalFailure.code
#: The outcome of a call ended by ``KeyboardInterrupt``/``SystemExit`` (not an ``Exception``).
_INTERRUPTED: Final = "interrupted"
#: What a malformed request (not a RouteRequest) is recorded as: no names, a host's.
_NO_REQUEST: Final = RouteRequest(caller=None, target=None)  # type: ignore[arg-type]
#: The largest version a record holds (the largest integer exact in every JSON reader).
_MAX_VERSION: Final = 2**53 - 1
# Streaming runs report a timeout as this exit status (process.launch.TIMEOUT_EXIT_CODE).
_TIMEOUT_EXIT: Final = 124


class Stage:
    """When the recorded stage of a call started (wall clock and monotonic clock)."""

    __slots__ = ("clock", "started")

    def __init__(self) -> None:
        self.started = time.time()
        self.clock = time.perf_counter()

    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self.clock) * 1000.0


def _version(version: object) -> int | None:
    """A version as a record keeps it: an exact ``int`` in 1..2**53 - 1, else None.

    A requested pin is unbounded (the model's or a gateway's choice); a record
    holds requested values only bounded, and as numbers every JSON reader keeps.
    """
    return version if type(version) is int and 1 <= version <= _MAX_VERSION else None


def refusal_outcome(error: BaseException) -> str:
    """The outcome code of a call that raised: its ``dispatcher.*`` code, never its text."""
    if isinstance(error, RouteError):
        code = type(error).code
        return code if type(code) is str else _INTERNAL
    return _INTERNAL if isinstance(error, Exception) else _INTERRUPTED


def launch_outcome(
    exit_code: int | None, *, timed_out: bool, truncated: bool
) -> tuple[str, int | None]:
    """The outcome code and exit status of a gateway that ran (or could not start)."""
    if timed_out:
        return "timeout", exit_code
    if exit_code is None:
        return "dispatcher.launch_failed", None
    if truncated:  # the cap ends the gateway's group: whatever it exited with, its output was cut
        return "output_truncated", exit_code
    if exit_code < 0:
        return "killed", exit_code
    if exit_code > 0:
        return "exit_nonzero", exit_code
    return "ok", 0


def streaming_outcome(code: int, elapsed_s: float, timeout_s: float) -> tuple[str, int | None]:
    """The outcome of a streamed run (the CLI), which reports only an exit status.

    The status 124 after the whole timeout has passed is the timeout (the
    launcher killed the group); a status of ``128 + N`` is a signal only as far
    as the status can tell, so it is recorded as ``exit_nonzero``.
    """
    if code == _TIMEOUT_EXIT and elapsed_s >= timeout_s:
        return "timeout", None
    return launch_outcome(code, timed_out=False, truncated=False)


class RepositoryAudit:
    """The sinks of one repository and the ids of those whose last record failed."""

    __slots__ = ("_health", "sinks")

    def __init__(self, sinks: Sequence[RepositoryAuditSink]) -> None:
        """Take ``sinks``, each checked now: a malformed one would lose the first record.

        Raises:
            RuntimeMisconfigured: ``sinks`` is a string or not iterable, one
                is not an object with a callable ``record`` (the message names
                its type only), or one is given twice.
        """
        given: object = sinks  # typed as sinks, checked as anything
        if isinstance(given, str | bytes) or not hasattr(given, "__iter__"):
            raise RuntimeMisconfigured("audit: expected a sequence of sinks")
        self.sinks: Final = tuple(sinks)
        for sink in self.sinks:
            if (
                isinstance(sink, type)
                or not isinstance(sink, RepositoryAuditSink)
                or not callable(sink.record)
            ):
                raise RuntimeMisconfigured(
                    f"audit: a sink of type {shown(type(sink).__name__)} has no record(event)"
                )
        if len({id(sink) for sink in self.sinks}) != len(self.sinks):
            raise RuntimeMisconfigured("audit: a sink is given twice (two records per call)")
        from boring_dispatch.observe.audit import AuditHealth

        self._health = AuditHealth()

    def admit(self) -> None:
        """Refuse the call while a sink has failed its last record (fail closed).

        Raises:
            InternalFailure: ``dispatcher.internal_error``; the message names no sink.
        """
        if self._health.failing:
            _LOG.error(
                "dispatcher.internal_error: repository call refused before resolving: "
                "audit sink %s failed its last record",
                log_text(self._health.failing_names(self.sinks)),
            )
            raise InternalFailure("internal error: the audit record cannot be written")

    def refused(
        self,
        request: RouteRequest,
        stage: Stage,
        error: BaseException,
        *,
        trace_id: str | None,
    ) -> None:
        """Record a call that ended before its launch."""
        self.answered(request, stage, refusal_outcome(error), trace_id=trace_id)

    def answered(
        self,
        request: RouteRequest,
        stage: Stage,
        outcome: str,
        *,
        trace_id: str | None,
        security_level: int | None = None,
    ) -> None:
        """Record a call that launched no gateway: refused, or answered by the dispatcher itself.

        A ``request`` that is not a :class:`RouteRequest` is recorded without names.
        """
        known = request if isinstance(request, RouteRequest) else _NO_REQUEST
        self.emit(
            RepositoryAuditEvent(
                time=stage.started,
                caller=cut(known.caller),
                nested=known.from_host is False,
                interface=cut(known.target),
                version=_version(known.version),
                outcome=outcome,
                exit_code=None,
                duration_ms=stage.elapsed_ms(),
                trace_id=cut(trace_id),
                security_level=security_level,
            )
        )

    def launched(  # noqa: PLR0913 - keyword-only, one record's facts
        self,
        route: Route,
        stage: Stage,
        outcome: str,
        exit_code: int | None,
        *,
        nested: bool,
        trace_id: str | None,
    ) -> None:
        """Record a call that reached its launch (a ``route`` that is not a Route: no names)."""
        known = route if isinstance(route, Route) else None
        level = None if known is None else known.security_level
        version = None if known is None else known.interface_version
        self.emit(
            RepositoryAuditEvent(
                time=stage.started,
                caller=None if known is None else cut(known.caller_module_id),
                nested=nested,
                interface=None if known is None else cut(known.target),
                version=_version(version),
                outcome=outcome,
                exit_code=exit_code,
                duration_ms=stage.elapsed_ms(),
                trace_id=cut(trace_id),
                security_level=level if type(level) is int else None,
            )
        )

    def emit(self, event: RepositoryAuditEvent) -> None:
        """Offer ``event`` to every sink; a sink never changes the call's outcome."""

        def lost() -> str:
            return (
                f"a repository call outcome={log_text(event.outcome)} "
                f"trace_id={log_text(str(event.trace_id))}; "
                "no live call of this repository runs until the sink records again"
            )

        for sink in self.sinks:
            self._health.offer(sink, event, minimal, lost)


def open_audit_file(path: str | os.PathLike[str]) -> JsonLinesAuditSink:
    """Open ``--audit PATH``: the JSON-lines sink of the table's safe appender.

    Raises:
        RuntimeMisconfigured: the path is refused (a symlink, a FIFO, not ours)
            or cannot be opened; the message gives the refusal's own text (it
            names no content) or the OS error's, else the error's type.
    """
    from boring_dispatch.observe.audit import FileRefused, JsonLinesAuditSink

    try:
        return JsonLinesAuditSink(path)
    except (OSError, ValueError) as error:  # FileRefused is a ValueError
        if isinstance(error, FileRefused):
            why = str(error)
        elif isinstance(error, OSError) and error.strerror:
            why = error.strerror
        else:
            why = type(error).__name__
        raise RuntimeMisconfigured(
            f"the audit file {shown_path(path)} cannot be opened: {why}"
        ) from None
