"""One rule for showing an untrusted value inside a message or a log line.

Messages may name what was refused (a tool name, a module ID, a version) but
must never carry a payload, a control sequence or an unbounded string. Every
message that quotes a requested value goes through :func:`shown`:

- a string is ``repr``-quoted and cut to ``limit`` characters (``...`` marks a
  cut); ``repr`` escapes every character Python does not consider printable,
  so control characters, line and paragraph separators, bidi overrides and
  other format characters appear as ``\\x..``/``\\u....`` escapes, never raw;
- an ``int`` (not a ``bool``) of at most 18 digits is shown as digits;
- anything else is shown as its type only: ``<float>``, ``<dict>``, ``<bool>``.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import Final


__all__ = ["PATH_LIMIT", "shown", "shown_path"]

_DIGITS_BOUND: Final = 10**18
#: How much of a path a message shows: any usual path whole, a pathological one cut.
PATH_LIMIT: Final = 1024


def shown(value: object, limit: int = 120) -> str:
    """``value`` as it may appear in a message; see the module docstring."""
    if type(value) is str:
        return repr(value[:limit]) + ("..." if len(value) > limit else "")
    if type(value) is int and -_DIGITS_BOUND < value < _DIGITS_BOUND:
        return str(value)
    return f"<{type(value).__name__}>"


def shown_path(path: object) -> str:
    """A path (``str`` or ``os.PathLike``) as a message shows it: :func:`shown`, up to
    :data:`PATH_LIMIT` characters. A directory name is anyone's choice: it may hold a
    newline, an ANSI sequence or a bidi override like any other untrusted value."""
    return shown(path if type(path) is str else str(path), PATH_LIMIT)
