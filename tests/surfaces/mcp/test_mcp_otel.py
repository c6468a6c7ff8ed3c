"""A real ``dispatcher mcp`` exporting OpenTelemetry spans over OTLP/HTTP to a real receiver.

The receiver is an HTTP server this test starts on 127.0.0.1 (a free port);
the server under test finds it through the standard ``OTEL_EXPORTER_OTLP_*``
variables, and its spans are decoded with the OTLP protobuf definitions.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Final

import pytest

from kits.mcp import McpServer, projection, write_tools_repository

pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
trace_service = pytest.importorskip("opentelemetry.proto.collector.trace.v1.trace_service_pb2")

HOST_TRACE: Final = "4bf92f3577b34da6a3ce929d0e0e4736"
HOST_SPAN: Final = "00f067aa0ba902b7"
CANARY: Final = "canary-value-5e2b"


class _Receiver(BaseHTTPRequestHandler):
    bodies: list[bytes]
    arrived: threading.Event

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        if self.path == "/v1/traces":
            type(self).bodies.append(body)
            type(self).arrived.set()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *_args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[tuple[str, type[_Receiver]]]:
    handler = type("Receiver", (_Receiver,), {"bodies": [], "arrived": threading.Event()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _spans(bodies: list[bytes]) -> list[dict[str, Any]]:
    spans = []
    for body in bodies:
        request = trace_service.ExportTraceServiceRequest()
        request.ParseFromString(body)
        for resource in request.resource_spans:
            for scope in resource.scope_spans:
                for span in scope.spans:
                    attributes = {
                        a.key: a.value.string_value or a.value.int_value for a in span.attributes
                    }
                    spans.append(
                        {
                            "name": span.name,
                            "kind": span.kind,
                            "trace_id": span.trace_id.hex(),
                            "span_id": span.span_id.hex(),
                            "parent": span.parent_span_id.hex(),
                            "attributes": attributes,
                            "error": span.status.code == 2,
                        }
                    )
    return spans


def test_a_real_server_exports_its_spans_over_otlp_http(
    tmp_path: Path, receiver: tuple[str, type[_Receiver]]
) -> None:
    endpoint, handler = receiver
    config = write_tools_repository(tmp_path / "repo")
    env = {
        "ASSISTANT_LOGS": str(tmp_path / "logs"),
        "BORING_DISPATCH_OTEL": "1",
        "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_SERVICE_NAME": "dispatch-under-test",
    }
    meta = {"traceparent": f"00-{HOST_TRACE}-{HOST_SPAN}-01"}
    errlog_path = tmp_path / "server.log"
    with (
        errlog_path.open("w+", encoding="utf-8") as errlog,
        McpServer(
            ["mcp", "--config", str(config)], env=env, cwd=config.parent, errlog=errlog
        ) as server,
    ):
        ran = server.call_wire("invoke_security_0", projection("echo", positionals=[CANARY]), meta)
        refused = server.call_wire("invoke_security_0", projection("private"), meta)
        fresh = server.call_wire("invoke_security_0", projection("streams-machine"))
    # The server has exited: its provider flushed at exit, before the session closed.
    assert handler.arrived.wait(timeout=30), errlog_path.read_text(encoding="utf-8")
    body = b"".join(handler.bodies)
    assert CANARY.encode() not in body  # arguments and output are never exported
    spans = _spans(handler.bodies)
    # Our trace id is the host's W3C trace id when it sent one.
    trace_key = "dev.boring-dispatch/trace_id"
    assert ran["_meta"][trace_key] == HOST_TRACE
    assert refused["_meta"][trace_key] == HOST_TRACE
    assert fresh["_meta"][trace_key] != HOST_TRACE
    servers = [s for s in spans if s["name"] == "tools/call invoke_security_0"]
    assert len(servers) == 3
    continued = [s for s in servers if s["trace_id"] == HOST_TRACE]
    assert len(continued) == 2
    assert all(s["parent"] == HOST_SPAN for s in continued)
    (own,) = [s for s in servers if s["trace_id"] != HOST_TRACE]
    assert own["trace_id"] == fresh["_meta"][trace_key]
    assert own["parent"] == ""
    for span in servers:
        assert span["kind"] == 2  # SERVER
        assert span["attributes"]["mcp.method.name"] == "tools/call"
        assert span["attributes"]["network.transport"] == "pipe"
        assert span["attributes"]["gen_ai.tool.name"] == "invoke_security_0"
        assert span["attributes"]["jsonrpc.request.id"]
    errors = {s["attributes"].get("error.type") for s in servers}
    assert errors == {None, "dispatcher.unauthorized_caller"}
    tools = [s for s in spans if s["name"] == "execute_tool invoke_security_0"]
    assert {s["parent"] for s in tools} == {s["span_id"] for s in servers}
    # Our own steps are children in the same trace.
    steps = {s["name"] for s in spans if s["trace_id"] == HOST_TRACE}
    assert {"dispatcher.resolve", "dispatcher.process", "mcp.tool_call"} <= steps
