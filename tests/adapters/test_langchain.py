"""The LangChain adapter and the LangGraph approval gate, driven by LangChain's fake chat model."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.runtime import get_runtime
from langgraph.types import Command

from boring_dispatch import Registry
from boring_dispatch.adapters.langchain import ApprovalGate, structured_tools
from kits.billing import CANARY, billing_table


@dataclass
class Secrets:
    """LangGraph's runtime context: given to nodes and tools, never checkpointed."""

    token: str


def from_runtime(config: RunnableConfig) -> dict[str, object]:
    return {"api_token": get_runtime(Secrets).context.token}


class Keeping(BaseCallbackHandler):
    """A callback handler that keeps a text of every event it is told about."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def __getattribute__(self, name: str) -> Any:
        if name.startswith("on_"):

            def keep(*args: Any, **kwargs: Any) -> None:
                object.__getattribute__(self, "seen").append(repr((name, args, kwargs)))

            return keep
        return object.__getattribute__(self, name)


@dataclass
class Run:
    app: Any
    saver: InMemorySaver
    callbacks: Keeping

    def invoke(self, start: object) -> dict[str, Any]:
        config: RunnableConfig = {"configurable": {"thread_id": "t"}, "callbacks": [self.callbacks]}
        result: dict[str, Any] = self.app.invoke(start, config, context=Secrets(CANARY))
        return result

    def recorded(self) -> str:
        checkpoints = repr(list(self.saver.list(None))) + repr(self.saver.storage)
        return checkpoints + "".join(self.callbacks.seen)


def graph(table: Registry, replies: Sequence[AIMessage], *, gated: bool = True) -> Run:
    gate = ApprovalGate(table)
    tools = structured_tools(table, context=from_runtime, approvals=gate if gated else None)
    model = GenericFakeChatModel(messages=iter(replies))

    def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState, context_schema=Secrets)
    builder.add_node("agent", agent)
    builder.add_node("approve", gate.node)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, {"tools": "approve", END: END})
    builder.add_edge("approve", "tools")
    builder.add_edge("tools", "agent")
    saver = InMemorySaver()
    return Run(builder.compile(checkpointer=saver), saver, Keeping())


def calling(*calls: tuple[str, str, dict[str, object]]) -> AIMessage:
    return AIMessage("", tool_calls=[{"id": i, "name": n, "args": a} for i, n, a in calls])


def answers(result: dict[str, Any]) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in result["messages"] if isinstance(m, ToolMessage)}


def test_a_known_call_succeeds_and_the_secret_is_nowhere() -> None:
    calls: Counter[str] = Counter()
    run = graph(
        billing_table(calls), [calling(("c1", "get_invoice", {"invoice_id": 7})), AIMessage("ok")]
    )
    result = run.invoke({"messages": [HumanMessage("look")]})
    message = answers(result)["c1"]
    assert message.status == "success"
    assert json.loads(str(message.content)) == {
        "invoice_id": 7,
        "amount": 42,
        "token_length": len(CANARY),
    }
    assert calls == Counter({"get_invoice": 1})
    recorded = run.recorded()
    assert "get_invoice" in "".join(run.callbacks.seen)  # the callbacks saw the tool run
    assert CANARY not in recorded
    assert CANARY not in repr(result)


def test_the_tool_schemas_have_no_injected_parameter() -> None:
    tools = structured_tools(billing_table(Counter()))
    assert [tool.name for tool in tools] == ["fail", "get_invoice", "refund"]
    schemas = [tool.tool_call_schema for tool in tools]
    assert "api_token" not in json.dumps(schemas, default=str)
    assert all("api_token" not in tool.args for tool in tools)


@given(
    args=st.sampled_from(
        [
            {"invoice_id": "7"},
            {"invoice_id": 7.0},
            {"invoice_id": True},
            {"invoice_id": float("nan")},
            {"invoice_id": 7, "extra": 1},
            {"invoice_id": 7, "api_token": "from-the-model"},
            {},
        ]
    )
)
@settings(max_examples=14)
def test_bad_arguments_reach_the_model_as_an_error_message(args: dict[str, object]) -> None:
    calls: Counter[str] = Counter()
    run = graph(billing_table(calls), [calling(("c1", "get_invoice", args)), AIMessage("ok")])
    message = answers(run.invoke({"messages": [HumanMessage("look")]}))["c1"]
    assert message.status == "error"
    assert str(message.content).startswith("error invalid_arguments")
    assert str(message.content).endswith("Correct the arguments and call the tool again.")
    assert calls == Counter()
    assert CANARY not in run.recorded()


def test_a_final_error_is_withheld_whole() -> None:
    calls: Counter[str] = Counter()
    run = graph(billing_table(calls), [calling(("c1", "fail", {"reason": "no"})), AIMessage("ok")])
    result = run.invoke({"messages": [HumanMessage("fail")]})
    assert str(answers(result)["c1"].content).startswith("error tool_error: the tool failed;")
    assert calls == Counter({"fail": 1})
    assert CANARY not in run.recorded()


def test_an_unknown_name_never_runs() -> None:
    calls: Counter[str] = Counter()
    run = graph(
        billing_table(calls), [calling(("c1", "os_system", {"cmd": "id"})), AIMessage("ok")]
    )
    result = run.invoke({"messages": [HumanMessage("x")]})
    assert answers(result)["c1"].status == "error"
    assert calls == Counter()


def test_a_confirm_call_waits_and_runs_once_after_approval_with_no_sibling_repeated() -> None:
    calls: Counter[str] = Counter()
    run = graph(
        billing_table(calls),
        [
            calling(("c1", "get_invoice", {"invoice_id": 7}), ("c2", "refund", {"invoice_id": 7})),
            AIMessage("refunded"),
        ],
    )
    paused = run.invoke({"messages": [HumanMessage("refund 7")]})
    (pending,) = paused["__interrupt__"]
    assert pending.value == {"approve": [{"id": "c2", "name": "refund", "args": {"invoice_id": 7}}]}
    assert calls == Counter()  # nothing ran before the person answered
    result = run.invoke(Command(resume={"c2": True}))
    assert json.loads(str(answers(result)["c2"].content)) == {"refunded": 7}
    assert calls == Counter({"get_invoice": 1, "refund": 1})
    assert CANARY not in run.recorded()


# (LangGraph does not resume on a falsy value such as None or {}: the call stays pending.)
@given(
    answer=st.sampled_from(
        [{"c1": False}, {"c1": 1}, {"c1": "yes"}, {"c1": None}, {"c9": True}, [True], "approve"]
    )
)
@settings(max_examples=10)
def test_anything_but_exactly_true_for_that_call_is_denied(answer: object) -> None:
    calls: Counter[str] = Counter()
    run = graph(
        billing_table(calls), [calling(("c1", "refund", {"invoice_id": 7})), AIMessage("no")]
    )
    run.invoke({"messages": [HumanMessage("refund 7")]})
    result = run.invoke(Command(resume=answer))
    assert str(answers(result)["c1"].content).startswith("error denied")
    assert calls == Counter()


def test_without_a_gate_a_confirm_tool_is_denied() -> None:
    calls: Counter[str] = Counter()
    run = graph(
        billing_table(calls),
        [calling(("c1", "refund", {"invoice_id": 7})), AIMessage("no")],
        gated=False,
    )
    run.invoke({"messages": [HumanMessage("refund 7")]})
    result = run.invoke(Command(resume={"c1": True}))
    assert str(answers(result)["c1"].content).startswith("error denied")
    assert calls == Counter()


def test_an_approval_confirms_one_run_only() -> None:
    calls: Counter[str] = Counter()
    table = billing_table(calls)
    gate = ApprovalGate(table)
    (refund,) = [
        t
        for t in structured_tools(table, context={"api_token": CANARY}, approvals=gate)
        if t.name == "refund"
    ]
    gate._approved.add(("c1", "refund", '{"invoice_id":7}'))
    call = {"type": "tool_call", "id": "c1", "name": "refund", "args": {"invoice_id": 7}}
    assert refund.invoke(call).status == "success"
    assert refund.invoke(call).status == "error"
    assert calls == Counter({"refund": 1})


def test_a_plain_dict_invoke_has_no_call_id_and_cannot_be_confirmed() -> None:
    calls: Counter[str] = Counter()
    table = billing_table(calls)
    gate = ApprovalGate(table)
    tools = structured_tools(table, context={"api_token": CANARY}, approvals=gate)
    (refund,) = [t for t in tools if t.name == "refund"]
    (lookup,) = [t for t in tools if t.name == "get_invoice"]
    # handle_tool_error: the error text comes back as the tool's output.
    assert str(refund.invoke({"invoice_id": 7})).startswith("error denied")
    assert json.loads(lookup.invoke({"invoice_id": 7}))["amount"] == 42
    assert calls == Counter({"get_invoice": 1})


def test_the_gate_holds_a_bounded_number_of_approvals() -> None:
    gate = ApprovalGate(billing_table(Counter()))
    for number in range(3000):
        gate._approved.add((f"old-{number}", "refund", "{}"))
    calls = [{"id": "new", "name": "refund", "args": {}}]
    message = AIMessage("", tool_calls=calls)
    builder = StateGraph(MessagesState)
    builder.add_node("approve", gate.node)
    builder.add_edge(START, "approve")
    builder.add_edge("approve", END)
    graph = builder.compile(checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "g"}}
    graph.invoke({"messages": [message]}, config)
    graph.invoke(Command(resume={"new": True}), config)
    assert gate._approved == {("new", "refund", "{}")}
    assert gate.consume("new", "refund", {})
    assert not gate.consume("new", "refund", {})
    assert not gate.consume(None, "refund", {})


def test_a_gate_without_confirm_tools_never_interrupts() -> None:
    gate = ApprovalGate(billing_table(Counter()).restrict(["get_invoice"]))
    message = AIMessage("", tool_calls=[{"id": "c1", "name": "get_invoice", "args": {}}])
    assert gate.node({"messages": [message]}) == {}
    assert gate.node({"messages": []}) == {}
    assert gate.node(None) == {}


def test_the_async_path_confirms_only_the_approved_call_and_keeps_the_secret_out() -> None:
    calls: Counter[str] = Counter()
    table = billing_table(calls)
    gate = ApprovalGate(table)
    tools = {
        t.name: t for t in structured_tools(table, context={"api_token": CANARY}, approvals=gate)
    }
    gate._approved.add(("c1", "refund", '{"invoice_id":7}'))
    keeping = Keeping()
    config: RunnableConfig = {"callbacks": [keeping]}

    async def run() -> list[ToolMessage]:
        return [
            await tools["refund"].ainvoke(
                {"type": "tool_call", "id": "c1", "name": "refund", "args": {"invoice_id": 7}},
                config,
            ),
            await tools["refund"].ainvoke(
                {"type": "tool_call", "id": "c2", "name": "refund", "args": {"invoice_id": 8}},
                config,
            ),
            await tools["fail"].ainvoke(
                {"type": "tool_call", "id": "c3", "name": "fail", "args": {"reason": "r"}},
                config,
            ),
        ]

    approved, unapproved, failed = asyncio.run(run())
    assert json.loads(str(approved.content)) == {"refunded": 7}
    assert str(unapproved.content).startswith("error denied")
    assert unapproved.status == failed.status == "error"
    assert calls == Counter({"refund": 1, "fail": 1})
    assert CANARY not in "".join(keeping.seen) + repr([approved, unapproved, failed])


def _approved_gate(table: Registry, call: dict[str, Any]) -> ApprovalGate:
    """A gate whose node was shown ``call`` and approved it (a real graph, resumed)."""
    gate = ApprovalGate(table)
    builder = StateGraph(MessagesState)
    builder.add_node("approve", gate.node)
    builder.add_edge(START, "approve")
    builder.add_edge("approve", END)
    app = builder.compile(checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "a"}}
    app.invoke({"messages": [AIMessage("", tool_calls=[call])]}, config)
    app.invoke(Command(resume={call["id"]: True}), config)
    return gate


@given(
    other=st.sampled_from(
        [
            ("refund", {"invoice_id": 9999}),  # the same id, other arguments
            ("refund", {"invoice_id": 7, "extra": 1}),
            ("refund", {}),
            ("refund", {"invoice_id": 7.0}),
        ]
    )
)
@settings(max_examples=10, deadline=None)
def test_an_approval_confirms_only_the_call_the_person_saw(
    other: tuple[str, dict[str, object]],
) -> None:
    calls: Counter[str] = Counter()
    table = billing_table(calls)
    seen = {"id": "c1", "name": "refund", "args": {"invoice_id": 7}}
    gate = _approved_gate(table, seen)
    name, args = other
    tools = {
        t.name: t for t in structured_tools(table, context={"api_token": CANARY}, approvals=gate)
    }
    result = tools[name].invoke({"type": "tool_call", "id": "c1", "name": name, "args": args})
    assert result.status == "error"
    assert calls == Counter()
    # The call the person saw still runs, once.
    assert tools["refund"].invoke({"type": "tool_call", **seen}).status == "success"
    assert calls == Counter({"refund": 1})
