"""The timeline as a table a person reads in a terminal; slow stretches marked with ``!``."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final

from boring_dispatch._quote import shown

if TYPE_CHECKING:
    from boring_dispatch.observe.timeline._join import CallTiming
    from boring_dispatch.observe.timeline._load import Timeline

__all__ = ["display", "render_text"]

_PLAIN: Final = re.compile(r"[A-Za-z0-9_.:@/-]{1,64}")
_COLUMNS: Final = (
    ("decision", "decision_ms"),
    ("execution", "execution_ms"),
    ("dispatcher", "dispatcher_ms"),
    ("resolve", "resolve_ms"),
    ("process", "process_ms"),
    ("gateway", "gateway_ms"),
    ("outside", "outside_ms"),
    ("response", "response_ms"),
)
# Stretches that can be slow: the three times and the part outside the dispatcher.
_MARKED: Final = frozenset({"decision_ms", "execution_ms", "outside_ms", "response_ms"})


def display(text: str | None) -> str:
    """A name from a session as it may be shown: as is when plain, else quoted (``shown``)."""
    if text is None:
        return "-"
    return text if _PLAIN.fullmatch(text) else shown(text, 40)


def _ms(value: object, slow_ms: float, marked: bool) -> str:
    if not isinstance(value, float):
        return "-"
    mark = "!" if marked and value >= slow_ms else " "
    return f"{value:,.1f}{mark}"


def render_text(timeline: Timeline, slow_ms: float) -> str:
    """The session line, one row per call (times in ms), notes, and the legend."""
    head = ["#", "called at (UTC)", "tool", "trace", *(name for name, _ in _COLUMNS), "status"]
    rows = [head]
    for number, call in enumerate(timeline.calls, start=1):
        rows.append(_row(number, call, slow_ms))
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    numeric = set(range(4, 4 + len(_COLUMNS)))
    out = [
        (
            f"session {display(timeline.session_id)} ({timeline.host}): "
            f"{len(timeline.calls)} call(s) of "
            f"{', '.join(display(s) for s in timeline.servers) or 'no server of ours'}, "
            f"{timeline.joined} joined to spans"
        )
    ]
    for row in rows:
        cells = [
            cell.rjust(widths[i]) if i in numeric else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ]
        out.append("  ".join(cells).rstrip())
    out.extend(f"note: {note}" for note in timeline.notes)
    out.append(
        f"times in ms; ! marks decision, execution, outside or response at or above {slow_ms:g} ms;"
        " outside = execution - dispatcher (host and transport); - = no such event"
    )
    return "\n".join(out) + "\n"


def _row(number: int, call: CallTiming, slow_ms: float) -> list[str]:
    when = datetime.fromtimestamp(call.called_at, UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    figures = {
        "decision_ms": call.decision_ms,
        "execution_ms": call.execution_ms,
        "dispatcher_ms": call.dispatcher_ms,
        "resolve_ms": call.resolve_ms,
        "process_ms": call.process_ms,
        "gateway_ms": call.gateway_ms,
        "outside_ms": call.outside_ms,
        "response_ms": call.response_ms,
    }
    cells = [_ms(figures[key], slow_ms, key in _MARKED) for _, key in _COLUMNS]
    trace = "-" if call.trace_id is None else call.trace_id[:8]
    status = call.status or ("error" if call.is_error else "-")
    return [str(number), when, display(call.tool), trace, *cells, display(status)]
