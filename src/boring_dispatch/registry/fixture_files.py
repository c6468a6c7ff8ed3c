"""Fixture files: real calls recorded as reviewable JSON lines, and read back whole or not at all.

One line per recorded outcome, keys sorted, ASCII only (anything else is
``\\u`` escaped, so a reviewer's terminal shows exactly what is read)::

    {"args":{"job_id":7,"verbose":false},"fixture":1,"result":{"job_id":7},"tool":"get_job"}
    {"args":{"job_id":-1,"verbose":false},"error":"no such job","fixture":1,"tool":"get_job"}

``args`` are the canonical validated arguments (defaults filled in, keys
sorted, sensitive values ``"[redacted]"``), exactly the key a fixture world
looks up. A result or message the audit would withhold (it held a sensitive
value) is recorded withheld, so a secret never lands in a fixture file.

:class:`FixtureRecorder` is an audit sink: put it on a real table, run real
calls, review the file in git. It records only calls that reached their
handler and returned (``ok``) or raised ``ToolError`` (``tool_error``), one
line per tool and key: a key already in the file, or recorded earlier, is not
recorded again (the first outcome stays).

:func:`read_fixtures` reads a file with the capped reader of
:mod:`boring_dispatch._files` and returns the fixtures by tool name, or raises:
a line that is not one JSON object (a torn record included: a fixture file is
reviewed, never repaired), a duplicate JSON key, a format newer than
:data:`FORMAT`, an unknown member, a tool the table lacks, two lines with the
same tool and arguments; and building the world refuses arguments that hold an
unredacted sensitive value or do not fit the tool's schema.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Final, final

from boring_dispatch._files import MAX_TRACE_BYTES, FileRefused
from boring_dispatch._files import read_lines as _read_lines
from boring_dispatch._json import StrictJSONError, strict_loads
from boring_dispatch._quote import shown
from boring_dispatch.errors import RegistryInvalid
from boring_dispatch.observe.audit import AppendFile, AuditEvent
from boring_dispatch.registry._canonical import canonical_text
from boring_dispatch.registry.fixtures import Fixture, Recorded

__all__ = ["FORMAT", "FileRefused", "FixtureRecorder", "read_fixtures"]

#: The format version this dispatcher writes and reads; a newer one is refused.
FORMAT: Final = 1
_KEYS: Final = frozenset({"fixture", "tool", "args", "result", "error"})
_ENCODER: Final = json.JSONEncoder(
    ensure_ascii=True, allow_nan=False, separators=(",", ":"), sort_keys=True
)


@final
class FixtureRecorder(AppendFile):
    """An audit sink that appends each new outcome of a real call to a fixture file.

    Raises:
        FileRefused: the file is refused by the safe appender or the reader.
        OSError: the file cannot be opened or created.
        RegistryInvalid: the file already holds something :func:`read_fixtures` refuses.
    """

    #: Asks the pipeline for the canonical arguments of each call.
    wants_fixture_args: Final = True

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._seen: set[tuple[str, str]] = set()
        if Path(path).exists() and Path(path).stat().st_size:
            for name, fixture in read_fixtures(Path(path)).items():
                self._seen.update((name, canonical_text(r.args)) for r in fixture.recorded)
        super().__init__(path)

    def record(self, event: AuditEvent) -> None:
        """Append the call's outcome, unless it is not a handler outcome or is known already."""
        if event.tool is None or event.fixture_args is None:
            return
        line: dict[str, object] = {
            "fixture": FORMAT,
            "tool": event.tool,
            "args": event.fixture_args,
        }
        observation = event.observation
        if observation.ok:
            line["result"] = observation.result
        elif observation.error is not None and observation.error.code == "tool_error":
            line["error"] = observation.error.message
        else:
            return
        key = (event.tool, canonical_text(event.fixture_args))
        data = (_ENCODER.encode(line) + "\n").encode("ascii")
        with self._lock:  # one check and one write: two threads never write one key twice
            if key in self._seen:
                return
            self._append(data)
            self._seen.add(key)


def read_fixtures(
    path: str | os.PathLike[str],
    tools: Collection[str] | None = None,
    *,
    max_bytes: int = MAX_TRACE_BYTES,
) -> Mapping[str, Fixture]:
    """The fixtures of a fixture file by tool name; all of them, or an exception.

    ``tools``: the names of the table the fixtures are for; a line naming
    another tool is refused (``None``: not checked here; building the world
    checks it anyway).

    Raises:
        OSError: the file cannot be opened.
        FileRefused: not a regular file, world-writable, too large, a line that is
            not UTF-8 or holds a refused character.
        RegistryInvalid: ``fixture file line N: ...`` for every other refusal
            (see the module docstring).
    """
    outcomes: dict[str, list[Recorded]] = {}
    first_line: dict[tuple[str, str], int] = {}
    for line in _read_lines(path, max_bytes):
        text = line.text or ""
        if not text.strip():
            continue
        tool, recorded = _parse(line.number, text, tools)
        key = (tool, canonical_text(recorded.args))
        if key in first_line:
            raise RegistryInvalid(
                f"fixture file line {line.number}: the same tool and arguments as "
                f"line {first_line[key]}"
            )
        first_line[key] = line.number
        outcomes.setdefault(tool, []).append(recorded)
    return MappingProxyType({name: Fixture(*items) for name, items in outcomes.items()})


def _object(where: str, text: str) -> dict[str, object]:
    try:
        data = strict_loads(text)
    except StrictJSONError as error:
        raise RegistryInvalid(f"{where}: not one JSON object ({error}); a torn record?") from None
    if type(data) is not dict:
        raise RegistryInvalid(f"{where}: not a JSON object")
    return data


def _parse(number: int, text: str, tools: Collection[str] | None) -> tuple[str, Recorded]:
    where = f"fixture file line {number}"
    data = _object(where, text)
    version = data.get("fixture")
    if type(version) is not int:
        raise RegistryInvalid(f"{where}: no fixture format number")
    if version > FORMAT:
        raise RegistryInvalid(
            f"{where}: fixture format {version} is newer than this dispatcher reads ({FORMAT})"
        )
    if version < 1 or not data.keys() <= _KEYS:
        raise RegistryInvalid(f"{where}: members other than {sorted(_KEYS)}")
    tool, args = data.get("tool"), data.get("args")
    if type(tool) is not str:
        raise RegistryInvalid(f"{where}: tool must be a string")
    if tools is not None and tool not in tools:
        raise RegistryInvalid(f"{where}: the table has no tool {shown(tool, 64)}")
    if type(args) is not dict:
        raise RegistryInvalid(f"{where}: args must be an object")
    if ("result" in data) == ("error" in data):
        raise RegistryInvalid(f"{where}: exactly one of result and error")
    if "error" in data:
        message = data["error"]
        if type(message) is not str:
            raise RegistryInvalid(f"{where}: error must be a string")
        return tool, Recorded(args, error=message, canonical=True)
    return tool, Recorded(args, result=data["result"], canonical=True)
