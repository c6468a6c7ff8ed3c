"""What a table tells a model and an integration about each tool: typed, frozen records.

:meth:`Registry.tool_specs` returns one :class:`ToolSpec` per tool, and
:meth:`Registry.tool_schemas` builds every prompt format from them, so a
framework adapter and a hand-written loop read the same thing:

- ``chat_completions`` (alias ``openai``): ``{"type": "function", "function":
  {"name", "description", "parameters"}}``, the Chat Completions shape;
- ``responses``: ``{"type": "function", "name", "description",
  "parameters"}``, the Responses API and Agents SDK shape;
- ``anthropic``: ``{"name", "description", "input_schema"}``;
- ``mcp``: ``{"name", "description", "inputSchema"}``.

Providers accept tool names matching ``^[a-zA-Z0-9_-]{1,64}$``; a table name
with a dot is valid here but logged as a warning when the table is built.
"""

from __future__ import annotations

import copy
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal, final

from boring_dispatch.observe.redact import SensitiveNode

if TYPE_CHECKING:
    from boring_dispatch.registry.pipeline import Entry

__all__ = ["SCHEMA_FORMATS", "SchemaFormat", "ToolSpec", "check_provider_name", "spec_of"]

#: The prompt tool-list formats of :meth:`Registry.tool_schemas`.
SchemaFormat = Literal["chat_completions", "openai", "responses", "anthropic", "mcp"]
SCHEMA_FORMATS: Final = ("chat_completions", "openai", "responses", "anthropic", "mcp")

_LOG: Final = logging.getLogger("boring_dispatch")
_PROVIDER_NAME: Final = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_MAX_PATHS: Final = 256


@final
@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool as a model and an integration see it (a fresh copy on every call).

    ``input_schema`` is the JSON Schema of the arguments the model writes:
    injected parameters are absent from it. ``sensitive_paths`` name where
    sensitive values sit (``api_token``, ``card.number``, ``cards[].cvc``),
    injected ones included; ``injected`` names the parameters the caller
    supplies through ``context``.
    """

    name: str
    description: str
    input_schema: Mapping[str, object]
    confirm: bool
    audience: str
    sensitive_paths: tuple[str, ...]
    injected: tuple[str, ...]

    def tool_schema(self, style: SchemaFormat) -> dict[str, object]:
        """This tool in one prompt format (a fresh dict).

        Raises:
            ValueError: an unknown format.
        """
        schema = copy.deepcopy(dict(self.input_schema))
        if style in ("chat_completions", "openai"):
            function = {"name": self.name, "description": self.description, "parameters": schema}
            return {"type": "function", "function": function}
        if style == "responses":
            return {
                "type": "function",
                "name": self.name,
                "description": self.description,
                "parameters": schema,
            }
        if style == "anthropic":
            return {"name": self.name, "description": self.description, "input_schema": schema}
        if style == "mcp":
            return {"name": self.name, "description": self.description, "inputSchema": schema}
        raise ValueError(f"unknown schema format {style!r}")


def spec_of(name: str, description: str, audience: str, entry: Entry) -> ToolSpec:
    """The record of one built table row."""
    schema = entry.schema
    return ToolSpec(
        name=name,
        description=description,
        input_schema=copy.deepcopy(dict(schema.json_schema)),
        confirm=entry.confirm,
        audience=audience,
        sensitive_paths=sensitive_paths(schema.sensitive),
        injected=tuple(sorted(schema.injected.names)),
    )


def sensitive_paths(node: SensitiveNode | None) -> tuple[str, ...]:
    """Where a sensitive tree marks values, as dotted paths (``[]``: every item), sorted."""
    found: list[str] = []
    pending: list[tuple[SensitiveNode, str]] = [] if node is None else [(node, "")]
    while pending and len(found) < _MAX_PATHS:
        current, path = pending.pop()
        if current.whole:
            found.append(path or "(all)")
            continue
        for key, child in current.keys.items():
            pending.append((child, f"{path}.{key}" if path else key))
        if current.items is not None:
            pending.append((current.items, f"{path}[]"))
    return tuple(sorted(set(found)))


def check_provider_name(surface: str, tool_name: str) -> None:
    """Warn (log) when a tool name breaks the providers' ``^[a-zA-Z0-9_-]{1,64}$``."""
    if _PROVIDER_NAME.fullmatch(tool_name) is None:
        _LOG.warning(
            "surface=%s tool %r: model providers accept only names matching "
            "^[a-zA-Z0-9_-]{1,64}$; rename it to offer it to a hosted model",
            surface,
            tool_name,
        )
