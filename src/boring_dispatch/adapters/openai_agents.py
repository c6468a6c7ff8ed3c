"""A Registry as OpenAI Agents SDK tools (extra ``[openai-agents]``).

::

    agent = Agent(name="billing", tools=function_tools(BILLING, context=lambda ctx: ctx.context))

- Each tool is a ``FunctionTool`` whose argument text (the model's JSON) goes
  straight to :meth:`Registry.dispatch_args_json`: the strict parser, then the
  table's pipeline. The SDK's strict-schema mode is off for these tools (the
  table's schema may have optional parameters); the table validates strictly.
- Every observation reaches the model as :meth:`Observation.model_text`: a
  result's JSON, or the error with whether a retry with other arguments helps.
- A ``confirm=True`` tool sets ``needs_approval``: the run stops with an
  interruption, and the call runs (once, ``confirmed=True``) only when the SDK
  records that a person approved that very call id.
- ``context`` supplies the ``Injected`` arguments: a mapping, or a function of
  the SDK's ``ToolContext`` (typically reading ``ctx.context``, the object
  given to ``Runner.run(..., context=...)``, which the SDK never sends to the
  model or its traces).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from agents import FunctionTool

from boring_dispatch.adapters._context import ContextSource, resolve_context

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from agents.tool_context import ToolContext

    from boring_dispatch.registry.registry import Registry
    from boring_dispatch.registry.tool_specs import ToolSpec

__all__ = ["function_tools"]


def function_tools(
    registry: Registry, *, context: ContextSource[ToolContext[Any]] = None
) -> list[FunctionTool]:
    """One ``FunctionTool`` per tool of ``registry``, sorted by name."""
    return [_function_tool(registry, spec, context) for spec in registry.tool_specs()]


def _function_tool(
    registry: Registry, spec: ToolSpec, context: ContextSource[ToolContext[Any]]
) -> FunctionTool:
    return FunctionTool(
        name=spec.name,
        description=spec.description,
        params_json_schema=dict(spec.input_schema),
        on_invoke_tool=_invoker(registry, spec, context),
        strict_json_schema=False,
        needs_approval=spec.confirm,
    )


def _invoker(
    registry: Registry, spec: ToolSpec, source: ContextSource[ToolContext[Any]]
) -> Callable[[ToolContext[Any], str], Awaitable[str]]:
    name, needs_confirmation = spec.name, spec.confirm

    async def invoke(ctx: ToolContext[Any], text: str) -> str:
        # Confirmed only when the SDK recorded a person's approval of this very call.
        confirmed = needs_confirmation and ctx.is_tool_approved(name, ctx.tool_call_id) is True
        observation = await asyncio.to_thread(
            registry.dispatch_args_json,
            name,
            text,
            confirmed=confirmed,
            context=resolve_context(source, ctx),
        )
        return observation.model_text()

    return invoke
