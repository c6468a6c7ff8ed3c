"""A scripted model for the OpenAI Agents SDK, and a trace processor that keeps every span.

The SDK ships no test model: :class:`ScriptedModel` implements its ``Model``
interface and answers the n-th request with the n-th step of a script (tool
calls or a final text), never touching the network.
"""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Sequence
from typing import Any

from agents import ModelResponse, Usage
from agents.models.interface import Model
from agents.tracing import Span, Trace, TracingProcessor
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

#: One step: tool calls as (call id, name, argument text), or a final text.
Step = Sequence[tuple[str, str, str]] | str


def tool_call(call_id: str, name: str, arguments: str) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        type="function_call", id=f"fc_{call_id}", call_id=call_id, name=name, arguments=arguments
    )


def final_text(text: str) -> ResponseOutputMessage:
    content = ResponseOutputText(type="output_text", text=text, annotations=[])
    return ResponseOutputMessage(
        type="message", id="msg_final", role="assistant", status="completed", content=[content]
    )


class ScriptedModel(Model):
    """Answers request n with ``script[n]`` (then the last step again); records what it saw."""

    def __init__(self, script: Sequence[Step]) -> None:
        self.script = list(script)
        self.requests = 0
        #: Every input the model was sent, as JSON text (the SDK's message history).
        self.inputs: list[str] = []
        #: The tool schemas it was offered.
        self.tools: list[dict[str, Any]] = []

    async def get_response(
        self,
        system_instructions: Any,  # noqa: ARG002 - the interface's parameter
        input: Any,  # noqa: A002 - the interface's name
        *args: Any,
        **kwargs: Any,
    ) -> ModelResponse:
        self.inputs.append(json.dumps(input, default=str))
        tools = args[2] if len(args) > 2 else kwargs.get("tools", [])
        self.tools = [{"name": t.name, "parameters": t.params_json_schema} for t in tools]
        step = self.script[min(self.requests, len(self.script) - 1)]
        self.requests += 1
        output: list[Any] = (
            [final_text(step)] if isinstance(step, str) else [tool_call(*call) for call in step]
        )
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the suites do not stream")


class KeepingProcessor(TracingProcessor):
    """A trace processor that keeps every trace and span it is told about, exported as JSON."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.records: list[str] = []

    def _keep(self, item: Trace | Span[Any]) -> None:
        with self._lock:
            self.records.append(json.dumps(item.export(), default=str))

    def on_trace_start(self, trace: Trace) -> None:
        self._keep(trace)

    def on_trace_end(self, trace: Trace) -> None:
        self._keep(trace)

    def on_span_start(self, span: Span[Any]) -> None:
        self._keep(span)

    def on_span_end(self, span: Span[Any]) -> None:
        self._keep(span)

    def shutdown(self) -> None:
        return None

    def force_flush(self) -> None:
        return None
