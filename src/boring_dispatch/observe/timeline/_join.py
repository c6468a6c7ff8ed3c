"""The three times of every call of our MCP server in a session, joined to our spans.

Definitions (``docs/timeline.md`` states them for people):

- **decision**: from the event before the call (the person's message that
  began the turn, or the previous tool output, whichever is later in the
  file) to the call event; ``null`` when the call has no such event;
- **execution**: from the call event to its first output event (Codex:
  ``mcp_tool_call_end`` or ``function_call_output``; Claude Code: the
  ``tool_result``), broken down by our spans of the call's trace id:
  ``dispatcher_ms`` (``mcp.tool_call``, the whole call inside our server),
  ``resolve_ms``, ``setup_ms`` (``dispatcher.setup``, when it exists),
  ``process_ms`` (``dispatcher.process``, the outermost) and ``gateway_ms``
  (``gateway.interface``, the outermost); ``outside_ms`` is execution minus
  dispatcher: host and transport;
- **response creation**: for the last call of a turn (the one whose output
  came last), from its output to the turn's final assistant message (the
  last assistant message before the next person's message); ``null`` for
  the other calls, and when the turn has no assistant message after it.

A call is ours when its server is: a server at least one of whose results
carries our trace id, a server offering ``invoke_security_0/1/2``, or a
server named by the caller.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Final, cast, final

from boring_dispatch._value import _astuple, value
from boring_dispatch.observe.timeline._events import Event, Session
from boring_dispatch.observe.timeline._spans import SpanIndex, TimedSpan

if TYPE_CHECKING:
    from boring_dispatch._value import _Value

__all__ = ["CallTiming", "ours", "time_calls"]

_TIER_TOOL: Final = re.compile(r"invoke_security_[012]")
#: span name -> field of :class:`CallTiming`
_SPAN_FIELDS: Final = {
    "mcp.tool_call": "dispatcher",
    "dispatcher.resolve": "resolve",
    "dispatcher.setup": "setup",
    "dispatcher.process": "process",
    "gateway.interface": "gateway",
}


@final
@value
class CallTiming:
    """One call's times, in ms (``None`` where the session or the spans have no such event)."""

    call_id: str
    server: str
    tool: str
    trace_id: str | None
    #: The call event, seconds since the epoch (UTC).
    called_at: float
    output_at: float | None
    turn: int
    is_error: bool | None
    decision_ms: float | None
    execution_ms: float | None
    response_ms: float | None
    dispatcher_ms: float | None
    #: When our server began the call, after the call event (ms; clocks of one machine).
    dispatcher_offset_ms: float | None
    resolve_ms: float | None
    setup_ms: float | None
    process_ms: float | None
    gateway_ms: float | None
    outside_ms: float | None
    #: The host's own measure of the call (Codex's ``duration``).
    host_ms: float | None
    #: Status code of the ``mcp.tool_call`` span.
    status: str | None

    def to_dict(self) -> dict[str, object]:
        """The call as JSON data: times rounded to 0.001 ms, ``called_at`` in ISO 8601 UTC."""
        from datetime import UTC, datetime

        out: dict[str, object] = {}
        for key, field in zip(self.__match_args__, _astuple(cast("_Value", self)), strict=True):
            if key in {"called_at", "output_at"}:
                out[key] = (
                    None
                    if field is None
                    else datetime.fromtimestamp(float(field), UTC)  # type: ignore[arg-type]
                    .isoformat(timespec="milliseconds")
                    .replace("+00:00", "Z")
                )
            elif isinstance(field, float):
                out[key] = round(field, 3)
            else:
                out[key] = field
        return out


def ours(session: Session, servers: Collection[str] = ()) -> frozenset[str]:
    """The servers of ``session`` that are boring-dispatch servers (see the module docstring)."""
    server_of = {e.call_id: e.server for e in session.events if e.kind == "call" and e.server}
    found = set(servers)
    for event in session.events:
        if event.kind == "call" and event.server and _TIER_TOOL.fullmatch(event.tool or ""):
            found.add(event.server)
        if event.kind == "output" and event.trace_id is not None:
            server = server_of.get(event.call_id) or event.server
            if server:
                found.add(server)
    return frozenset(found)


def time_calls(session: Session, spans: SpanIndex, servers: Collection[str]) -> list[CallTiming]:
    """The timing of every call of ``servers`` in ``session``, in the order of the calls."""
    events = session.events
    outputs: dict[str, list[Event]] = {}
    for event in events:
        if event.kind == "output" and event.call_id is not None:
            outputs.setdefault(event.call_id, []).append(event)
    turns = _turns(events)
    anchors = _anchors(events)
    last_of_turn: dict[int, str] = {}
    for index, event in enumerate(events):
        if event.kind == "call" and event.call_id in outputs:
            turn = turns[index]
            known = last_of_turn.get(turn)
            if known is None or outputs[known][0].at <= outputs[str(event.call_id)][0].at:
                last_of_turn[turn] = str(event.call_id)
    finals = _final_messages(events, turns)
    timings = []
    for index, event in enumerate(events):
        if event.kind != "call" or event.server not in servers or event.call_id is None:
            continue
        results = outputs.get(event.call_id, [])
        output = results[0] if results else None
        turn = turns[index]
        response = None
        final = finals.get(turn)
        if output is not None and last_of_turn.get(turn) == event.call_id and final is not None:
            response = _ms(output.at, final) if final >= output.at else None
        timings.append(_timing(event, results, (turn, anchors[index], response), spans))
    return timings


def _timing(
    call: Event,
    results: Sequence[Event],
    placement: tuple[int, float | None, float | None],
    spans: SpanIndex,
) -> CallTiming:
    """``placement``: the call's turn, its decision anchor and its response time."""
    turn, anchor, response_ms = placement
    output = results[0] if results else None
    trace_id = next((r.trace_id for r in results if r.trace_id is not None), None)
    host_ms = next((r.host_ms for r in results if r.host_ms is not None), None)
    is_error = next((r.is_error for r in results if r.is_error is not None), None)
    parts = _span_parts(spans.by_trace.get(trace_id, ()) if trace_id else ())
    execution = None if output is None else _ms(call.at, output.at)
    dispatcher = parts.get("dispatcher")
    top = parts.get("dispatcher_start")
    return CallTiming(
        call_id=str(call.call_id),
        server=str(call.server),
        tool=str(call.tool),
        trace_id=trace_id,
        called_at=call.at,
        output_at=None if output is None else output.at,
        turn=turn,
        is_error=is_error,
        decision_ms=None if anchor is None else _ms(anchor, call.at),
        execution_ms=execution,
        response_ms=response_ms,
        dispatcher_ms=dispatcher,
        dispatcher_offset_ms=None if top is None else (top - call.at) * 1000.0,
        resolve_ms=parts.get("resolve"),
        setup_ms=parts.get("setup"),
        process_ms=parts.get("process"),
        gateway_ms=parts.get("gateway"),
        outside_ms=None if execution is None or dispatcher is None else execution - dispatcher,
        host_ms=host_ms,
        status=_status(spans.by_trace.get(trace_id, ()) if trace_id else ()),
    )


def _span_parts(spans: Sequence[TimedSpan]) -> dict[str, float]:
    """The first-started (outermost) span of each name we know, by field; plus its start."""
    parts: dict[str, float] = {}
    for timed in spans:  # sorted by start: the first of a name is the outermost
        field = _SPAN_FIELDS.get(timed.name)
        if field is not None and field not in parts:
            parts[field] = timed.duration_ms
            if field == "dispatcher":
                parts["dispatcher_start"] = timed.start
    return parts


def _status(spans: Sequence[TimedSpan]) -> str | None:
    return next((s.status for s in spans if s.name == "mcp.tool_call"), None)


def _ms(start: float, end: float) -> float:
    return (end - start) * 1000.0


def _turns(events: Sequence[Event]) -> list[int]:
    """The turn of each event: the number of person's messages before it (0: before any)."""
    turn = 0
    out = []
    for event in events:
        turn += event.kind == "user"
        out.append(turn)
    return out


def _anchors(events: Sequence[Event]) -> list[float | None]:
    """For each event, the time of the latest person's message or tool output before it."""
    anchor: float | None = None
    out: list[float | None] = []
    for event in events:
        out.append(anchor)
        if event.kind in {"user", "output"}:
            anchor = event.at
    return out


def _final_messages(events: Sequence[Event], turns: Sequence[int]) -> Mapping[int, float]:
    """The time of each turn's last assistant message."""
    finals: dict[int, float] = {}
    for event, turn in zip(events, turns, strict=True):
        if event.kind == "assistant":
            finals[turn] = event.at
    return finals
