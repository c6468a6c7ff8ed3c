"""The command's own standard streams: text they cannot encode, and a reader that is gone."""

from __future__ import annotations

import contextlib
import sys

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import Final

__all__ = ["BROKEN_PIPE", "INTERRUPTED", "drop_broken_streams", "escape_unencodable"]

#: The exit status when stdout's or stderr's reader is gone: 128 + SIGPIPE, as a shell reports it.
BROKEN_PIPE: Final = 141
#: The exit status of an interrupted command (^C): 128 + SIGINT.
INTERRUPTED: Final = 130


def escape_unencodable() -> None:
    """Write what stdout cannot encode as escapes (``\\xe9``) instead of failing.

    A stdout in ASCII or Latin-1 (``PYTHONIOENCODING``, an old locale) cannot
    hold a blueprint's ``café 日本``: the command would end in a traceback half-way
    through its output. stderr already does this (Python's default for it).
    """
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None and getattr(sys.stdout, "errors", None) == "strict":
        with contextlib.suppress(ValueError, OSError):
            reconfigure(errors="backslashreplace")


def drop_broken_streams() -> None:
    """Put ``/dev/null`` under a standard stream whose pipe is broken, so that the
    interpreter's last flush at exit has nowhere to fail (and prints no second error)."""
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            with contextlib.suppress(OSError, ValueError, AttributeError):
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, stream.fileno())
                os.close(null)
