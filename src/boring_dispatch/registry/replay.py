"""Replay: a trace is a list of calls, and replaying it is a for-loop over dispatch.

A trace is JSON lines of ``{"name": ..., "args": {...}}``, optionally with the
recorded ``"observation"`` (what :class:`~boring_dispatch.observe.audit.TraceRecorder`
writes). Each line goes through the same strict request parser and the same
:meth:`Registry.dispatch <boring_dispatch.registry.registry.Registry.dispatch>` as a
live call, against whatever world the registry's handlers see (a fixture
world, in tests). Nothing here re-calls a model.

Differences are judged on the JSON envelopes, with ``correlation_id`` left out
(it is fresh on every run), type by type (:func:`~boring_dispatch._json.same_json`):
``true`` is not ``1``, and ``1`` is not ``1.0``. A line that is not a valid call yields an
``invalid_request`` observation, counts as a difference (a corrupt trace must
not pass), and replay goes on. Blank lines are skipped.

A trace file is read like a golden file (:mod:`boring_dispatch.golden`): a
regular file, capped in size, lines ending at ``\n`` only, and a separator,
control or format character anywhere refuses the file with its line number.
A torn last record (no ``\n`` and not JSON: its writer was interrupted) is
left out and reported in :attr:`ReplayReport.torn`; it does not count as a
difference.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, final

from boring_dispatch._files import MAX_TRACE_BYTES, FileRefused, read_json_lines
from boring_dispatch._json import same_json
from boring_dispatch.errors import InvalidRequest
from boring_dispatch.observation import Observation
from boring_dispatch.registry._invalid import MAX_NESTING
from boring_dispatch.registry.pipeline import MAX_RESULT_DEPTH, TableLimits, parse_request

if TYPE_CHECKING:
    from boring_dispatch.registry.registry import Registry

__all__ = [
    "FileRefused",
    "ReplayLine",
    "ReplayReport",
    "comparable",
    "recorded_limits",
    "replay",
    "replay_lines",
]


@final
@dataclass(frozen=True, slots=True)
class ReplayLine:
    """The outcome of one trace line."""

    #: 1-based line number in the trace.
    line_number: int
    #: The requested tool name; ``None`` for a malformed line.
    name: str | None
    #: The JSON envelope the call produced now.
    observation: dict[str, object]
    #: The recorded envelope, if the line carried one.
    recorded: dict[str, object] | None
    #: The line was not a valid call (its observation is ``invalid_request``).
    malformed: bool

    @property
    def differs(self) -> bool:
        """Malformed, or recorded and not the same JSON (``correlation_id`` ignored).

        Compared type-exactly: a result that was ``true`` and is now ``1`` differs.
        """
        if self.malformed:
            return True
        if self.recorded is None:
            return False
        return not same_json(comparable(self.observation), comparable(self.recorded))


@final
@dataclass(frozen=True, slots=True)
class ReplayReport:
    """All lines of one replay."""

    lines: tuple[ReplayLine, ...]
    #: Line numbers of torn records left out (only a last line without ``\n`` can be one).
    torn: tuple[int, ...] = ()

    @property
    def differences(self) -> tuple[ReplayLine, ...]:
        """The lines that differ (malformed lines included)."""
        return tuple(line for line in self.lines if line.differs)

    @property
    def ok(self) -> bool:
        """True when no line differs."""
        return not self.differences


def replay_lines(registry: Registry, lines: Iterable[str | bytes]) -> Iterator[ReplayLine]:
    """Replay trace lines one by one (lazily: a CLI can print as it goes).

    A recorded call of a tool with ``Injected`` parameters holds their values
    (the placeholder where they are sensitive): they are given back as the
    call's ``context``, as the caller gave them, not as the model's arguments.
    """
    injected = {spec.name: frozenset(spec.injected) for spec in registry.tool_specs()}
    limits = recorded_limits(registry.limits)
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            request = parse_request(line, limits, recorded=True)
        except InvalidRequest as error:
            refused = Observation.from_error(error).to_dict()
            yield ReplayLine(number, None, _as_json(refused), None, malformed=True)
            continue
        names = injected.get(request.name, frozenset())
        args = {k: v for k, v in request.args.items() if k not in names}
        context = {k: v for k, v in request.args.items() if k in names}
        observation = registry.dispatch(request.name, args, context=context)
        envelope = _as_json(observation.to_dict())
        yield ReplayLine(number, request.name, envelope, request.observation, malformed=False)


def recorded_limits(limits: TableLimits) -> TableLimits:
    """The limits a recorded line is parsed with: as deep as a recorder writes a live call.

    A live call's arguments may be nested as deep as a Python caller may send them
    (:data:`~boring_dispatch.registry._invalid.MAX_NESTING`), and its result up to
    :data:`~boring_dispatch.registry.pipeline.MAX_RESULT_DEPTH`; a trace line adds
    one level around the arguments and two around the result. A line that deep is
    not malformed: it replays as the call it records.
    """
    deepest = max(MAX_NESTING + 1, MAX_RESULT_DEPTH + 2)
    if limits.max_depth >= deepest:
        return limits
    return dataclasses.replace(limits, max_depth=deepest)


def replay(
    registry: Registry, trace: str | Path, *, max_bytes: int = MAX_TRACE_BYTES
) -> ReplayReport:
    """Replay the trace file at ``trace`` (UTF-8 JSON lines) and collect the results.

    Raises:
        OSError: the file cannot be opened.
        FileRefused: not a regular file, world-writable, over ``max_bytes``, or a
            line that is not UTF-8 or holds a refused character (``line`` says which).
    """
    read = read_json_lines(Path(trace), max_bytes)
    texts = (line.text or "" for line in read.lines)
    torn = () if read.torn_tail is None else (read.torn_tail,)
    return ReplayReport(tuple(replay_lines(registry, texts)), torn)


def comparable(envelope: dict[str, object]) -> dict[str, object]:
    """An envelope as replay compares it: JSON-normalized, without ``correlation_id``."""
    normal = _as_json(envelope)
    error = normal.get("error")
    if isinstance(error, dict):
        normal["error"] = {k: v for k, v in error.items() if k != "correlation_id"}
    return normal


def _as_json(envelope: dict[str, object]) -> dict[str, object]:
    # A round trip turns tuples into lists and int keys into strings, as a recording does.
    normal: dict[str, object] = json.loads(json.dumps(envelope, allow_nan=False))
    return normal
