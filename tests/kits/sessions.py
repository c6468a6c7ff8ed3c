"""Host session files written the way Codex and Claude Code write them, from real MCP calls.

:func:`host_call` makes one real call through an :class:`~kits.mcp.McpServer`
and notes the wall-clock times a host would record around it. A
:class:`Turn` is a person's message, the calls that followed it and the final
assistant message; :func:`write_codex` and :func:`write_claude` write turns
in exactly the hosts' line shapes (``docs/timeline.md`` cites them).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from kits.mcp import McpServer

__all__ = ["HostCall", "Turn", "host_call", "iso", "write_claude", "write_codex"]

#: The name the host gave our MCP server in its configuration.
SERVER: Final = "dispatch"


def iso(moment: float) -> str:
    """A host timestamp: ISO 8601 UTC with milliseconds and ``Z``."""
    text = datetime.fromtimestamp(moment, UTC).isoformat(timespec="milliseconds")
    return text.replace("+00:00", "Z")


@dataclass(frozen=True)
class HostCall:
    """One tool call as the host saw it: its id, the wire result and the times around it."""

    call_id: str
    tool: str
    arguments: Mapping[str, object]
    #: The complete ``CallToolResult`` as on the wire (camelCase, ``_meta`` included).
    wire: Mapping[str, Any]
    called_at: float
    returned_at: float

    @property
    def trace_id(self) -> str | None:
        meta = self.wire.get("_meta") or {}
        found = meta.get("dev.boring-dispatch/trace_id")
        return found if isinstance(found, str) else None


@dataclass(frozen=True)
class Turn:
    """A person's message at ``user_at``, the calls, the final assistant message at ``final_at``."""

    user_at: float
    calls: Sequence[HostCall]
    final_at: float | None
    text: str = "please do it"
    extra: Sequence[tuple[float, dict[str, Any]]] = field(default_factory=tuple)


def host_call(server: McpServer, tool: str, arguments: Mapping[str, object]) -> HostCall:
    """Call ``tool`` for real and note the times a host records around the call."""
    called_at = time.time()
    wire = server.call_wire(tool, arguments)
    returned_at = time.time()
    call_id = "call_" + uuid.uuid4().hex[:24]
    return HostCall(call_id, tool, dict(arguments), wire, called_at, returned_at)


def _line(at: float, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": iso(at), "type": kind, "payload": payload}


def write_codex(
    path: Path,
    turns: Sequence[Turn],
    *,
    namespaced: bool = False,
    server: str = SERVER,
    session_id: str | None = None,
) -> Path:
    """A Codex rollout: ``session_meta`` first, then each turn's events and response items.

    ``namespaced`` writes the newer call shape (``"namespace": "mcp__<server>"``
    beside ``"name": "<tool>"``) instead of ``"name": "mcp__<server>__<tool>"``.
    """
    sid = session_id or str(uuid.uuid4())
    start = turns[0].user_at - 0.5 if turns else time.time()
    lines: list[dict[str, Any]] = [
        _line(
            start,
            "session_meta",
            {
                "id": sid,
                "timestamp": iso(start),
                "cwd": "/work/project",
                "originator": "codex_cli_rs",
                "cli_version": "0.64.0",
                "instructions": None,
                "source": "cli",
                "model_provider": "openai",
                "git": {"commit_hash": "0" * 40, "branch": "main"},
            },
        )
    ]
    for turn in turns:
        lines.append(
            _line(
                turn.user_at,
                "turn_context",
                {"cwd": "/work/project", "approval_policy": "on-request", "model": "gpt-5"},
            )
        )
        content = [{"type": "input_text", "text": turn.text}]
        lines.append(
            _line(
                turn.user_at,
                "response_item",
                {"type": "message", "role": "user", "content": content},
            )
        )
        lines.append(
            _line(
                turn.user_at,
                "event_msg",
                {"type": "user_message", "message": turn.text, "images": [], "kind": "plain"},
            )
        )
        for call in turn.calls:
            lines.extend(_codex_call(call, namespaced=namespaced, server=server))
        lines.extend(_line(at, "event_msg", extra) for at, extra in turn.extra)
        if turn.final_at is not None:
            answer = "Done."
            lines.append(
                _line(turn.final_at, "event_msg", {"type": "agent_message", "message": answer})
            )
            lines.append(
                _line(
                    turn.final_at,
                    "response_item",
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": answer}],
                    },
                )
            )
            lines.append(
                _line(
                    turn.final_at,
                    "event_msg",
                    {"type": "task_complete", "turn_id": "1", "last_agent_message": answer},
                )
            )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _codex_call(call: HostCall, *, namespaced: bool, server: str) -> list[dict[str, Any]]:
    arguments = json.dumps(call.arguments)
    item: dict[str, Any] = {
        "type": "function_call",
        "arguments": arguments,
        "call_id": call.call_id,
    }
    if namespaced:
        item.update(name=call.tool, namespace=f"mcp__{server}")
    else:
        item["name"] = f"mcp__{server}__{call.tool}"
    elapsed = max(call.returned_at - call.called_at, 0.0)
    end = {
        "type": "mcp_tool_call_end",
        "call_id": call.call_id,
        "invocation": {"server": server, "tool": call.tool, "arguments": call.arguments},
        "duration": {"secs": int(elapsed), "nanos": int((elapsed % 1) * 1e9)},
        "result": {"Ok": dict(call.wire)},
    }
    output = {
        "type": "function_call_output",
        "call_id": call.call_id,
        "output": json.dumps(call.wire.get("structuredContent")),
    }
    return [
        _line(call.called_at, "response_item", item),
        _line(call.returned_at, "event_msg", end),
        _line(call.returned_at, "response_item", output),
    ]


def write_claude(path: Path, turns: Sequence[Turn], *, server: str = SERVER) -> Path:
    """A Claude Code transcript: user, assistant ``tool_use`` and user ``tool_result`` lines."""
    sid = str(uuid.uuid4())
    lines: list[dict[str, Any]] = []
    parent: list[str | None] = [None]

    def add(at: float, kind: str, message: dict[str, Any], **extra: Any) -> None:
        line_id = str(uuid.uuid4())
        lines.append(
            {
                "parentUuid": parent[0],
                "isSidechain": False,
                "userType": "external",
                "cwd": "/work/project",
                "sessionId": sid,
                "version": "2.0.50",
                "gitBranch": "main",
                "type": kind,
                "message": message,
                "uuid": line_id,
                "timestamp": iso(at),
                **extra,
            }
        )
        parent[0] = line_id

    for turn in turns:
        add(turn.user_at, "user", {"role": "user", "content": turn.text})
        for call in turn.calls:
            use = {
                "type": "tool_use",
                "id": call.call_id,
                "name": f"mcp__{server}__{call.tool}",
                "input": dict(call.arguments),
            }
            add(call.called_at, "assistant", _assistant_message([use]), requestId="req_1")
            text = json.dumps(call.wire.get("structuredContent"))
            blocks = [{"type": "text", "text": text}]
            result = {
                "tool_use_id": call.call_id,
                "type": "tool_result",
                "content": blocks,
                "is_error": bool(call.wire.get("isError")),
            }
            add(
                call.returned_at,
                "user",
                {"role": "user", "content": [result]},
                toolUseResult=blocks,
            )
        if turn.final_at is not None:
            message = _assistant_message([{"type": "text", "text": "Done."}])
            add(turn.final_at, "assistant", message, requestId="req_2")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _assistant_message(content: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": "msg_" + uuid.uuid4().hex[:20],
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": content,
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }
