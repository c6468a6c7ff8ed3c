"""Text for text logs: one record is one line, and nothing in it can steer a terminal.

Whatever goes into a text log line (exception messages, tracebacks, type
names, tool names) passes through :func:`log_text` first. Newlines and every
other control character (ESC included, so no ANSI sequence survives), line and
paragraph separators, format characters (bidi overrides, zero-width
characters, the BOM), surrogates, private-use and unassigned code points are
written as escapes; a backslash is doubled, so an escape in the log always
stands for one character and a message cannot forge one. Nothing is dropped.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["log_text"]

# Candidates: backslash, and everything outside printable ASCII; each is then judged.
_SUSPECT: Final = re.compile(r"[^\x20-\x5b\x5d-\x7e]")
_ESCAPED_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_SHORT: Final = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def log_text(text: str) -> str:
    """``text`` with every character that could break a log line or a terminal escaped."""
    if not _SUSPECT.search(text):
        return text
    return _SUSPECT.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    short = _SHORT.get(char)
    if short is not None:
        return short
    code = ord(char)
    if code >= 0x80 and not 0x80 <= code <= 0x9F:
        import unicodedata  # only for text beyond ASCII

        if unicodedata.category(char) not in _ESCAPED_CATEGORIES:
            return char
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"
