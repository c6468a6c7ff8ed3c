"""The OpenAI Agents SDK adapter, driven by a scripted Model (no network, traces kept locally)."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from agents import Agent, RunConfig, Runner
from agents.tracing import set_trace_processors
from hypothesis import given, settings
from hypothesis import strategies as st

from boring_dispatch import Registry
from boring_dispatch.adapters.openai_agents import function_tools
from kits.agents_sdk import KeepingProcessor, ScriptedModel, Step
from kits.billing import CANARY, billing_table

# Tool inputs and outputs are put in the spans: the worst case for a secret.
CONFIG = RunConfig(trace_include_sensitive_data=True, workflow_name="billing-test")


@pytest.fixture
def traces() -> Iterator[KeepingProcessor]:
    keeping = KeepingProcessor()
    set_trace_processors([keeping])  # replaces the exporter: nothing leaves the process
    yield keeping
    set_trace_processors([])


class Secret:
    """The run's context object: the SDK hands it to tools and never to the model."""

    def __init__(self, token: str) -> None:
        self.token = token


def agent_for(table: Registry, script: Sequence[Step]) -> tuple[Agent[Secret], ScriptedModel]:
    model = ScriptedModel(script)
    tools = function_tools(table, context=lambda ctx: {"api_token": ctx.context.token})
    return Agent[Secret](name="billing", model=model, tools=list(tools)), model


def run(agent: Agent[Secret], start: Any) -> Any:
    return asyncio.run(Runner.run(agent, start, context=Secret(CANARY), run_config=CONFIG))


def outputs(result: Any) -> dict[str, str]:
    """Call id -> the text the model was given back, from the SDK's own history."""
    return {
        item["call_id"]: item["output"]
        for item in result.to_input_list()
        if item.get("type") == "function_call_output"
    }


def assert_no_canary(result: Any, model: ScriptedModel, traces: KeepingProcessor) -> None:
    assert traces.records  # the traces were captured
    assert CANARY not in json.dumps(result.to_input_list(), default=str)
    assert CANARY not in "".join(model.inputs)
    assert CANARY not in "".join(traces.records)


def test_a_known_call_succeeds_and_the_secret_is_nowhere(traces: KeepingProcessor) -> None:
    calls: Counter[str] = Counter()
    agent, model = agent_for(
        billing_table(calls), [[("c1", "get_invoice", '{"invoice_id": 7}')], "ok"]
    )
    result = run(agent, "look")
    assert result.final_output == "ok"
    assert json.loads(outputs(result)["c1"]) == {
        "invoice_id": 7,
        "amount": 42,
        "token_length": len(CANARY),
    }
    assert calls == Counter({"get_invoice": 1})
    assert any("get_invoice" in record for record in traces.records)
    assert_no_canary(result, model, traces)


def test_the_offered_schemas_have_no_injected_parameter(traces: KeepingProcessor) -> None:
    agent, model = agent_for(billing_table(Counter()), ["ok"])
    run(agent, "list")
    assert [tool["name"] for tool in model.tools] == ["fail", "get_invoice", "refund"]
    assert "api_token" not in json.dumps(model.tools)


@given(
    args=st.sampled_from(
        [
            '{"invoice_id": "7"}',
            '{"invoice_id": 7, "invoice_id": 8}',
            '{"invoice_id": NaN}',
            '{"invoice_id": 1e400}',
            "",
            "[1]",
            '{"invoice_id": 7, "api_token": "from-the-model"}',
        ]
    )
)
@settings(max_examples=14)
def test_bad_argument_text_reaches_the_model_as_a_retry_text(args: str) -> None:
    set_trace_processors([])
    calls: Counter[str] = Counter()
    agent, model = agent_for(billing_table(calls), [[("c1", "get_invoice", args)], "ok"])
    result = run(agent, "look")
    text = outputs(result)["c1"]
    assert text.startswith(("error invalid_arguments", "error invalid_request"))
    assert text.endswith("Correct the arguments and call the tool again.")
    assert calls == Counter()
    assert CANARY not in "".join(model.inputs)


def test_a_final_error_is_withheld_whole(traces: KeepingProcessor) -> None:
    calls: Counter[str] = Counter()
    agent, model = agent_for(billing_table(calls), [[("c1", "fail", '{"reason": "no"}')], "ok"])
    result = run(agent, "fail")
    assert outputs(result)["c1"].startswith("error tool_error: the tool failed; its message was")
    assert calls == Counter({"fail": 1})
    assert_no_canary(result, model, traces)


def test_an_unknown_name_never_runs(traces: KeepingProcessor) -> None:
    calls: Counter[str] = Counter()
    agent, _ = agent_for(billing_table(calls), [[("c1", "os_system", '{"cmd": "id"}')], "ok"])
    with pytest.raises(Exception, match="os_system"):
        run(agent, "x")
    assert calls == Counter()


def test_a_confirm_tool_waits_for_approval_and_runs_once(traces: KeepingProcessor) -> None:
    calls: Counter[str] = Counter()
    agent, model = agent_for(
        billing_table(calls),
        [
            [("c1", "get_invoice", '{"invoice_id": 7}'), ("c2", "refund", '{"invoice_id": 7}')],
            "refunded",
        ],
    )
    first = run(agent, "refund 7")
    assert [item.raw_item.call_id for item in first.interruptions] == ["c2"]
    assert calls == Counter({"get_invoice": 1})
    state = first.to_state()
    state.approve(first.interruptions[0])
    second = run(agent, state)
    assert second.final_output == "refunded"
    assert json.loads(outputs(second)["c2"]) == {"refunded": 7}
    assert calls == Counter({"get_invoice": 1, "refund": 1})  # no sibling ran twice
    assert_no_canary(second, model, traces)


def test_a_rejected_call_never_runs(traces: KeepingProcessor) -> None:
    calls: Counter[str] = Counter()
    agent, _ = agent_for(billing_table(calls), [[("c1", "refund", '{"invoice_id": 7}')], "no"])
    first = run(agent, "refund 7")
    state = first.to_state()
    state.reject(first.interruptions[0])
    second = run(agent, state)
    assert second.final_output == "no"
    assert calls == Counter()


def test_the_paused_state_holds_no_secret_when_the_context_is_not_serializable(
    traces: KeepingProcessor,
) -> None:
    # A run paused for approval is stored as JSON; the token lives in the context object.
    agent, _ = agent_for(billing_table(Counter()), [[("c1", "refund", '{"invoice_id": 7}')], "x"])
    first = run(agent, "refund 7")
    assert CANARY not in first.to_state().to_string()
