"""A Registry as LangChain tools, and an approval gate for LangGraph (extra ``[langchain]``).

::

    gate = ApprovalGate(BILLING)
    tools = structured_tools(BILLING, context=secrets_for, approvals=gate)
    graph.add_node("approve", gate.node)         # model -> approve -> tools -> model
    graph.add_node("tools", ToolNode(tools))

- Each tool is a LangChain ``BaseTool`` with the table's JSON Schema; its
  arguments (already parsed by the chat model integration: LangChain hands
  over a dict, not the model's text) go through :meth:`Registry.dispatch`,
  the table's strict JSON-data validation included.
- A result reaches the model as its JSON text; an error as a ``ToolMessage``
  with ``status="error"`` holding :meth:`Observation.model_text`.
- ``confirm=True`` tools: :meth:`ApprovalGate.node` runs before the
  ``ToolNode`` and calls ``interrupt()`` once for every call of that step
  that needs a person's approval; the graph resumes with
  ``Command(resume={tool_call_id: True, ...})``. Only the calls approved with
  exactly ``True`` run, once each (the approval is consumed); the rest are
  ``denied``. Because the interrupt happens before any tool runs, resuming
  re-runs no sibling tool call (an ``interrupt()`` inside a tool would).
  A process that stops between the gate and the ``ToolNode`` loses the
  approvals it held: those calls are then ``denied`` (fail closed).
- ``context`` supplies the ``Injected`` arguments: a mapping, or a function
  of the ``RunnableConfig`` of the call (it may also read LangGraph's
  ``get_runtime().context``). Keep secrets out of ``configurable``: LangChain
  copies simple ``configurable`` values into the metadata tracers record.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Final, final

from langchain_core.runnables.config import ensure_config
from langchain_core.tools import BaseTool, ToolException

from boring_dispatch.adapters._context import ContextSource, resolve_context

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from boring_dispatch.observation import Observation
    from boring_dispatch.registry.registry import Registry
    from boring_dispatch.registry.tool_specs import ToolSpec

__all__ = ["ApprovalGate", "structured_tools"]

#: The id of the tool call being run (set around ``invoke`` when it gets a ToolCall).
_CALL_ID: ContextVar[str | None] = ContextVar("boring_dispatch_tool_call_id", default=None)
_MAX_APPROVALS: Final = 1024


@final
class ApprovalGate:
    """The LangGraph node that asks a person before any ``confirm=True`` tool call runs.

    Use :attr:`node` as a graph node between the model and the ``ToolNode``;
    pass the gate to :func:`structured_tools` so the tools can tell which
    calls were approved. The state must hold ``messages`` (as ``MessagesState``).
    """

    def __init__(self, registry: Registry) -> None:
        self._confirm = frozenset(spec.name for spec in registry.tool_specs() if spec.confirm)
        # (call id, tool name, the arguments' canonical JSON) of each call a person approved.
        self._approved: set[tuple[str, str, str]] = set()
        self._lock = threading.Lock()

    def node(self, state: Any) -> dict[str, Any]:
        """Interrupt for the last message's confirm tool calls; record the approved ones.

        The interrupt's value is ``{"approve": [{"id", "name", "args"}, ...]}``;
        resume with ``{id: True}`` for each call a person approved.
        """
        from langgraph.types import interrupt

        messages = (state.get("messages") if isinstance(state, Mapping) else None) or []
        calls = getattr(messages[-1], "tool_calls", None) if messages else None
        pending = [call for call in calls or () if call.get("name") in self._confirm]
        if not pending:
            return {}
        shown = [{"id": c.get("id"), "name": c["name"], "args": c.get("args")} for c in pending]
        decision = interrupt({"approve": shown})
        if not isinstance(decision, Mapping):
            return {}
        approved = {
            (call["id"], call["name"], shown_args)
            for call in pending
            if type(call.get("id")) is str
            and decision.get(call["id"]) is True
            and (shown_args := _shown_args(call.get("args"))) is not None
        }
        with self._lock:
            if len(self._approved) + len(approved) > _MAX_APPROVALS:
                self._approved.clear()  # stale approvals of abandoned runs: drop, never grow
            self._approved |= approved
        return {}

    def consume(self, call_id: str | None, name: str, args: object) -> bool:
        """Whether this call (its id, tool name and arguments, as the person saw them) was
        approved; an approval confirms one run only."""
        shown_args = _shown_args(args)
        if call_id is None or shown_args is None:
            return False
        key = (call_id, name, shown_args)
        with self._lock:
            if key in self._approved:
                self._approved.discard(key)
                return True
        return False


def structured_tools(
    registry: Registry,
    *,
    context: ContextSource[RunnableConfig] = None,
    approvals: ApprovalGate | None = None,
) -> list[BaseTool]:
    """One LangChain tool per tool of ``registry``, sorted by name.

    Without ``approvals``, every ``confirm=True`` tool call is ``denied``.
    """
    return [_RegistryTool.of(registry, spec, context, approvals) for spec in registry.tool_specs()]


class _RegistryTool(BaseTool):
    """One table tool; every call goes through the table's dispatch."""

    # Set once by ``of``; pydantic fields of BaseTool are the name, description and schema.
    registry_: Any = None
    context_: Any = None
    approvals_: Any = None
    confirm_: bool = False

    @classmethod
    def of(
        cls,
        registry: Registry,
        spec: ToolSpec,
        context: ContextSource[RunnableConfig],
        approvals: ApprovalGate | None,
    ) -> _RegistryTool:
        return cls(
            name=spec.name,
            description=spec.description,
            args_schema=dict(spec.input_schema),
            handle_tool_error=True,
            registry_=registry,
            context_=context,
            approvals_=approvals,
            confirm_=spec.confirm,
        )

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:  # noqa: A002
        token = _CALL_ID.set(_call_id(input))
        try:
            return super().invoke(input, config, **kwargs)
        finally:
            _CALL_ID.reset(token)

    async def ainvoke(
        self,
        input: Any,  # noqa: A002 - the Runnable's name
        config: RunnableConfig | None = None,
        **kwargs: Any,
    ) -> Any:
        token = _CALL_ID.set(_call_id(input))
        try:
            return await super().ainvoke(input, config, **kwargs)
        finally:
            _CALL_ID.reset(token)

    def _confirmed(self, args: dict[str, Any]) -> bool:
        gate = self.approvals_
        return (
            self.confirm_
            and isinstance(gate, ApprovalGate)
            and gate.consume(_CALL_ID.get(), self.name, args)
        )

    def _run(self, *args: Any, **kwargs: Any) -> str:
        registry: Registry = self.registry_
        context = resolve_context(self.context_, ensure_config())
        observation = registry.dispatch(
            self.name, kwargs, confirmed=self._confirmed(kwargs), context=context
        )
        return _content(observation)

    async def _arun(self, *args: Any, **kwargs: Any) -> str:
        registry: Registry = self.registry_
        context = resolve_context(self.context_, ensure_config())
        observation = await registry.adispatch(
            self.name, kwargs, confirmed=self._confirmed(kwargs), context=context
        )
        return _content(observation)


def _shown_args(args: object) -> str | None:
    """The arguments' canonical JSON (sorted keys, exact numbers): what an approval binds.

    ``None`` for arguments that are not JSON data: they can be neither approved nor confirmed.
    """
    try:
        return json.dumps(args, sort_keys=True, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return None


def _call_id(value: object) -> str | None:
    if isinstance(value, Mapping) and value.get("type") == "tool_call":
        call_id = value.get("id")
        return call_id if type(call_id) is str else None
    return None


def _content(observation: Observation) -> str:
    """The model's text; an error becomes a ``ToolException`` (an error ``ToolMessage``)."""
    if observation.error is not None:
        raise ToolException(observation.model_text())
    return observation.model_text()
