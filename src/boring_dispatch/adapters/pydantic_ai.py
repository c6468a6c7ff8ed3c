"""A Registry as a Pydantic AI toolset (extra ``[pydantic-ai]``).

::

    agent = Agent(model, toolsets=[RegistryToolset(BILLING, context=lambda ctx: ctx.deps)])

- The model's argument text reaches the table untouched and is parsed there
  by the strict parser (:meth:`Registry.dispatch_args_json`); Pydantic AI's
  own validator is not used, so there is one validation, the table's.
- ``invalid_arguments`` and ``invalid_request`` become a retry prompt
  (``ModelRetry``) holding :meth:`Observation.model_text`; every other error
  a terminal failure text (``ToolFailed``).
- A ``confirm=True`` tool raises ``ApprovalRequired``: the run ends with
  ``DeferredToolRequests``, and the call runs (once, ``confirmed=True``) only
  when the next run approves it through ``DeferredToolResults``.
- ``context`` supplies the ``Injected`` arguments: a mapping, or a function of
  the ``RunContext`` (typically returning values from ``ctx.deps``). They never
  pass through the model, so they never enter the message history.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, final

from pydantic_ai.exceptions import ApprovalRequired, ModelRetry, ToolFailed
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool

from boring_dispatch.adapters._context import ContextSource, resolve_context

if TYPE_CHECKING:
    from pydantic_ai import RunContext

    from boring_dispatch.observation import Observation
    from boring_dispatch.registry.registry import Registry

__all__ = ["RegistryToolset"]

_DEFAULT_RETRIES: Final = 2


@final
class _RawArguments(dict[str, Any]):
    """What the pass-through validator returns: no members, the model's text aside."""

    __slots__ = ("text",)

    def __init__(self, text: str | bytes | bytearray) -> None:
        super().__init__()
        self.text = bytes(text) if isinstance(text, bytearray) else text


@final
class _PassThrough:
    """An ``args_validator`` that validates nothing: the table validates, strictly, once."""

    def validate_json(
        self,
        input: str | bytes | bytearray,  # noqa: A002 - the protocol's name
        *,
        allow_partial: bool | Literal["off", "on", "trailing-strings"] = False,
        **kwargs: Any,
    ) -> Any:
        return _RawArguments(input)

    def validate_python(
        self,
        input: Any,  # noqa: A002 - the protocol's name
        *,
        allow_partial: bool | Literal["off", "on", "trailing-strings"] = False,
        **kwargs: Any,
    ) -> Any:
        return dict(input) if isinstance(input, Mapping) else input


_PASS_THROUGH: Final = _PassThrough()


@final
class RegistryToolset(AbstractToolset[Any]):
    """The table's tools as a Pydantic AI toolset; every call goes through the table's dispatch.

    Args:
        registry: the table.
        context: the injected arguments: a mapping, or a function of the
            ``RunContext`` returning one.
        max_retries: how many retry prompts one tool gets per run.
        toolset_id: the toolset's ``id`` (needed by durable execution).
    """

    def __init__(
        self,
        registry: Registry,
        *,
        context: ContextSource[RunContext[Any]] = None,
        max_retries: int = _DEFAULT_RETRIES,
        toolset_id: str | None = None,
    ) -> None:
        self._registry = registry
        self._context = context
        self._max_retries = max_retries
        self._id = toolset_id
        self._specs = {spec.name: spec for spec in registry.tool_specs()}

    @property
    def id(self) -> str | None:
        return self._id

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        return {
            name: ToolsetTool(
                toolset=self,
                tool_def=ToolDefinition(
                    name=name,
                    description=spec.description,
                    parameters_json_schema=dict(spec.input_schema),
                ),
                max_retries=self._max_retries,
                args_validator=_PASS_THROUGH,
            )
            for name, spec in self._specs.items()
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        spec = self._specs.get(name)
        confirmed = spec is not None and spec.confirm and ctx.tool_call_approved
        if spec is not None and spec.confirm and not confirmed:
            raise ApprovalRequired(metadata={"tool": name})
        context = resolve_context(self._context, ctx)
        if isinstance(tool_args, _RawArguments):
            observation = await _in_thread(
                self._registry.dispatch_args_json, name, tool_args.text, confirmed, context
            )
        else:
            observation = await self._registry.adispatch(
                name, tool_args, confirmed=confirmed, context=context
            )
        return _answer(observation)


async def _in_thread(
    call: Callable[..., Observation],
    name: str,
    text: str | bytes,
    confirmed: bool,
    context: Mapping[str, object] | None,
) -> Observation:
    import asyncio

    observation: Observation = await asyncio.to_thread(
        call, name, text, confirmed=confirmed, context=context
    )
    return observation


def _answer(observation: Observation) -> Any:
    """The result for the model, or the exception Pydantic AI turns into the right message."""
    error = observation.error
    if error is None:
        return observation.result
    if error.retryable:
        raise ModelRetry(observation.model_text())
    raise ToolFailed(observation.model_text())
