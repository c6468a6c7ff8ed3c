"""Reading a host's session file into JSON objects, line by line (stdlib; zstd optional).

A session file is read with :func:`boring_dispatch._files.read_capped` (a
regular file, not world-writable, capped). A ``.zst`` file is decompressed
with the ``zstandard`` package when it is installed (the output is capped
too). Every line must be one JSON object; a blank line is skipped, a torn
last line (no newline and not a JSON object: its writer was interrupted) is
skipped and reported, and any other line that is not a JSON object refuses
the file with its line number. Characters the dispatcher's own files refuse
(controls, bidi) are accepted here: they occur in people's messages, and
nothing of a message is ever shown.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final

from boring_dispatch._files import FileRefused, read_capped, split_lines
from boring_dispatch.observe.timeline._events import SessionInvalid

__all__ = ["MAX_SESSION_BYTES", "SessionLines", "read_session_lines"]

#: Cap on a session file (decompressed).
MAX_SESSION_BYTES: Final = 256 << 20
_ZSTD_SUFFIX: Final = ".zst"

#: ``(line number, object)`` pairs in order, and the torn last line's number or ``None``.
SessionLines = tuple[tuple[tuple[int, dict[str, object]], ...], int | None]


def read_session_lines(path: Path) -> SessionLines:
    """The JSON objects of a session file, with the number of a skipped torn last line.

    Raises:
        SessionInvalid: the file cannot be read, is too large, is compressed
            without ``zstandard`` installed, or a line is not a JSON object.
    """
    try:
        data = read_capped(path, MAX_SESSION_BYTES)
    except FileRefused as error:
        raise SessionInvalid(f"the session file is refused: {error}") from None
    except OSError as error:
        raise SessionInvalid(f"the session file cannot be read: {error.strerror}") from None
    if path.name.endswith(_ZSTD_SUFFIX):
        data = _decompressed(data)
    records: list[tuple[int, dict[str, object]]] = []
    torn: int | None = None
    lines = split_lines(data)
    for index, line in enumerate(lines):
        last = index == len(lines) - 1
        if line.text is None:
            if last and not line.terminated:
                torn = line.number
                break
            raise SessionInvalid(f"line {line.number}: the line is not UTF-8")
        if not line.text.strip():
            continue
        parsed = _object(line.text)
        if parsed is None:
            if last and not line.terminated:
                torn = line.number
                break
            raise SessionInvalid(f"line {line.number}: the line is not a JSON object")
        records.append((line.number, parsed))
    return tuple(records), torn


def _object(text: str) -> dict[str, object] | None:
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, dict) else None


def _decompressed(data: bytes) -> bytes:
    try:
        # Optional: only newer Codex versions write compressed rollouts.
        import zstandard
    except ImportError:
        raise SessionInvalid(
            "the session file is zstd-compressed: install the zstandard package to read it"
        ) from None
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(data)
        out = reader.read(MAX_SESSION_BYTES + 1)
        while len(out) <= MAX_SESSION_BYTES:
            more = reader.read(MAX_SESSION_BYTES + 1 - len(out))
            if not more:
                break
            out += more
    except zstandard.ZstdError:
        raise SessionInvalid("the session file is not valid zstd data") from None
    if len(out) > MAX_SESSION_BYTES:
        raise SessionInvalid(f"the session file is larger than {MAX_SESSION_BYTES} bytes")
    return bytes(out)
