"""Our spans, read back from ``<logs>/dispatch/spans-YYYYMMDD.jsonl`` and indexed by trace id.

Spans are best effort (see :mod:`boring_dispatch.observe.trace`): a line that
is not a span (not JSON, a torn tail, fields of the wrong type) is skipped and
counted, never fatal. Only the day files around the session's calls are read.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Final, final

from boring_dispatch._files import FileRefused, read_json_lines
from boring_dispatch._value import value
from boring_dispatch.observe.trace import valid_trace_id

__all__ = ["SpanIndex", "TimedSpan", "read_spans"]

_DAY_S: Final = 86400.0


@final
@value
class TimedSpan:
    """The parts of one span line a timeline uses."""

    name: str
    start: float
    duration_ms: float
    status: str


@final
@value
class SpanIndex:
    """Spans by trace id, with what reading them met."""

    by_trace: Mapping[str, tuple[TimedSpan, ...]]
    #: Span files read.
    files: int
    #: Lines skipped (not spans, torn tails).
    skipped: int
    #: Files that could not be read, with the reason (name only, never contents).
    refused: tuple[str, ...]


def read_spans(dispatch_dir: Path, moments: Iterable[float]) -> SpanIndex:
    """The spans of the day files covering ``moments`` (a day on each side), by trace id."""
    days = sorted(
        {
            time.strftime("%Y%m%d", time.gmtime(moment + shift))
            for moment in moments
            for shift in (-_DAY_S, 0.0, _DAY_S)
        }
    )
    found: dict[str, list[TimedSpan]] = {}
    files = skipped = 0
    refused: list[str] = []
    for day in days:
        path = dispatch_dir / f"spans-{day}.jsonl"
        if not path.exists():
            continue
        try:
            lines = read_json_lines(path)
        except (FileRefused, OSError) as error:
            refused.append(f"{path.name}: {error}")
            continue
        files += 1
        skipped += lines.torn_tail is not None
        for line in lines.lines:
            parsed = _span(line.text)
            if parsed is None:
                skipped += bool(line.text and line.text.strip())
                continue
            trace_id, timed = parsed
            found.setdefault(trace_id, []).append(timed)
    by_trace = {key: tuple(sorted(spans, key=lambda s: s.start)) for key, spans in found.items()}
    return SpanIndex(by_trace, files, skipped, tuple(refused))


def _span(text: str | None) -> tuple[str, TimedSpan] | None:
    if not text:
        return None
    try:
        record = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict) or not valid_trace_id(record.get("trace_id")):
        return None
    name, start = record.get("name"), record.get("start")
    duration, status = record.get("duration_ms"), record.get("status")
    if not (isinstance(name, str) and isinstance(status, str) and _finite(start, duration)):
        return None
    if float(duration) < 0:  # type: ignore[arg-type]
        return None
    return str(record["trace_id"]), TimedSpan(name, float(start), float(duration), status)  # type: ignore[arg-type]


def _finite(*numbers: object) -> bool:
    return all(
        isinstance(n, int | float) and not isinstance(n, bool) and math.isfinite(n) for n in numbers
    )
