"""OpenTelemetry spans by the GenAI and MCP semantic conventions (optional, off by default).

Enabled by ``BORING_DISPATCH_OTEL=1`` with the ``opentelemetry`` API
importable (``pip install 'boring-dispatch[otel]'``); otherwise every helper
here is a no-op and nothing of OpenTelemetry is imported.

Spans:

- ``tools/call {tool}`` (kind ``SERVER``): one MCP ``tools/call`` request,
  with ``mcp.method.name``, ``jsonrpc.request.id``, ``network.transport``
  (``pipe``: stdio), ``gen_ai.operation.name`` (``execute_tool``) and
  ``gen_ai.tool.name``. A W3C ``traceparent`` (and ``tracestate``) in the
  request's ``params._meta`` makes it a child of the host's span;
- ``execute_tool {tool}`` (kind ``INTERNAL``): one tool call, with
  ``gen_ai.operation.name``, ``gen_ai.tool.name``, ``gen_ai.tool.call.id``
  (when the call has an id) and ``gen_ai.tool.type`` (``function``);
- both get ``error.type`` (a stable code of ours: ``tool_error``,
  ``dispatcher.access_denied``, ``exit_nonzero``...) and an error status when
  the call fails. The dispatcher's own steps (``observe.trace`` spans) are
  emitted as their children.

A tool name is attached only when the caller has established it is one of
the table's tools (never a caller-chosen string), and arguments, results,
process output and exception text are never attached.

Export follows the standard ``OTEL_*`` variables. When the process has no
tracer provider yet (no ``opentelemetry-instrument``) and the SDK is
installed, one is set up: ``OTEL_SDK_DISABLED``, ``OTEL_SERVICE_NAME`` /
``OTEL_RESOURCE_ATTRIBUTES`` (default service name ``boring-dispatch``),
``OTEL_TRACES_EXPORTER`` (``otlp``, the default, over OTLP/HTTP with the
``OTEL_EXPORTER_OTLP_*`` settings; ``console``; ``none``) and the batch
processor's ``OTEL_BSP_*``. With the API alone, spans go to whatever provider
the operator installed.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.trace import Span, Tracer

__all__ = ["ENABLE_ENV", "OtelCall", "enabled", "mcp_call_span", "tool_span"]

#: Set to ``1`` to emit OpenTelemetry spans (the API must be importable).
ENABLE_ENV: Final = "BORING_DISPATCH_OTEL"
_INSTRUMENTATION: Final = "boring_dispatch"
_SETUP_LOCK: Final = threading.Lock()
_SETUP_DONE: list[bool] = []


def enabled() -> bool:
    """Whether spans are emitted: ``BORING_DISPATCH_OTEL=1`` and the API importable."""
    if os.environ.get(ENABLE_ENV) != "1":
        return False
    try:
        import opentelemetry.trace  # noqa: F401 - optional, imported only when enabled
    except ImportError:
        return False
    return True


class OtelCall:
    """The handle of one call's span: its W3C trace id, and how it ended."""

    __slots__ = ("_span", "trace_id")

    def __init__(self, span: Span | None = None) -> None:
        self._span = span
        #: The span's W3C trace id (32 lowercase hex), or ``None`` when not emitting.
        self.trace_id: str | None = None
        if span is not None:
            context = span.get_span_context()
            if context.is_valid:
                self.trace_id = f"{context.trace_id:032x}"

    def set_attribute(self, key: str, value: str) -> None:
        """Attach one attribute (an identifier of ours, never caller text)."""
        if self._span is not None:
            self._span.set_attribute(key, value)

    def fail(self, error_type: str) -> None:
        """Mark the call failed with ``error.type`` set to a stable code of ours."""
        if self._span is None:
            return
        from opentelemetry.trace import Status, StatusCode

        self._span.set_attribute("error.type", error_type)
        self._span.set_status(Status(StatusCode.ERROR))


def _tracer() -> Tracer:
    from opentelemetry import trace

    _set_up_provider()
    return trace.get_tracer(_INSTRUMENTATION)


def _set_up_provider() -> None:
    """Install an SDK tracer provider from the ``OTEL_*`` variables, once, if none is set."""
    with _SETUP_LOCK:
        if _SETUP_DONE:
            return
        _SETUP_DONE.append(True)
        from opentelemetry import trace

        if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
            return  # the operator (or opentelemetry-instrument) installed one
        if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
            return
        try:
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor
        except ImportError:
            return  # the API alone: spans go nowhere until a provider is installed
        attributes = (
            {} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": "boring-dispatch"}
        )
        provider = TracerProvider(resource=Resource.create(attributes))
        for exporter in _exporters():
            provider.add_span_processor(BatchSpanProcessor(exporter))
        trace.set_tracer_provider(provider)


def _exporters() -> list[Any]:
    names = os.environ.get("OTEL_TRACES_EXPORTER", "otlp").lower().split(",")
    found: list[Any] = []
    for name in (n.strip() for n in names):
        if name == "otlp":
            try:
                from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
                    OTLPSpanExporter,
                )
            except ImportError:
                continue
            found.append(OTLPSpanExporter())
        elif name == "console":
            from opentelemetry.sdk.trace.export import ConsoleSpanExporter

            found.append(ConsoleSpanExporter())
    return found


def _ended(call: OtelCall) -> Iterator[OtelCall]:
    """Yield ``call``; an exception through it sets ``error.type`` to its class name only.

    The SDK's own handling would record the exception's text, which may hold
    values; the class name is chosen by code (a cancellation, a bug).
    """
    try:
        yield call
    except BaseException as error:
        call.fail(type(error).__name__)
        raise


def _host_context(meta: Mapping[str, object] | None) -> Context | None:
    """The host's trace context from ``params._meta`` (W3C ``traceparent``), or ``None``."""
    if not meta:
        return None
    carrier = {
        key: str(meta[key])
        for key in ("traceparent", "tracestate")
        if isinstance(meta.get(key), str) and len(str(meta[key])) <= 512
    }
    if "traceparent" not in carrier:
        return None
    from opentelemetry.trace import get_current_span
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    context = TraceContextTextMapPropagator().extract(carrier)
    return context if get_current_span(context).get_span_context().is_valid else None


@contextmanager
def mcp_call_span(
    tool: str | None, request_id: object, meta: Mapping[str, object] | None
) -> Iterator[OtelCall]:
    """The ``SERVER`` span of one ``tools/call`` (a no-op handle when not enabled).

    ``tool`` is the tool's name when it is one of the server's tools, else
    ``None`` (the span is then named ``tools/call``).
    """
    if not enabled():
        yield OtelCall()
        return
    from opentelemetry.trace import SpanKind

    attributes: dict[str, str] = {
        "mcp.method.name": "tools/call",
        "network.transport": "pipe",
        "gen_ai.operation.name": "execute_tool",
    }
    if isinstance(request_id, str | int) and not isinstance(request_id, bool):
        attributes["jsonrpc.request.id"] = str(request_id)[:128]
    if tool is not None:
        attributes["gen_ai.tool.name"] = tool
    name = "tools/call" if tool is None else f"tools/call {tool}"
    with _tracer().start_as_current_span(
        name,
        kind=SpanKind.SERVER,
        context=_host_context(meta),
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        yield from _ended(OtelCall(span))


@contextmanager
def tool_span(tool: str | None, call_id: str | None = None) -> Iterator[OtelCall]:
    """The ``INTERNAL`` ``execute_tool`` span of one tool call (a no-op when not enabled).

    ``tool`` is set only for a name the table knows; ``call_id`` is the
    call's identifier when it has one.
    """
    if not enabled():
        yield OtelCall()
        return
    from opentelemetry.trace import SpanKind

    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.type": "function"}
    if tool is not None:
        attributes["gen_ai.tool.name"] = tool
    if call_id is not None:
        attributes["gen_ai.tool.call.id"] = call_id
    name = "execute_tool" if tool is None else f"execute_tool {tool}"
    with _tracer().start_as_current_span(
        name,
        kind=SpanKind.INTERNAL,
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        yield from _ended(OtelCall(span))
