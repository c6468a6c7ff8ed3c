"""Codex rollout files (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``) as events.

Each line is ``{"timestamp": "...Z", "type": ..., "payload": {...}}``; the
first is ``session_meta``. What is read:

- ``response_item`` ``function_call`` (and any other ``*_call`` with a
  ``call_id``): a call; an MCP tool is named ``mcp__<server>__<tool>``, or
  ``<tool>`` with ``"namespace": "mcp__<server>"``;
- ``response_item`` ``function_call_output`` (any ``*_call_output``): what the
  model saw of a call's result;
- ``event_msg`` ``mcp_tool_call_end``: an MCP call's result
  (``{"Ok": CallToolResult}`` or ``{"Err": "..."}``) and the host's duration;
- ``event_msg`` ``user_message`` (a turn begins), ``agent_message`` and
  ``response_item`` ``message`` with role ``assistant`` (assistant text),
  ``task_complete`` (the turn ends).

Other record types are counted as unknown and skipped; unknown fields are
ignored. A record without a valid timestamp, or a call without a
``call_id``, refuses the file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from boring_dispatch.observe.timeline._events import (
    Event,
    Session,
    SessionInvalid,
    mcp_name,
    parse_time,
    trace_id_of_result,
)

__all__ = ["parse_codex"]

_KNOWN_TYPES: Final = frozenset({"session_meta", "response_item", "event_msg", "turn_context"})
_TURN_EVENTS: Final = {
    "user_message": "user",
    "agent_message": "assistant",
    "task_complete": "turn_end",
}


def parse_codex(records: tuple[tuple[int, dict[str, object]], ...], torn: int | None) -> Session:
    """The events of a Codex rollout's records (see the module docstring).

    Raises:
        SessionInvalid: the first record is not ``session_meta``, or a record
            the timeline needs is malformed.
    """
    if not records or records[0][1].get("type") != "session_meta":
        raise SessionInvalid("line 1: a Codex rollout begins with a session_meta record")
    events: list[Event] = []
    unknown = 0
    session_id: str | None = None
    for number, record in records:
        kind = record.get("type")
        payload = record.get("payload")
        if not isinstance(kind, str) or kind not in _KNOWN_TYPES:  # a list is unhashable
            unknown += 1
            continue
        if not isinstance(payload, dict):
            raise SessionInvalid(f"line {number}: the {kind} record has no payload object")
        if kind == "session_meta":
            found = payload.get("id")
            session_id = session_id or (found if isinstance(found, str) else None)
            continue
        at = parse_time(record.get("timestamp"), number)
        event = (
            _response_item(payload, at, number)
            if kind == "response_item"
            else _event_msg(payload, at, number)
            if kind == "event_msg"
            else None
        )
        if event is not None:
            events.append(event)
    return Session("codex", session_id, tuple(events), torn, unknown)


def _call_id(payload: Mapping[str, object], number: int) -> str:
    call_id = payload.get("call_id")
    if not isinstance(call_id, str) or not call_id:
        raise SessionInvalid(f"line {number}: a {payload.get('type')} record has no call_id")
    return call_id


def _response_item(payload: Mapping[str, object], at: float, number: int) -> Event | None:
    item = payload.get("type")
    if not isinstance(item, str):
        return None
    if item == "message":
        return Event("assistant", at, number) if payload.get("role") == "assistant" else None
    if item.endswith("_call_output"):
        return Event("output", at, number, call_id=_call_id(payload, number))
    if item.endswith("_call") and "call_id" in payload:
        name = payload.get("name")
        named = mcp_name(name, payload.get("namespace"))
        server, tool = named if named is not None else (None, name)
        return Event(
            "call",
            at,
            number,
            call_id=_call_id(payload, number),
            server=server,
            tool=tool if isinstance(tool, str) else item,
        )
    return None


def _event_msg(payload: Mapping[str, object], at: float, number: int) -> Event | None:
    item = payload.get("type")
    if isinstance(item, str) and item in _TURN_EVENTS:
        return Event(_TURN_EVENTS[str(item)], at, number)  # type: ignore[arg-type]
    if item != "mcp_tool_call_end":
        return None
    result = payload.get("result")
    trace_id = None
    is_error: bool | None = None
    if isinstance(result, dict) and "Ok" in result:
        ok = result["Ok"]
        trace_id = trace_id_of_result(ok)
        is_error = isinstance(ok, dict) and ok.get("isError") is True
    elif isinstance(result, dict) and "Err" in result:
        is_error = True
    invocation = payload.get("invocation")
    server = tool = None
    if isinstance(invocation, dict):
        server = invocation.get("server") if isinstance(invocation.get("server"), str) else None
        tool = invocation.get("tool") if isinstance(invocation.get("tool"), str) else None
    return Event(
        "output",
        at,
        number,
        call_id=_call_id(payload, number),
        server=server,
        tool=tool,
        trace_id=trace_id,
        is_error=is_error,
        host_ms=_duration_ms(payload.get("duration")),
    )


def _duration_ms(duration: object) -> float | None:
    if not isinstance(duration, dict):
        return None
    secs, nanos = duration.get("secs"), duration.get("nanos", 0)
    if type(secs) is not int or type(nanos) is not int or secs < 0 or not 0 <= nanos < 10**9:
        return None
    return secs * 1000.0 + nanos / 1e6
