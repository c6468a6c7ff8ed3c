"""What a host's session file says, reduced to the events a timeline needs (stdlib only).

Both parsers (:mod:`._codex`, :mod:`._claude`) turn their host's lines into
:class:`Event` records in file order; :mod:`._join` computes the times from
them. An event keeps identifiers and times only, never arguments, outputs or
message text.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Final, Literal, final

from boring_dispatch._quote import shown
from boring_dispatch._value import value
from boring_dispatch.observe.trace import valid_trace_id

__all__ = [
    "TRACE_ID_META_KEY",
    "Event",
    "EventKind",
    "Session",
    "SessionInvalid",
    "mcp_name",
    "parse_time",
    "trace_id_of_content",
    "trace_id_of_result",
    "trace_id_of_structured",
]

#: The ``_meta`` key of our MCP results that carries the call's trace id.
TRACE_ID_META_KEY: Final = "dev.boring-dispatch/trace_id"
_MCP_NAME: Final = re.compile(r"mcp__(?P<server>[^_](?:[^_]|_(?!_))*)__(?P<tool>.+)", re.DOTALL)

#: ``user``: a person's message (a turn begins); ``call``: a tool call;
#: ``output``: a call's result; ``assistant``: an assistant message (text);
#: ``turn_end``: the host says the turn is over.
EventKind = Literal["user", "call", "output", "assistant", "turn_end"]


@final
class SessionInvalid(ValueError):
    """A session file that cannot be read as a session (the message says where and why)."""


@final
@value
class Event:
    """One timed event of a session."""

    kind: EventKind
    #: UTC time, seconds since the epoch.
    at: float
    #: 1-based line number in the session file.
    line: int
    call_id: str | None = None
    #: The MCP server's name as the host knows it (``None``: not an MCP tool).
    server: str | None = None
    tool: str | None = None
    #: The trace id the call's result carries (``output`` events).
    trace_id: str | None = None
    #: Whether the result was an error (``output`` events).
    is_error: bool | None = None
    #: The call's duration as the host measured it, in ms (Codex only).
    host_ms: float | None = None


@final
@value
class Session:
    """A parsed session: its host, its id, its events in file order, and what was skipped."""

    #: ``"codex"`` or ``"claude"``.
    host: str
    session_id: str | None
    events: tuple[Event, ...]
    #: Line number of a torn last line that was skipped, or ``None``.
    torn_line: int | None
    #: Lines skipped because their record type is unknown (count).
    unknown_records: int


def parse_time(text: object, line: int) -> float:
    """An ISO 8601 time with a zone (``...Z``) as seconds since the epoch.

    Raises:
        SessionInvalid: ``text`` is not such a time.
    """
    if isinstance(text, str) and len(text) <= 64:
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            moment = None
        if moment is not None and moment.tzinfo is not None:
            return moment.astimezone(UTC).timestamp()
    raise SessionInvalid(f"line {line}: the timestamp {shown(text)} is not an ISO 8601 UTC time")


def mcp_name(name: object, namespace: object = None) -> tuple[str, str] | None:
    """``(server, tool)`` of an MCP tool name (``mcp__server__tool``, or a namespace + name)."""
    if not isinstance(name, str):
        return None
    if isinstance(namespace, str) and namespace.startswith("mcp__") and len(namespace) > 5:
        return namespace[5:], name
    match = _MCP_NAME.fullmatch(name)
    return None if match is None else (match["server"], match["tool"])


def trace_id_of_result(result: object) -> str | None:
    """The trace id of an MCP ``CallToolResult`` (wire shape): ``_meta`` first, then our result.

    ``structuredContent.result.dispatcher.trace_id`` is where the dispatcher
    puts it for a repository call; a text block holding the JSON of
    ``structuredContent`` (what hosts show a model) is read too.
    """
    if not isinstance(result, dict):
        return None
    return (
        _meta_trace_id(result)
        or trace_id_of_structured(result.get("structuredContent"))
        or trace_id_of_content(result.get("content"))
    )


def _meta_trace_id(result: object) -> str | None:
    meta = result.get("_meta") if isinstance(result, dict) else None
    found = meta.get(TRACE_ID_META_KEY) if isinstance(meta, dict) else None
    return found if valid_trace_id(found) else None


def trace_id_of_structured(structured: object) -> str | None:
    """``result.dispatcher.trace_id`` of a ``structuredContent`` object, when it is one."""
    if not isinstance(structured, dict):
        return None
    inner = structured.get("result")
    dispatcher = inner.get("dispatcher") if isinstance(inner, dict) else None
    found = dispatcher.get("trace_id") if isinstance(dispatcher, dict) else None
    return found if valid_trace_id(found) else None


def trace_id_of_content(content: object) -> str | None:
    """The trace id in a text (or text blocks) holding the JSON of ``structuredContent``."""
    texts: list[str] = []
    if isinstance(content, str):
        texts.append(content)
    elif isinstance(content, list):
        texts.extend(
            block["text"]
            for block in content
            if isinstance(block, dict) and isinstance(block.get("text"), str)
        )
    for text in texts:
        if not text.lstrip().startswith("{"):
            continue
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError):
            continue
        found = trace_id_of_structured(parsed) or _meta_trace_id(parsed)
        if found is not None:
            return found
    return None
