"""Replay of repository calls: a JSON-lines trace pushed through the same pipeline.

Each line is one call, in either form:

- the MCP projection: ``{"caller", "interface", "version", "arguments", "dry_run"?}``;
- the argv form: ``{"caller", "interface", "version", "argv", "stdin"}`` where
  ``version`` may be null and ``stdin`` is null or the text to send.

A line may also carry the recorded outcome under ``"expected"``; replay then
reports whether the outcome is the same. A line that cannot be parsed yields an
error object for that line, and replay goes on with the next.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from boring_dispatch._json import StrictJSONError, same_json, strict_loads
from boring_dispatch.errors import InvalidRouteRequest, RouteError
from boring_dispatch.records import ExecLimits
from boring_dispatch.repository.projection import Projection, parse_argv_form, parse_projection
from boring_dispatch.repository.repository import Repository, dry_run_payload

__all__ = ["ReplayLine", "parse_line", "replay_repository"]


@dataclass(frozen=True, slots=True)
class ReplayLine:
    """The outcome of one replayed line."""

    #: 1-based line number in the trace.
    number: int
    #: The dry-run payload, the execution result, or ``{"error": {...}}``.
    outcome: dict[str, object]
    #: The recorded outcome, when the line carried one.
    expected: object | None
    #: True when a recorded outcome exists and differs.
    differs: bool


def parse_line(text: str) -> tuple[Projection, object | None]:
    """Parse one trace line into a projection and its recorded outcome (or None).

    Raises:
        InvalidRouteRequest: the line is not a JSON object of either form.
    """
    try:
        value = strict_loads(text)
    except StrictJSONError as error:
        raise InvalidRouteRequest(str(error)) from None
    if not isinstance(value, dict):
        raise InvalidRouteRequest("a trace line must be a JSON object")
    expected = value.pop("expected", None)
    if "arguments" in value:
        return parse_projection(value), expected
    return parse_argv_form(value), expected


def replay_repository(
    repository: Repository,
    lines: Iterable[str],
    *,
    dry_run: bool,
    limits: ExecLimits | None = None,
) -> Iterator[ReplayLine]:
    """Replay every non-blank line through ``repository``; one result per line."""
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        expected: object | None = None
        try:
            projection, expected = parse_line(text)
            outcome = _run(repository, projection, dry_run=dry_run, limits=limits)
        except RouteError as error:
            outcome = {"error": error.to_dict()}
        differs = expected is not None and not same_json(
            _comparable(expected), _comparable(json.loads(json.dumps(outcome)))
        )
        yield ReplayLine(number=number, outcome=outcome, expected=expected, differs=differs)


def _run(
    repository: Repository,
    projection: Projection,
    *,
    dry_run: bool,
    limits: ExecLimits | None,
) -> dict[str, object]:
    if dry_run or projection.dry_run:
        return dry_run_payload(repository.resolve(projection.request))
    stdin = None if projection.stdin_text is None else projection.stdin_text.encode("utf-8")
    return repository.invoke(projection.request, stdin=stdin, limits=limits).to_dict()


def _comparable(outcome: object) -> object:
    """Drop fields that legitimately differ between runs (none today but trace ids)."""
    if isinstance(outcome, dict):
        return {k: v for k, v in outcome.items() if k != "trace_id"}
    return outcome
