"""Claude Code transcripts (``~/.claude/projects/<cwd>/<session>.jsonl``) as events.

Lines carry ``type``, ``uuid``, ``parentUuid``, ``sessionId``, ``timestamp``
and ``message``. What is read (side chains, i.e. subagents, and meta lines
the host injects are skipped):

- an ``assistant`` line: each ``tool_use`` block ``{id, name, input}`` is a
  call (an MCP tool is named ``mcp__<server>__<tool>``), each non-empty
  ``text`` block is assistant text;
- a ``user`` line: each ``tool_result`` block ``{tool_use_id, content,
  is_error}`` is a call's result; the trace id is read from its ``_meta`` or
  from the JSON of ``structuredContent`` the host put in ``content``; any
  other content (a string, text blocks) is the person's message.

Claude Code writes no turn-end record: a turn ends at the next person's
message or at the end of the file. Other line types are counted as unknown.
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
    trace_id_of_content,
    trace_id_of_result,
)

__all__ = ["parse_claude"]

# Line types that carry no events but are not unknown to us.
_QUIET_TYPES: Final = frozenset({"summary", "system", "file-history-snapshot"})


def parse_claude(records: tuple[tuple[int, dict[str, object]], ...], torn: int | None) -> Session:
    """The events of a Claude Code transcript's records (see the module docstring).

    Raises:
        SessionInvalid: a user or assistant line has no valid timestamp, no
            ``message`` object, or a tool block without its id.
    """
    events: list[Event] = []
    unknown = 0
    session_id: str | None = None
    for number, record in records:
        kind = record.get("type")
        if session_id is None and isinstance(record.get("sessionId"), str):
            session_id = str(record["sessionId"])
        if not isinstance(kind, str) or kind not in {"user", "assistant"}:  # lists are unhashable
            unknown += not isinstance(kind, str) or kind not in _QUIET_TYPES
            continue
        if record.get("isSidechain") is True or record.get("isMeta") is True:
            continue
        at = parse_time(record.get("timestamp"), number)
        message = record.get("message")
        if not isinstance(message, dict):
            raise SessionInvalid(f"line {number}: the {kind} line has no message object")
        content = message.get("content")
        if kind == "assistant":
            events.extend(_assistant(content, at, number))
        else:
            events.extend(_user(record, content, at, number))
    return Session("claude", session_id, tuple(events), torn, unknown)


def _block_id(block: Mapping[str, object], key: str, number: int) -> str:
    found = block.get(key)
    if not isinstance(found, str) or not found:
        raise SessionInvalid(f"line {number}: a {block.get('type')} block has no {key}")
    return found


def _assistant(content: object, at: float, number: int) -> list[Event]:
    if isinstance(content, str):
        return [Event("assistant", at, number)] if content.strip() else []
    events: list[Event] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_use":
            name = block.get("name")
            named = mcp_name(name)
            server, tool = named if named is not None else (None, name)
            events.append(
                Event(
                    "call",
                    at,
                    number,
                    call_id=_block_id(block, "id", number),
                    server=server,
                    tool=tool if isinstance(tool, str) else "?",
                )
            )
        elif block.get("type") == "text" and str(block.get("text", "")).strip():
            events.append(Event("assistant", at, number))
    return events


def _user(record: Mapping[str, object], content: object, at: float, number: int) -> list[Event]:
    if isinstance(content, str):
        return [Event("user", at, number)]
    events: list[Event] = []
    spoke = False
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_result":
            result = {"_meta": block.get("_meta"), "content": block.get("content")}
            trace_id = trace_id_of_result(result) or _line_trace_id(record)
            events.append(
                Event(
                    "output",
                    at,
                    number,
                    call_id=_block_id(block, "tool_use_id", number),
                    trace_id=trace_id,
                    is_error=block.get("is_error") is True,
                )
            )
        elif block.get("type") in ("text", "image"):  # a tuple: a list value compares, never hashes
            spoke = True
    return [Event("user", at, number), *events] if spoke else events


def _line_trace_id(record: Mapping[str, object]) -> str | None:
    """The trace id in what the line keeps of the raw result (``toolUseResult``, ``mcpMeta``)."""
    raw = record.get("toolUseResult")
    found = trace_id_of_result(raw) if isinstance(raw, dict) else trace_id_of_content(raw)
    meta = record.get("mcpMeta")
    if found is None and isinstance(meta, dict):
        found = trace_id_of_result({"_meta": meta})
    return found
