"""The OpenAI Agents SDK with the billing table.

Run with ``python -m examples.frameworks.openai_agents_agent``.

A scripted ``Model`` plays the model (no network; tracing off): it looks up
an invoice, then asks for a refund, which waits for a person's approval.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from agents import Agent, ModelResponse, Runner, Usage, set_tracing_disabled
from agents.models.interface import Model
from agents.tool_context import ToolContext
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from boring_dispatch.adapters.openai_agents import function_tools
from examples.frameworks.billing import BILLING, billing_token


class ScriptedModel(Model):
    """Calls get_invoice, then refund, then answers."""

    def __init__(self) -> None:
        self.step = 0
        self.seen: list[str] = []

    async def get_response(self, *args: object, **kwargs: object) -> ModelResponse:
        self.seen.append(json.dumps(args[1] if len(args) > 1 else kwargs.get("input"), default=str))
        self.step += 1
        if self.step <= 2:
            name = "get_invoice" if self.step == 1 else "refund"
            output: list[Any] = [
                ResponseFunctionToolCall(
                    type="function_call",
                    call_id=f"call-{self.step}",
                    name=name,
                    arguments='{"invoice_id": 7}',
                )
            ]
        else:
            text = ResponseOutputText(
                type="output_text", text="Invoice 7 is refunded.", annotations=[]
            )
            output = [
                ResponseOutputMessage(
                    type="message", id="m", role="assistant", status="completed", content=[text]
                )
            ]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: object, **kwargs: object) -> AsyncIterator[Any]:
        raise NotImplementedError


class Secrets:
    def __init__(self, token: str) -> None:
        self.token = token


def secrets(ctx: ToolContext[Secrets]) -> dict[str, object]:
    return {"api_token": ctx.context.token}


async def main() -> None:
    set_tracing_disabled(True)  # the example runs offline
    model = ScriptedModel()
    agent = Agent[Secrets](
        name="billing", model=model, tools=list(function_tools(BILLING, context=secrets))
    )
    context = Secrets(billing_token())
    first = await Runner.run(agent, "Refund invoice 7.", context=context)
    print("waiting for approval:", [item.tool_name for item in first.interruptions])
    state = first.to_state()
    for item in first.interruptions:
        state.approve(item)
    second = await Runner.run(agent, state, context=context)
    print(second.final_output)
    assert context.token not in json.dumps(second.to_input_list(), default=str)
    assert context.token not in "".join(model.seen)
    print("the token is in no message")


if __name__ == "__main__":
    asyncio.run(main())
