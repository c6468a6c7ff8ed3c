"""OpenTelemetry spans: GenAI ``execute_tool`` spans, the MCP ``tools/call`` span, context.

Each scenario runs in a fresh interpreter (a tracer provider is process-wide
and set once), with the SDK's in-memory exporter, and prints what was
exported as JSON. The real OTLP/HTTP export of a real server is tested in
``tests/surfaces/mcp/test_mcp_otel.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Final

import pytest

from kits.plain_env import plain_environment

pytest.importorskip("opentelemetry.sdk.trace")

REPO: Final = Path(__file__).resolve().parents[2]
CANARY: Final = "canary-argument-7d1f"
HOST_TRACE: Final = "4bf92f3577b34da6a3ce929d0e0e4736"
HOST_SPAN: Final = "00f067aa0ba902b7"

_PRELUDE: Final = """
import json, sys
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)

def dump(extra=None):
    spans = [
        {
            "name": s.name,
            "kind": s.kind.name,
            "trace_id": f"{s.context.trace_id:032x}",
            "span_id": f"{s.context.span_id:016x}",
            "parent": None if s.parent is None else f"{s.parent.span_id:016x}",
            "status": s.status.status_code.name,
            "attributes": dict(s.attributes),
        }
        for s in exporter.get_finished_spans()
    ]
    print(json.dumps({"spans": spans, "extra": extra}))
"""

_TABLE: Final = """
from boring_dispatch import Registry, Tool, ToolError

def echo(text: str) -> dict:
    return {"n": len(text)}

def broken(text: str) -> dict:
    raise ToolError("it broke")

table = Registry(
    {"echo": Tool(echo, description="echo"), "broken": Tool(broken, description="broken")}
)
dispatch = lambda table, name, args: table.dispatch(name, args)
"""


def _python(code: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        cwd=REPO,
        env={**plain_environment(), **(env or {})},
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert isinstance(result, dict)
    return result


ON: Final = {"BORING_DISPATCH_OTEL": "1", "OTEL_TRACES_EXPORTER": "none"}


def _registry_code(calls: str) -> str:
    return _PRELUDE + _TABLE + calls


def test_the_registry_check_is_real() -> None:
    # The table above is what the tests below call: check it builds and answers.
    code = _TABLE + "print(json.dumps(table.dispatch('echo', {'text': 'ab'}).to_dict()))"
    assert _python("import json\n" + code) == {"ok": True, "result": {"n": 2}}


@pytest.mark.parametrize(
    ("name", "args", "span_name", "tool", "error"),
    [
        ("echo", {"text": CANARY}, "execute_tool echo", "echo", None),
        ("broken", {"text": CANARY}, "execute_tool broken", "broken", "tool_error"),
        ("echo", {"text": 3, "x": CANARY}, "execute_tool echo", "echo", "invalid_arguments"),
        (CANARY, {"text": CANARY}, "execute_tool", None, "unknown_tool"),
        (3, {}, "execute_tool", None, "invalid_request"),
    ],
)
def test_a_table_call_is_one_execute_tool_span(
    name: object, args: object, span_name: str, tool: str | None, error: str | None
) -> None:
    code = _registry_code(f"observation = dispatch(table, {name!r}, {args!r})\ndump()\n")
    (span,) = _python(code, ON)["spans"]
    assert span["name"] == span_name
    assert span["kind"] == "INTERNAL"
    attributes = span["attributes"]
    assert attributes["gen_ai.operation.name"] == "execute_tool"
    assert attributes["gen_ai.tool.type"] == "function"
    assert attributes.get("gen_ai.tool.name") == tool
    assert attributes.get("error.type") == error
    assert span["status"] == ("UNSET" if error is None else "ERROR")
    assert CANARY not in json.dumps(span)  # never arguments, never a caller-chosen name


def test_nothing_is_emitted_or_imported_unless_enabled() -> None:
    code = _TABLE + textwrap.dedent(
        """
        dispatch(table, "echo", {"text": "a"})
        print(json.dumps(sorted(m for m in sys.modules if m.startswith("opentelemetry"))))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", "import json, sys\n" + code],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        cwd=REPO,
        env=plain_environment(),
    )
    assert json.loads(done.stdout) == []


def test_enabled_without_opentelemetry_installed_calls_still_work() -> None:
    # sys.modules[name] = None is how Python says "this package cannot be imported".
    code = (
        "import json, sys\nsys.modules['opentelemetry'] = None\n"
        + _TABLE
        + textwrap.dedent(
            """
        observation = dispatch(table, "echo", {"text": "ab"})
        print(json.dumps(observation.to_dict()))
        """
        )
    )
    assert _python(code, ON) == {"ok": True, "result": {"n": 2}}


_MCP_CALL: Final = """
from boring_dispatch.surfaces.mcp._results import ToolOutcome
from boring_dispatch.surfaces.mcp._telemetry import traced_call

def outcome(error):
    dispatcher = {"trace_id": "x"}
    if error:
        dispatcher["error"] = {"code": error, "message": "m"}
    return ToolOutcome({"result": {"dispatcher": dispatcher}}, ("",), bool(error))
"""


def test_the_mcp_call_continues_the_hosts_trace_and_takes_its_trace_id() -> None:
    code = (
        _PRELUDE
        + _MCP_CALL
        + textwrap.dedent(
            f"""
        meta = {{"traceparent": "00-{HOST_TRACE}-{HOST_SPAN}-01", "progressToken": 1}}
        with traced_call("invoke_security_0", 7, meta, repository=True) as traced:
            from boring_dispatch.observe.trace import span
            with span("dispatcher.resolve", traced.trace_id):
                pass
            traced.finish(outcome("dispatcher.access_denied"))
        dump(traced.trace_id)
        """
        )
    )
    result = _python(code, ON)
    assert result["extra"] == HOST_TRACE  # our trace id is the W3C trace id
    by_name = {span["name"]: span for span in result["spans"]}
    server = by_name["tools/call invoke_security_0"]
    tool = by_name["execute_tool invoke_security_0"]
    step = by_name["dispatcher.resolve"]
    assert server["kind"] == "SERVER"
    assert server["trace_id"] == tool["trace_id"] == step["trace_id"] == HOST_TRACE
    assert server["parent"] == HOST_SPAN
    assert tool["parent"] == server["span_id"]
    assert step["parent"] == tool["span_id"]
    assert server["attributes"] == {
        "mcp.method.name": "tools/call",
        "network.transport": "pipe",
        "gen_ai.operation.name": "execute_tool",
        "jsonrpc.request.id": "7",
        "gen_ai.tool.name": "invoke_security_0",
        "boring_dispatch.trace_id": HOST_TRACE,
        "error.type": "dispatcher.access_denied",
    }
    assert tool["attributes"]["gen_ai.tool.call.id"] == "7"
    assert tool["attributes"]["error.type"] == "dispatcher.access_denied"
    assert server["status"] == tool["status"] == "ERROR"


@pytest.mark.parametrize(
    "meta",
    [
        None,
        {},
        {"traceparent": "garbage"},
        {"traceparent": "00-" + "0" * 32 + "-" + HOST_SPAN + "-01"},  # the invalid all-zero id
        {"traceparent": 3},
        {"traceparent": "00-" + HOST_TRACE + "-" + HOST_SPAN + "-01" + "x" * 600},
    ],
)
def test_without_a_valid_traceparent_the_call_starts_a_trace(meta: object) -> None:
    code = (
        _PRELUDE
        + _MCP_CALL
        + textwrap.dedent(
            f"""
        with traced_call(None, "r-1", {meta!r}, repository=False) as traced:
            traced.finish(outcome(None))
        dump(traced.trace_id)
        """
        )
    )
    result = _python(code, ON)
    (server,) = result["spans"]
    assert server["name"] == "tools/call"  # an unknown tool is never named
    assert "gen_ai.tool.name" not in server["attributes"]
    assert server["parent"] is None
    assert server["trace_id"] == result["extra"] != HOST_TRACE
    assert server["status"] == "UNSET"


def test_two_running_calls_of_one_host_trace_never_share_a_trace_id() -> None:
    code = (
        _PRELUDE
        + _MCP_CALL
        + textwrap.dedent(
            f"""
        meta = {{"traceparent": "00-{HOST_TRACE}-{HOST_SPAN}-01"}}
        with traced_call("invoke_security_0", 1, meta, repository=True) as first:
            with traced_call("invoke_security_0", 2, meta, repository=True) as second:
                ids = [first.trace_id, second.trace_id]
        with traced_call("invoke_security_0", 3, meta, repository=True) as third:
            ids.append(third.trace_id)
        dump(ids)
        """
        )
    )
    result = _python(code, ON)
    first, second, third = result["extra"]
    assert first == third == HOST_TRACE  # the id is free again once the first call ended
    assert second != HOST_TRACE
    assert len(second) == 32
    servers = [s for s in result["spans"] if s["kind"] == "SERVER"]
    assert {s["trace_id"] for s in servers} == {HOST_TRACE}  # all in the host's trace
    assert sorted(s["attributes"]["boring_dispatch.trace_id"] for s in servers) == sorted(
        [first, second, third]
    )


def test_otel_env_decides_the_exporter(tmp_path: Path) -> None:
    """Without a provider set, ``OTEL_TRACES_EXPORTER=console`` prints the spans."""
    code = _TABLE + 'dispatch(table, "echo", {"text": "a"})\nprint(json.dumps({}))\n'
    done = subprocess.run(
        [sys.executable, "-c", "import json\n" + code],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        cwd=REPO,
        env={
            **plain_environment(),
            "BORING_DISPATCH_OTEL": "1",
            "OTEL_TRACES_EXPORTER": "console",
            "OTEL_SERVICE_NAME": "my-dispatch",
        },
    )
    assert '"name": "execute_tool echo"' in done.stdout
    assert '"service.name": "my-dispatch"' in done.stdout
    disabled = subprocess.run(
        [sys.executable, "-c", "import json\n" + code],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        cwd=REPO,
        env={
            **plain_environment(),
            "BORING_DISPATCH_OTEL": "1",
            "OTEL_TRACES_EXPORTER": "console",
            "OTEL_SDK_DISABLED": "true",
        },
    )
    assert "execute_tool" not in disabled.stdout


def test_an_exception_through_a_span_records_its_class_never_its_text() -> None:
    code = _PRELUDE + textwrap.dedent(
        f"""
        from boring_dispatch.observe.otel import mcp_call_span, tool_span
        for opener in (lambda: tool_span("echo"), lambda: mcp_call_span("echo", 1, None)):
            try:
                with opener():
                    raise ValueError({CANARY!r})
            except ValueError:
                pass
        dump()
        """
    )
    spans = _python(code, ON)["spans"]
    assert [span["attributes"]["error.type"] for span in spans] == ["ValueError", "ValueError"]
    assert all(span["status"] == "ERROR" for span in spans)
    assert CANARY not in json.dumps(spans)
