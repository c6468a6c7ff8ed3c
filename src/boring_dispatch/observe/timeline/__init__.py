"""The milestone timeline: a host's session file joined to our spans by trace id.

:func:`build_timeline` reads a Codex rollout or a Claude Code transcript
(:mod:`._codex`, :mod:`._claude`), finds the calls of our MCP server, and
times each one (:mod:`._join` holds the exact definitions) with our spans
(:mod:`._spans`). Renderers: :func:`render_text` (a terminal table) and
:func:`render_html` (one self-contained page with an SVG timeline).
"""

from __future__ import annotations

from boring_dispatch.observe.timeline._events import SessionInvalid
from boring_dispatch.observe.timeline._html import render_html
from boring_dispatch.observe.timeline._join import CallTiming
from boring_dispatch.observe.timeline._load import Timeline, build_timeline, find_session
from boring_dispatch.observe.timeline._text import render_text

__all__ = [
    "CallTiming",
    "SessionInvalid",
    "Timeline",
    "build_timeline",
    "find_session",
    "render_html",
    "render_text",
]
