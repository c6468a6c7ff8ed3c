"""LangGraph with the billing table: ``python -m examples.frameworks.langgraph_agent``.

LangChain's fake chat model plays the model (no network). The graph is
model -> approve -> tools -> model; the refund waits at the approval gate.
"""

from __future__ import annotations

from dataclasses import dataclass

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.runtime import get_runtime
from langgraph.types import Command

from boring_dispatch.adapters.langchain import ApprovalGate, structured_tools
from examples.frameworks.billing import BILLING, billing_token


@dataclass
class Secrets:
    token: str


def secrets(config: RunnableConfig) -> dict[str, object]:
    return {"api_token": get_runtime(Secrets).context.token}


model = GenericFakeChatModel(
    messages=iter(
        [
            AIMessage(
                "", tool_calls=[{"id": "call-1", "name": "get_invoice", "args": {"invoice_id": 7}}]
            ),
            AIMessage(
                "", tool_calls=[{"id": "call-2", "name": "refund", "args": {"invoice_id": 7}}]
            ),
            AIMessage("Invoice 7 is refunded."),
        ]
    )
)


def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
    return {"messages": [model.invoke(state["messages"])]}


gate = ApprovalGate(BILLING)
builder = StateGraph(MessagesState, context_schema=Secrets)
builder.add_node("agent", agent)
builder.add_node("approve", gate.node)
builder.add_node("tools", ToolNode(structured_tools(BILLING, context=secrets, approvals=gate)))
builder.add_edge(START, "agent")
builder.add_conditional_edges("agent", tools_condition, {"tools": "approve", END: END})
builder.add_edge("approve", "tools")
builder.add_edge("tools", "agent")
saver = InMemorySaver()
graph = builder.compile(checkpointer=saver)


def main() -> None:
    config: RunnableConfig = {"configurable": {"thread_id": "billing-1"}}
    context = Secrets(billing_token())
    paused = graph.invoke(
        {"messages": [HumanMessage("Refund invoice 7.")]}, config, context=context
    )
    (pending,) = paused["__interrupt__"]
    print("waiting for approval:", [call["name"] for call in pending.value["approve"]])
    approvals = {call["id"]: True for call in pending.value["approve"]}
    done = graph.invoke(Command(resume=approvals), config, context=context)
    print(done["messages"][-1].content)
    assert context.token not in repr(list(saver.list(None)))
    print("the token is in no message or checkpoint")


if __name__ == "__main__":
    main()
