"""One MCP call's trace id and OpenTelemetry spans (no SDK import; see ``observe.otel``).

With OpenTelemetry enabled, each ``tools/call`` gets a ``SERVER`` span
(continuing the host's trace from ``params._meta.traceparent``) and, for a
repository's tier tools, an ``execute_tool`` span inside it (a Python table's
pipeline makes its own). The call's trace id, the one our spans, results and
``_meta`` carry, is then the W3C trace id of that span, except while another
call with the same W3C trace id is running in this server: gateways are
found and cancelled by trace id, so two running calls never share one, and
the later call gets a fresh id (recorded on its span as
``boring_dispatch.trace_id``, like every repository call's). Without OpenTelemetry
every call gets a fresh id.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Final

from boring_dispatch.observe.otel import OtelCall, mcp_call_span, tool_span
from boring_dispatch.observe.otel import enabled as otel_enabled
from boring_dispatch.observe.trace import new_trace_id, valid_trace_id
from boring_dispatch.surfaces.mcp._results import ToolOutcome

__all__ = ["CallTrace", "traced_call"]

_RUNNING: Final[set[str]] = set()
_LOCK: Final = threading.Lock()


class CallTrace:
    """The trace id of one call and its spans; :meth:`finish` records how it ended."""

    __slots__ = ("_spans", "trace_id")

    def __init__(self, trace_id: str, spans: tuple[OtelCall, ...]) -> None:
        #: The call's trace id (32 lowercase hex), unique among running calls.
        self.trace_id = trace_id
        self._spans = spans

    def finish(self, outcome: ToolOutcome) -> None:
        """Set ``error.type`` on the spans when the call failed (a code, never text)."""
        if not outcome.is_error:
            return
        error_type = _error_type(outcome.structured)
        for span in self._spans:
            span.fail(error_type)


def _error_type(structured: Mapping[str, object]) -> str:
    result = structured.get("result")
    if not isinstance(result, dict):
        return "_OTHER"
    dispatcher = result.get("dispatcher")
    if isinstance(dispatcher, dict):  # a repository result
        error = dispatcher.get("error")
        if isinstance(error, dict) and isinstance(error.get("code"), str):
            return str(error["code"])
        return "timed_out" if dispatcher.get("timed_out") is True else "exit_nonzero"
    error = result.get("error")  # a table's observation
    if isinstance(error, dict) and isinstance(error.get("code"), str):
        return str(error["code"])
    return "_OTHER"


def _claim(candidate: str | None) -> str:
    with _LOCK:
        if valid_trace_id(candidate) and candidate not in _RUNNING:
            chosen = str(candidate)
        else:
            chosen = new_trace_id()
        _RUNNING.add(chosen)
        return chosen


@contextmanager
def traced_call(
    tool: str | None, request_id: object, meta: Mapping[str, object] | None, *, repository: bool
) -> Iterator[CallTrace]:
    """Open one call's spans and claim its trace id until the block ends.

    ``tool`` is the tool's name when it is one of the server's tools, else
    ``None``; ``request_id`` is the JSON-RPC id; ``meta`` is ``params._meta``.
    """
    if not otel_enabled():
        # No spans to open (the common case): the call gets a fresh id, as a span-less one would.
        trace_id = _claim(None)
        try:
            yield CallTrace(trace_id, ())
        finally:
            with _LOCK:
                _RUNNING.discard(trace_id)
        return
    with mcp_call_span(tool, request_id, meta) as server:
        trace_id = _claim(server.trace_id)
        try:
            if not repository:  # a table call is not traced: its id is used nowhere
                yield CallTrace(trace_id, (server,))
                return
            call_id = None if request_id is None else str(request_id)[:128]
            server.set_attribute("boring_dispatch.trace_id", trace_id)
            with tool_span(tool, call_id) as inner:
                inner.set_attribute("boring_dispatch.trace_id", trace_id)
                yield CallTrace(trace_id, (server, inner))
        finally:
            with _LOCK:
                _RUNNING.discard(trace_id)
