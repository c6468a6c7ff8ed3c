"""From a session path and a logs directory to a :class:`Timeline`."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Final, final

from boring_dispatch._value import value
from boring_dispatch.observe.timeline._claude import parse_claude
from boring_dispatch.observe.timeline._codex import parse_codex
from boring_dispatch.observe.timeline._events import Session, SessionInvalid
from boring_dispatch.observe.timeline._join import CallTiming, ours, time_calls
from boring_dispatch.observe.timeline._lines import read_session_lines
from boring_dispatch.observe.timeline._spans import SpanIndex, read_spans

__all__ = ["Timeline", "build_timeline", "find_session"]

_SUFFIXES: Final = (".jsonl", ".jsonl.zst")
_MAX_FILES: Final = 100_000


@final
@value
class Timeline:
    """A session's calls of our server, timed, and what reading met on the way."""

    #: The session file read.
    path: str
    #: ``"codex"`` or ``"claude"``.
    host: str
    session_id: str | None
    #: The servers taken for ours.
    servers: tuple[str, ...]
    calls: tuple[CallTiming, ...]
    #: Calls whose trace id had spans.
    joined: int
    #: Things a reader should know (a torn last line, unknown records, no logs).
    notes: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        """The timeline as JSON data (the ``--format json`` object)."""
        return {
            "session": self.path,
            "host": self.host,
            "session_id": self.session_id,
            "servers": list(self.servers),
            "calls": [call.to_dict() for call in self.calls],
            "joined": self.joined,
            "notes": list(self.notes),
        }


def find_session(path: Path) -> Path:
    """``path`` when it is a file, else the newest session file under the directory.

    Raises:
        SessionInvalid: nothing is at ``path``, or the directory holds no
            ``.jsonl`` / ``.jsonl.zst`` file.
    """
    try:
        if path.is_file():
            return path
        if not path.is_dir():
            raise SessionInvalid("no session file or directory at the given path")
    except OSError as error:  # a name too long, a component that cannot be searched
        raise SessionInvalid(f"the session path cannot be looked up: {error.strerror}") from None
    newest: tuple[float, str] | None = None
    for count, candidate in enumerate(path.rglob("*")):
        if count >= _MAX_FILES:
            break
        name = candidate.name
        if not name.endswith(_SUFFIXES) or name.startswith("agent-"):
            continue
        try:
            info = candidate.stat()
        except OSError:
            continue
        key = (info.st_mtime, str(candidate))
        if candidate.is_file() and (newest is None or key > newest):
            newest = key
    if newest is None:
        raise SessionInvalid("the directory holds no session file (*.jsonl, *.jsonl.zst)")
    return Path(newest[1])


def _is_dir(path: Path) -> bool:
    """Whether ``path`` is a directory; ``False`` also when it cannot even be looked up."""
    try:
        return path.is_dir()
    except OSError:
        return False


def read_session(path: Path) -> Session:
    """The session in the file at ``path``, Codex or Claude Code by its shape.

    Raises:
        SessionInvalid: the file is not a readable session of either host.
    """
    records, torn = read_session_lines(path)
    if not records:
        torn_note = "" if torn is None else f" (line {torn} is torn)"
        raise SessionInvalid(f"the session file holds no complete record{torn_note}")
    first = records[0][1]
    if first.get("type") == "session_meta" and "payload" in first:
        return parse_codex(records, torn)
    if any("sessionId" in record or "parentUuid" in record for _, record in records[:20]):
        return parse_claude(records, torn)
    raise SessionInvalid("the file is neither a Codex rollout nor a Claude Code transcript")


def build_timeline(
    session_path: Path, logs_dir: Path, *, servers: Collection[str] = ()
) -> Timeline:
    """Read the session at ``session_path`` and join its calls to the spans under ``logs_dir``.

    ``logs_dir`` is the directory that holds the span files (``.../dispatch``).

    Raises:
        SessionInvalid: see :func:`find_session` and :func:`read_session`.
    """
    path = find_session(session_path)
    session = read_session(path)
    mine = ours(session, servers)
    notes: list[str] = []
    if session.torn_line is not None:
        notes.append(f"line {session.torn_line} is torn (its writer was interrupted): skipped")
    if session.unknown_records:
        notes.append(f"{session.unknown_records} record(s) of an unknown type: skipped")
    moments = [e.at for e in session.events if e.kind == "call" and e.server in mine]
    if _is_dir(logs_dir):
        index = read_spans(logs_dir, moments)
        notes.extend(f"span file refused: {reason}" for reason in index.refused)
        if index.skipped:
            notes.append(f"{index.skipped} span line(s) that are not spans: skipped")
    else:
        index = SpanIndex({}, 0, 0, ())
        notes.append("the logs directory does not exist: no dispatcher figures")
    calls = tuple(time_calls(session, index, mine))
    joined = sum(1 for call in calls if call.trace_id in index.by_trace)
    return Timeline(
        str(path),
        session.host,
        session.session_id,
        tuple(sorted(mine)),
        calls,
        joined,
        tuple(notes),
    )
