"""The Pydantic AI adapter, driven by Pydantic AI's own FunctionModel and TestModel (no network)."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults
from pydantic_ai.capabilities.instrumentation import Instrumentation
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    ModelResponsePart,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.models.test import TestModel

from boring_dispatch import Registry
from boring_dispatch.adapters.pydantic_ai import RegistryToolset
from boring_dispatch.testing import CapturingSink
from kits.billing import CANARY, billing_table

Script = Sequence[Sequence[ModelResponsePart]]


def scripted(script: Script) -> FunctionModel:
    """A model that answers the n-th request with the n-th step of ``script`` (then the last)."""

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        step = sum(1 for message in messages if message.kind == "response")
        return ModelResponse(parts=list(script[min(step, len(script) - 1)]))

    return FunctionModel(answer)


def agent_for(table: Registry, script: Script, spans: InMemorySpanExporter | None = None) -> Agent:
    provider = TracerProvider()
    if spans is not None:
        provider.add_span_processor(SimpleSpanProcessor(spans))
    return Agent(
        scripted(script),
        toolsets=[RegistryToolset(table, context=lambda ctx: {"api_token": ctx.deps})],
        deps_type=str,
        output_type=[str, DeferredToolRequests],
        capabilities=[
            Instrumentation(
                settings=InstrumentationSettings(tracer_provider=provider, include_content=True)
            )
        ],
    )


def run(agent: Agent[Any, Any], *args: Any, **kwargs: Any) -> Any:
    """``agent.run`` in a fresh event loop that is closed afterwards (``run_sync`` keeps one)."""
    return asyncio.run(agent.run(*args, **kwargs))


def call(name: str, args: str, call_id: str) -> ToolCallPart:
    return ToolCallPart(name, args, tool_call_id=call_id)


def returned(messages: list[ModelMessage]) -> dict[str, object]:
    """Tool call id -> the content the model was given back."""
    found: dict[str, object] = {}
    for message in messages:
        for part in message.parts:
            if part.part_kind in ("tool-return", "retry-prompt"):
                found[part.tool_call_id] = part.content
    return found


def everything_recorded(messages_json: bytes, spans: InMemorySpanExporter) -> str:
    recorded = [messages_json.decode()]
    for span in spans.get_finished_spans():
        recorded.append(json.dumps(dict(span.attributes or {}), default=str))
        recorded.extend(
            json.dumps(dict(event.attributes or {}), default=str) for event in span.events
        )
    return "\n".join(recorded)


def test_a_known_call_succeeds_and_the_injected_secret_is_nowhere() -> None:
    calls: Counter[str] = Counter()
    spans = InMemorySpanExporter()
    agent = agent_for(
        billing_table(calls),
        [[call("get_invoice", '{"invoice_id": 7}', "c1")], [TextPart("ok")]],
        spans,
    )
    result = run(agent, "look", deps=CANARY)
    assert result.output == "ok"
    assert returned(result.all_messages())["c1"] == {
        "invoice_id": 7,
        "amount": 42,
        "token_length": len(CANARY),
    }
    assert calls == Counter({"get_invoice": 1})
    recorded = everything_recorded(result.all_messages_json(), spans)
    traced = [span.name for span in spans.get_finished_spans()]
    assert any("get_invoice" in name for name in traced)  # the tool's span was captured
    assert str(len(CANARY)) in recorded  # and so was its result, content included
    assert CANARY not in recorded


def test_the_published_schema_has_no_injected_parameter() -> None:
    seen: list[dict[str, object]] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.extend(tool.parameters_json_schema for tool in info.function_tools)
        return ModelResponse(parts=[TextPart("ok")])

    agent = Agent(FunctionModel(answer), toolsets=[RegistryToolset(billing_table(Counter()))])
    run(agent, "list")
    assert len(seen) == 3
    assert "api_token" not in json.dumps(seen)


@given(
    args=st.sampled_from(
        [
            '{"invoice_id": "7"}',
            '{"invoice_id": 7.0}',
            '{"invoice_id": true}',
            '{"invoice_id": 7, "invoice_id": 8}',
            '{"invoice_id": NaN}',
            '{"invoice_id": 1e400}',
            "[1]",
            '{"invoice_id": 7, "extra": 1}',
            '{"invoice_id": 7, "api_token": "from-the-model"}',
        ]
    )
)
@settings(max_examples=20)
def test_bad_arguments_reach_the_model_as_a_retry_prompt(args: str) -> None:
    calls: Counter[str] = Counter()
    agent = agent_for(billing_table(calls), [[call("get_invoice", args, "c1")], [TextPart("ok")]])
    result = run(agent, "look", deps=CANARY)
    prompt = returned(result.all_messages())["c1"]
    assert isinstance(prompt, str)
    assert prompt.startswith(("error invalid_arguments", "error invalid_request"))
    assert "Correct the arguments" in prompt
    assert calls == Counter()
    assert CANARY not in result.all_messages_json().decode()


def test_a_final_error_reaches_the_model_as_a_failure_text_withheld_whole() -> None:
    calls: Counter[str] = Counter()
    spans = InMemorySpanExporter()
    agent = agent_for(
        billing_table(calls), [[call("fail", '{"reason": "no"}', "c1")], [TextPart("ok")]], spans
    )
    result = run(agent, "fail", deps=CANARY)
    text = returned(result.all_messages())["c1"]
    assert isinstance(text, str)
    assert text.startswith("error tool_error: the tool failed; its message was withheld")
    assert text.endswith("Do not call the tool again with other arguments for this.")
    assert calls == Counter({"fail": 1})
    assert CANARY not in everything_recorded(result.all_messages_json(), spans)


def test_an_unknown_name_never_runs() -> None:
    calls: Counter[str] = Counter()
    agent = agent_for(
        billing_table(calls), [[call("os.system", '{"cmd": "id"}', "c1")], [TextPart("ok")]]
    )
    result = run(agent, "x", deps=CANARY)
    assert "os.system" in str(returned(result.all_messages())["c1"])
    assert calls == Counter()


def test_a_confirm_tool_waits_for_approval_and_runs_once_with_no_sibling_repeated() -> None:
    calls: Counter[str] = Counter()
    spans = InMemorySpanExporter()
    agent = agent_for(
        billing_table(calls),
        [
            [
                call("get_invoice", '{"invoice_id": 7}', "c1"),
                call("refund", '{"invoice_id": 7}', "c2"),
            ],
            [TextPart("refunded")],
        ],
        spans,
    )
    first = run(agent, "refund 7", deps=CANARY)
    assert isinstance(first.output, DeferredToolRequests)
    assert [part.tool_call_id for part in first.output.approvals] == ["c2"]
    assert calls == Counter({"get_invoice": 1})
    second = run(
        agent,
        message_history=first.all_messages(),
        deps=CANARY,
        deferred_tool_results=DeferredToolResults(approvals={"c2": True}),
    )
    assert second.output == "refunded"
    assert returned(second.all_messages())["c2"] == {"refunded": 7}
    assert calls == Counter({"get_invoice": 1, "refund": 1})
    assert CANARY not in everything_recorded(second.all_messages_json(), spans)


def test_a_denied_approval_never_runs_the_tool() -> None:
    calls: Counter[str] = Counter()
    agent = agent_for(
        billing_table(calls), [[call("refund", '{"invoice_id": 7}', "c1")], [TextPart("no")]]
    )
    first = run(agent, "refund 7", deps=CANARY)
    second = run(
        agent,
        message_history=first.all_messages(),
        deps=CANARY,
        deferred_tool_results=DeferredToolResults(approvals={"c1": False}),
    )
    assert second.output == "no"
    assert calls == Counter()


def test_test_model_calls_every_tool_through_the_table() -> None:
    # TestModel writes arguments from the published schema: no api_token, so the table
    # gets it from the context only.
    calls: Counter[str] = Counter()
    table = billing_table(calls).restrict(["get_invoice"])
    agent = Agent(TestModel(), toolsets=[RegistryToolset(table, context={"api_token": CANARY})])
    result = run(agent, "go")
    assert calls == Counter({"get_invoice": 1})
    assert CANARY not in result.all_messages_json().decode()


@given(secret=st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=6))
@settings(max_examples=25)
def test_any_injected_secret_stays_out_of_history_traces_and_audit(secret: str) -> None:
    secret = "S3CR3T-" + secret  # never text the run writes on its own
    calls: Counter[str] = Counter()
    sink = CapturingSink()
    table = Registry(dict(billing_table(calls).tools), name="billing", sinks=[sink])
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    script: Script = [
        [call("get_invoice", '{"invoice_id": 7}', "c1"), call("fail", '{"reason": "r"}', "c2")],
        [TextPart("ok")],
    ]
    agent = Agent(
        scripted(script),
        toolsets=[RegistryToolset(table, context={"api_token": secret})],
        capabilities=[
            Instrumentation(
                settings=InstrumentationSettings(tracer_provider=provider, include_content=True)
            )
        ],
    )
    result = run(agent, "go")
    assert calls == Counter({"get_invoice": 1, "fail": 1})
    assert secret not in everything_recorded(result.all_messages_json(), spans)
    assert sorted(sink.outcomes()) == ["ok", "tool_error"]
    assert all(event.args is not None for event in sink.events)
    assert all(event.args["api_token"] == "[redacted]" for event in sink.events if event.args)
