"""Pydantic AI with the billing table: run with ``python -m examples.frameworks.pydantic_ai_agent``.

A FunctionModel plays the model (no network): it looks up an invoice, then
asks for a refund, which waits for a person's approval.
"""

from __future__ import annotations

from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, RunContext
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    ModelResponsePart,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from boring_dispatch.adapters.pydantic_ai import RegistryToolset
from examples.frameworks.billing import BILLING, billing_token

SCRIPT: list[list[ModelResponsePart]] = [
    [ToolCallPart("get_invoice", '{"invoice_id": 7}', tool_call_id="call-1")],
    [ToolCallPart("refund", '{"invoice_id": 7}', tool_call_id="call-2")],
    [TextPart("Invoice 7 is refunded.")],
]


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    step = sum(1 for message in messages if message.kind == "response")
    return ModelResponse(parts=SCRIPT[min(step, len(SCRIPT) - 1)])


def secrets(ctx: RunContext[str]) -> dict[str, object]:
    return {"api_token": ctx.deps}


agent = Agent(
    FunctionModel(scripted),
    deps_type=str,
    toolsets=[RegistryToolset(BILLING, context=secrets)],
    output_type=[str, DeferredToolRequests],
)


def main() -> None:
    token = billing_token()
    first = agent.run_sync("Refund invoice 7.", deps=token)
    assert isinstance(first.output, DeferredToolRequests)
    print("waiting for approval:", [call.tool_name for call in first.output.approvals])
    approved = DeferredToolResults(approvals={c.tool_call_id: True for c in first.output.approvals})
    second = agent.run_sync(
        message_history=first.all_messages(), deps=token, deferred_tool_results=approved
    )
    print(second.output)
    assert token not in second.all_messages_json().decode()
    print("the token is in no message")


if __name__ == "__main__":
    main()
