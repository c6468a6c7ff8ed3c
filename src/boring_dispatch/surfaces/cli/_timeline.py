"""``dispatcher timeline SESSION``: a host session's calls of our server, timed and joined to spans.

SESSION is a Codex rollout, a Claude Code transcript, or a directory holding
such files (then the newest). ``--logs`` is the logs directory (default
``$ASSISTANT_LOGS``, as the spans are written: the span files are in its
``dispatch/`` directory; a directory that itself holds ``spans-*.jsonl``
files is taken as it is).

Exit status: 0 when at least one call was joined to its spans; 1 when the
session has calls of our server but none could be joined (no spans, no logs
directory: the timeline is still printed, with null dispatcher figures), or
no call of our server at all; 2 for a session file that cannot be read
(the message says why; never a traceback).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from boring_dispatch.surfaces.cli._common import argument_parser

__all__ = ["run"]


def _slow(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("expected a number of milliseconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError("expected a positive number of milliseconds")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argument_parser(
        prog="dispatcher timeline",
        description="Time every call of our MCP server in a Codex or Claude Code session.",
    )
    parser.add_argument("session", metavar="SESSION", help="a session file or a directory")
    parser.add_argument("--logs", metavar="DIR", help="logs directory (default $ASSISTANT_LOGS)")
    parser.add_argument("--format", choices=("text", "json", "html"), default="text")
    parser.add_argument("--out", metavar="FILE", help="write here instead of stdout")
    parser.add_argument(
        "--slow", type=_slow, default=1000.0, metavar="MS", help="mark stretches this long"
    )
    parser.add_argument(
        "--server",
        action="append",
        default=[],
        metavar="NAME",
        help="also count this MCP server (as the host names it) as ours (repeatable)",
    )
    return parser


def _dispatch_dir(logs: str | None) -> Path:
    from boring_dispatch.observe.trace import spans_path

    if logs is None:
        return spans_path().parent
    base = Path(logs)
    try:
        holds_spans = any(base.glob("spans-*.jsonl"))
    except OSError:  # a name too long: no spans here, and none below (the timeline notes it)
        holds_spans = False
    return base if holds_spans else base / "dispatch"


def run(argv: Sequence[str]) -> int:
    """Run ``dispatcher timeline`` and return its exit status."""
    from boring_dispatch.observe.timeline import (
        SessionInvalid,
        build_timeline,
        render_html,
        render_text,
    )

    options = _parser().parse_args(list(argv))
    try:
        timeline = build_timeline(
            Path(options.session), _dispatch_dir(options.logs), servers=options.server
        )
    except SessionInvalid as error:
        sys.stderr.write(f"error: {error}\n")
        return 2
    if options.format == "json":
        text = json.dumps(timeline.to_dict(), indent=2) + "\n"
    elif options.format == "html":
        text = render_html(timeline, options.slow)
    else:
        text = render_text(timeline, options.slow)
    if options.out is None:
        sys.stdout.write(text)
    else:
        problem = _write_out(options.out, text.encode("utf-8"))
        if problem is not None:
            sys.stderr.write(f"error: cannot write the output file: {problem}\n")
            return 2
    if not timeline.calls:
        sys.stderr.write("error: the session has no call of a boring-dispatch MCP server\n")
        return 1
    if timeline.joined == 0:
        sys.stderr.write(
            "error: no call of the session could be joined to the dispatcher's spans\n"
        )
        return 1
    return 0


def _write_out(path: str, data: bytes) -> str | None:
    """Replace the file at ``path`` with ``data``; why it could not be, or ``None``.

    ``--out`` is often a predictable name (``/tmp/timeline.html``), written as
    root: it is opened by the dispatcher's safe appender (no symlink at its
    place, a regular file of ours with one link, never blocking on a FIFO;
    created 0o600), then emptied and written.
    """
    from boring_dispatch._files import FileRefused, open_append

    try:
        fd = open_append(path)
    except FileRefused as error:
        return str(error)
    except OSError as error:
        return error.strerror or type(error).__name__
    try:
        os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except OSError as error:
        return error.strerror or type(error).__name__
    finally:
        os.close(fd)
    return None
