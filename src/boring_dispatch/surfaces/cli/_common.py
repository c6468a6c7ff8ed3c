"""What the invocation and the subcommands share: reading seconds, and reporting one error."""

from __future__ import annotations

import json

from boring_dispatch.errors import DispatchError, RouteError

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    import argparse
    from typing import NoReturn, TextIO

    from boring_dispatch._files import FileRefused

__all__ = [
    "argument_parser",
    "positive_seconds",
    "report_error",
    "report_file_error",
    "seconds_or_reason",
]


def argument_parser(
    prog: str, *, description: str | None = None, epilog: str | None = None
) -> argparse.ArgumentParser:
    """An ``argparse.ArgumentParser`` (no abbreviations) whose usage errors never echo an
    argument raw.

    argparse quotes a bad choice, but writes unrecognized arguments and unknown
    options as they are (``unrecognized arguments: <ESC>[31m...``, a newline that
    forges a second ``error:`` line): every control, format and separator
    character of the message is escaped (``log_text``), so it stays one line.
    """
    import argparse

    from boring_dispatch.observe._logtext import log_text

    class _Parser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:
            super().error(log_text(message))

    return _Parser(prog=prog, description=description, epilog=epilog, allow_abbrev=False)


def positive_seconds(text: str) -> float:
    """Parse a positive number of seconds, at most seven days (an argparse ``type``).

    Raises:
        argparse.ArgumentTypeError: ``text`` is not a number, or not in (0, 604800].
    """
    seconds = seconds_or_reason(text)
    if isinstance(seconds, str):
        import argparse

        raise argparse.ArgumentTypeError(seconds)
    return seconds


def seconds_or_reason(text: str) -> float | str:
    """The number of seconds in ``text``, or why it is refused."""
    from boring_dispatch._limits import seconds_problem

    try:
        seconds = float(text)
    except ValueError:
        return "expected a number of seconds"
    return seconds_problem(seconds) or seconds


def report_error(error: DispatchError, error_format: str, stream: TextIO) -> None:
    """Write one error: ``error: <message>`` or the JSON line of schema version 1.

    A table error (``dispatcher names --registry ...``) has no module IDs: its JSON
    line carries ``schema_version``, ``code`` and ``message`` only.
    """
    if error_format != "json":
        stream.write(f"error: {error.message}\n")
    elif isinstance(error, RouteError):
        stream.write(json.dumps(error.to_dict()) + "\n")
    else:
        payload = {"schema_version": 1, "code": error.code, "message": error.message}
        stream.write(json.dumps(payload) + "\n")


def report_file_error(kind: str, error: OSError | FileRefused, error_format: str) -> None:
    """``error: cannot read the <kind> file: <reason>``, or its JSON line (``unreadable_file``).

    ``kind`` is ``golden``, ``trace``, ``fixtures`` or ``token``; the reason is
    the refusal's (``FileRefused``) or the OS error's text, never the path.
    """
    import sys

    from boring_dispatch._files import FileRefused

    reason: str
    if isinstance(error, FileRefused):
        reason, message, line = error.reason, str(error), error.line
    else:
        reason, message, line = "io", error.strerror or type(error).__name__, None
    if error_format != "json":
        sys.stderr.write(f"error: cannot read the {kind} file: {message}\n")
        return
    payload = {
        "schema_version": 1,
        "code": "unreadable_file",
        "message": f"cannot read the {kind} file: {message}",
        "file": kind,
        "reason": reason,
        "line": line,
    }
    sys.stderr.write(json.dumps(payload) + "\n")
