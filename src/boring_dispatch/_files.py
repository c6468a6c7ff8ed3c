"""The dispatcher's own text files: one safe appender and one safe reader (stdlib only).

Appending (audit sinks, the trace recorder, span files): the file is opened
with ``O_APPEND|O_CREAT|O_NOFOLLOW|O_NONBLOCK`` and mode 0o600, and refused
unless it is a regular file with one link, owned by the effective user; a
group- or world-writable file of ours loses those write bits. A symlink at the
file's place is refused, a FIFO neither blocks nor is written. The directories
above the file are trusted (the operator chose them).

Each record is one ``write`` of one line. A writer killed mid-write, or a disk
that filled up (``ENOSPC``), can leave a torn line; the next record then starts
on a fresh line (a newline is written first when the file does not end in
one), so a torn record never swallows the next one, and readers skip and
report torn lines instead of failing on them.

Reading (golden files, traces, audit files): the path (an operator's choice:
symlinks are followed) must name a regular file, checked with ``stat`` before
the open and with ``fstat`` after it; it is opened with ``O_NONBLOCK`` (a FIFO
swapped in between never blocks), must not be world-writable, and is read up
to a cap (``/dev/zero`` is refused, never read).
Lines end at ``\\n`` only (a ``\\r`` before it is dropped). Every other line or
paragraph separator, control character (except tab), format character (bidi
controls, zero-width characters, the BOM) is refused with its line number:
git, grep and editors would show such a file differently from how it is read.

Refusals are :class:`FileRefused`; a file that cannot be opened at all
(missing, permissions) raises the usual :class:`OSError`.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from pathlib import Path
from typing import Final, Literal, final

from boring_dispatch._value import value

__all__ = [
    "MAX_GOLDEN_BYTES",
    "MAX_TRACE_BYTES",
    "FileRefused",
    "JsonLines",
    "Line",
    "append_once",
    "append_record",
    "bad_character",
    "open_append",
    "read_capped",
    "read_json_lines",
    "read_lines",
    "split_lines",
]

#: Cap on a golden file (a few hundred names fill a few kilobytes).
MAX_GOLDEN_BYTES: Final = 1 << 20
#: Cap on a trace or audit file read whole.
MAX_TRACE_BYTES: Final = 64 << 20

#: Why a file was refused.
#: ``symlink``: a symlink stands at the path of a file to append to;
#: ``not_regular``: a FIFO, socket, device or directory;
#: ``not_owner``: a file to append to belongs to another user;
#: ``linked``: a file to append to has more than one hard link;
#: ``unsafe_mode``: a file to read is world-writable;
#: ``too_large``: more bytes than the cap;
#: ``unreadable``: reading the opened file failed;
#: ``not_utf8``: a line is not UTF-8;
#: ``bad_character``: a line holds a separator, control or format character.
Reason = Literal[
    "symlink",
    "not_regular",
    "not_owner",
    "linked",
    "unsafe_mode",
    "too_large",
    "unreadable",
    "not_utf8",
    "bad_character",
]

_APPEND_FLAGS: Final = (
    os.O_RDWR
    | os.O_APPEND
    | os.O_CREAT
    | os.O_NOFOLLOW
    | os.O_NONBLOCK
    | os.O_CLOEXEC
    | os.O_NOCTTY
)
_READ_FLAGS: Final = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
_READ_CHUNK: Final = 1 << 16
# Everything but tab and printable ASCII; each match is then judged by its category.
_SUSPECT: Final = re.compile(r"[^\t\x20-\x7e]")
# Line and paragraph separators, controls, format characters (bidi, zero-width,
# BOM), surrogates. (A \n never reaches the check: it is the line end.)
_BAD_CATEGORIES: Final = frozenset({"Zl", "Zp", "Cc", "Cf", "Cs"})


@final
class FileRefused(ValueError):
    """A file failed a check; ``reason`` says which, ``line`` where (1-based) when it is a line.

    The message names the reason, and for a refused character its code point,
    never the file's text.
    """

    def __init__(self, reason: Reason, message: str, *, line: int | None = None) -> None:
        super().__init__(f"line {line}: {message}" if line is not None else message)
        #: Stable identity of the refusal (see :data:`Reason`).
        self.reason: Final = reason
        #: The 1-based line number, for ``not_utf8`` and ``bad_character``.
        self.line: Final = line


# --------------------------------------------------------------------------- #
# Appending


def open_append(path: str | os.PathLike[str]) -> int:
    """Open ``path`` for appending records (created 0o600); the caller closes the descriptor.

    Raises:
        FileRefused: ``symlink``, ``not_regular``, ``not_owner`` or ``linked``.
        OSError: the file cannot be opened or created.
    """
    try:
        fd = os.open(path, _APPEND_FLAGS, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise FileRefused("symlink", "a symlink stands at the file's path") from None
        if exc.errno in (errno.ENXIO, errno.EISDIR):  # a socket, a FIFO, a directory
            raise FileRefused("not_regular", "not a regular file") from None
        raise
    try:
        _check_appendable(fd)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _check_appendable(fd: int) -> None:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise FileRefused("not_regular", "not a regular file")
    if info.st_uid != os.geteuid():
        raise FileRefused("not_owner", "the file belongs to another user")
    if info.st_nlink != 1:
        raise FileRefused("linked", "the file has more than one hard link")
    mode = stat.S_IMODE(info.st_mode)
    if mode & (stat.S_IWGRP | stat.S_IWOTH):
        os.fchmod(fd, mode & ~(stat.S_IWGRP | stat.S_IWOTH))


def append_record(fd: int, data: bytes) -> None:
    """Append one line (``data`` ends with ``\\n``) as one ``write``, on a fresh line.

    A newline goes first when the file does not end in one (a torn record of a
    killed writer, or of a full disk). The rest of a short write follows at
    once; if that fails, the error propagates and the next record starts on a
    fresh line again.

    Raises:
        OSError: the write failed (``ENOSPC``, ``EIO``...).
    """
    if not _ends_a_line(fd):
        data = b"\n" + data
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def append_once(path: str | os.PathLike[str], data: bytes) -> None:
    """Open ``path`` with :func:`open_append`, append one record, close it.

    Raises:
        FileRefused: see :func:`open_append`.
        OSError: opening or writing failed.
    """
    fd = open_append(path)
    try:
        append_record(fd, data)
    finally:
        os.close(fd)


def _ends_a_line(fd: int) -> bool:
    size = os.fstat(fd).st_size
    return size == 0 or os.pread(fd, 1, size - 1) == b"\n"


# --------------------------------------------------------------------------- #
# Reading


def read_capped(path: str | os.PathLike[str], cap: int) -> bytes:
    """The bytes of the regular file at ``path`` (symlinks followed), at most ``cap``.

    Raises:
        FileRefused: ``not_regular``, ``unsafe_mode`` (world-writable),
            ``too_large`` or ``unreadable``.
        OSError: the file cannot be opened (missing, permissions).
    """
    # Looked at before it is opened, so a device or FIFO is never opened at all; the
    # descriptor is checked again below (the path may change in between).
    if not stat.S_ISREG(Path(path).stat().st_mode):
        raise FileRefused("not_regular", "not a regular file")
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket
            raise FileRefused("not_regular", "not a regular file") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileRefused("not_regular", "not a regular file")
        if info.st_mode & stat.S_IWOTH:
            raise FileRefused("unsafe_mode", "the file is world-writable")
        if info.st_size > cap:
            raise FileRefused("too_large", f"the file is larger than {cap} bytes")
        data = _read_at_most(fd, cap + 1)
    finally:
        os.close(fd)
    if len(data) > cap:  # it grew after fstat
        raise FileRefused("too_large", f"the file is larger than {cap} bytes")
    return data


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while total < limit:
        try:
            chunk = os.read(fd, min(_READ_CHUNK, limit - total))
        except OSError:
            raise FileRefused("unreadable", "reading the file failed") from None
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


@final
@value
class Line:
    """One line of a text file."""

    #: 1-based line number.
    number: int
    #: The line without its ``\\n`` (or ``\\r\\n``); ``None`` when it is not UTF-8.
    text: str | None
    #: Whether a ``\\n`` ended it (only the last line of a file can lack one).
    terminated: bool
    #: Why the line is not acceptable text (not UTF-8, a refused character), or ``None``.
    problem: tuple[Reason, str] | None


def split_lines(data: bytes) -> tuple[Line, ...]:
    """Split on ``\\n`` only, decode each line as UTF-8 and judge its characters."""
    parts = data.split(b"\n")
    tail = parts.pop()  # after the last \n: empty when the file ends a line
    raw = [(part, True) for part in parts]
    if tail:
        raw.append((tail, False))
    lines = []
    for number, (part, terminated) in enumerate(raw, start=1):
        body = part[:-1] if terminated and part.endswith(b"\r") else part
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            lines.append(Line(number, None, terminated, ("not_utf8", "the line is not UTF-8")))
            continue
        bad = bad_character(text)
        problem: tuple[Reason, str] | None = None
        if bad is not None:
            problem = ("bad_character", f"{bad} is not allowed in this file")
        lines.append(Line(number, text, terminated, problem))
    return tuple(lines)


def bad_character(text: str) -> str | None:
    """The first refused character of ``text``, described (``"U+2028 (Zl)"``), or ``None``."""
    for match in _SUSPECT.finditer(text):
        char = match.group()
        category = _category(char)
        if category in _BAD_CATEGORIES:
            return f"U+{ord(char):04X} ({category})"
    return None


def _category(char: str) -> str:
    code = ord(char)
    if code < 0x20 or 0x7F <= code <= 0x9F:
        return "Cc"
    import unicodedata  # only for text beyond ASCII

    return unicodedata.category(char)


def read_lines(path: str | os.PathLike[str], cap: int) -> tuple[Line, ...]:
    """The lines of the text file at ``path``, every one acceptable.

    Raises:
        FileRefused: see :func:`read_capped`, or ``not_utf8`` / ``bad_character``
            with the line number of the first bad line.
        OSError: the file cannot be opened.
    """
    lines = split_lines(read_capped(path, cap))
    for line in lines:
        if line.problem is not None:
            raise FileRefused(line.problem[0], line.problem[1], line=line.number)
    return lines


@final
@value
class JsonLines:
    """A JSON-lines file as a trace reader sees it."""

    #: The lines to use, in order (blank lines included; the torn tail left out).
    lines: tuple[Line, ...]
    #: The line number of a torn last record (no ``\\n`` and not JSON), or ``None``.
    torn_tail: int | None


def read_json_lines(path: str | Path, cap: int = MAX_TRACE_BYTES) -> JsonLines:
    """A JSON-lines file read like :func:`read_lines`, its torn last record set aside.

    The last line is torn when no ``\\n`` ends it and it is not a JSON object:
    its writer was interrupted. It is reported, not refused, and never parsed
    as a call; a complete last record without a newline is kept.

    Raises:
        FileRefused: as :func:`read_lines` (a torn tail is exempt from the checks).
        OSError: the file cannot be opened.
    """
    lines = split_lines(read_capped(path, cap))
    torn = None
    if lines and not lines[-1].terminated and not _is_object(lines[-1].text):
        torn = lines[-1].number
        lines = lines[:-1]
    for line in lines:
        if line.problem is not None:
            raise FileRefused(line.problem[0], line.problem[1], line=line.number)
    return JsonLines(lines, torn)


def _is_object(text: str | None) -> bool:
    if text is None:
        return False
    try:
        return isinstance(json.loads(text), dict)
    except (ValueError, RecursionError):
        return False
