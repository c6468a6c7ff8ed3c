"""Every value of a session file replaced by a value of another JSON type: a refusal, never a crash.

A session file is the host's, written from what a model and tools produced;
``dispatcher timeline`` promises an error line (exit 2) for a file it cannot
read, never a traceback. Each field of each record of a real-shaped Codex and
Claude Code session (``kits.sessions``) is replaced, one at a time, by each
JSON type: the timeline is built and rendered, or refused with
:class:`SessionInvalid`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from boring_dispatch.observe.timeline import (
    SessionInvalid,
    build_timeline,
    render_html,
    render_text,
)
from kits.sessions import HostCall, Turn, write_claude, write_codex

OTHER_TYPES: tuple[object, ...] = (None, True, 0, -1.5, 1e308, "", "x", [], ["a"], {}, {"a": 1})
TRACE = "0123456789abcdef0123456789abcdef"


def _session(path: Path, host: str) -> list[str]:
    wire = {
        "content": [{"type": "text", "text": ""}],
        "structuredContent": {"result": {"dispatcher": {"trace_id": TRACE}}},
        "_meta": {"dev.boring-dispatch/trace_id": TRACE},
        "isError": False,
    }
    calls = [
        HostCall(
            f"call_{n}", "invoke_security_0", {}, wire, 1_780_000_001.0 + n, 1_780_000_001.5 + n
        )
        for n in range(2)
    ]
    turns = [Turn(1_780_000_000.0, calls, 1_780_000_009.0)]
    if host == "claude":
        write_claude(path, turns)
    else:
        write_codex(path, turns, namespaced=host == "codex-namespaced")
    return path.read_text().splitlines()


def _paths(value: object, prefix: tuple[object, ...] = ()) -> Iterator[tuple[object, ...]]:
    """Every path into ``value`` (keys and indexes), outermost first."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*prefix, key)
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield (*prefix, index)
            yield from _paths(item, (*prefix, index))


def _replaced(record: Any, path: tuple[object, ...], new: object) -> Any:
    copy = json.loads(json.dumps(record))
    place = copy
    for step in path[:-1]:
        place = place[step]
    place[path[-1]] = new
    return copy


@pytest.mark.parametrize("host", ["codex", "codex-namespaced", "claude"])
def test_a_value_of_any_other_type_anywhere_is_refused_or_read(tmp_path: Path, host: str) -> None:
    lines = _session(tmp_path / "original.jsonl", host)
    crashes: list[str] = []
    target = tmp_path / "session.jsonl"
    for number, line in enumerate(lines):
        if not line.strip():
            continue
        record = json.loads(line)
        for path in _paths(record):
            for new in OTHER_TYPES:
                changed = [*lines]
                changed[number] = json.dumps(_replaced(record, path, new))
                target.write_text("\n".join(changed) + "\n")
                try:
                    timeline = build_timeline(target, tmp_path / "no-logs")
                    render_text(timeline, 1000.0)
                    render_html(timeline, 1000.0)
                    json.dumps(timeline.to_dict(), allow_nan=False)
                except SessionInvalid:
                    continue
                except Exception as error:
                    crashes.append(f"line {number + 1} {path} = {new!r}: {error!r}")
    assert crashes == [], "\n".join(crashes)
