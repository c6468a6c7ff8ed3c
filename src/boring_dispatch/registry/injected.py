"""Injected arguments: parameters the caller supplies and the model never sees.

::

    def refund(invoice_id: int, api_token: Annotated[str, Sensitive, Injected]) -> dict: ...

    table.dispatch("refund", {"invoice_id": 7}, context={"api_token": token})

A parameter marked :class:`Injected` is left out of every published schema,
refused as ``invalid_arguments`` when the model's arguments name it, and taken
from the caller's ``context`` (only the names the tool marks; other context
members are ignored, so one context can serve a whole table). The value is
validated like any other argument, and is redacted like one when it is also
:class:`~boring_dispatch.registry.schema.Sensitive`.

Only top-level parameters (or top-level fields of an explicit ``args`` model)
can be injected: a marker anywhere else refuses the table at build.
"""

from __future__ import annotations

import copy
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, cast, final

from boring_dispatch.errors import RegistryInvalid

if TYPE_CHECKING:
    import inspect

    from pydantic import BaseModel, GetCoreSchemaHandler
    from pydantic_core import CoreSchema

__all__ = [
    "SENT_BY_MODEL",
    "Injected",
    "InjectedNames",
    "MissingContext",
    "check_markers",
    "find_injected",
    "merged",
    "sent_by_model",
    "strip_injected",
]

#: The core-schema metadata key the :class:`Injected` marker sets (to count the markers).
_MARK: Final = "boring_dispatch_injected"
_MAX_NODES: Final = 1 << 16


@final
class Injected:
    """Marker for a parameter the caller supplies: ``token: Annotated[str, Injected]``.

    Absent from the schema the model reads; refused when the model sends it;
    filled from ``dispatch(..., context={...})``.
    """

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: object, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        inner = handler(source)
        marked = dict(inner)
        marked["metadata"] = {**(inner.get("metadata") or {}), _MARK: True}
        return cast("CoreSchema", marked)


@final
@dataclass(frozen=True, slots=True)
class InjectedNames:
    """The injected parameters of one tool: all of them, and those without a default."""

    names: frozenset[str] = frozenset()
    required: frozenset[str] = frozenset()


def _marked(annotation: object) -> bool:
    if typing.get_origin(annotation) is not typing.Annotated:
        return False
    return any(extra is Injected for extra in typing.get_args(annotation)[1:])


def find_injected(
    tool_name: str,
    signature: inspect.Signature,
    bound: frozenset[str],
    model: type[BaseModel] | None,
) -> InjectedNames:
    """The top-level injected names, from the signature or from the explicit model's fields."""
    names: set[str] = set()
    required: set[str] = set()
    if model is None:
        for parameter in signature.parameters.values():
            if parameter.name not in bound and _marked(parameter.annotation):
                names.add(parameter.name)
                if parameter.default is parameter.empty:
                    required.add(parameter.name)
    else:
        for field_name, info in model.model_fields.items():
            if any(extra is Injected for extra in info.metadata):
                if info.alias is not None and info.alias != field_name:
                    raise RegistryInvalid(
                        f"tool {tool_name!r}: injected field {field_name!r} cannot have an alias"
                    )
                names.add(field_name)
                if info.is_required():
                    required.add(field_name)
    return InjectedNames(frozenset(names), frozenset(required))


def check_markers(tool_name: str, core_schema: object, injected: InjectedNames) -> None:
    """Refuse an :class:`Injected` marker the top-level reading did not find (nested, aliased).

    Counted on pydantic's core schema, which holds every marker however the
    type was spelled: a marker that is not a top-level parameter fails closed.
    """
    found = 0
    pending: list[object] = [core_schema]
    seen = 0
    while pending:
        value = pending.pop()
        seen += 1
        if seen > _MAX_NODES:
            raise RegistryInvalid(f"tool {tool_name!r}: the argument schema is too large")
        if isinstance(value, Mapping):
            metadata = value.get("metadata")
            if isinstance(metadata, Mapping) and metadata.get(_MARK) is True:
                found += 1
            pending.extend(value.values())
        elif isinstance(value, list | tuple):
            pending.extend(value)
    if found != len(injected.names):
        raise RegistryInvalid(
            f"tool {tool_name!r}: Injected marks only top-level parameters "
            "(not nested fields, type aliases or aliased fields)"
        )


def strip_injected(json_schema: dict[str, Any], injected: InjectedNames) -> dict[str, Any]:
    """The JSON Schema the model reads: the injected properties and requirements removed."""
    if not injected.names:
        return json_schema
    stripped = copy.deepcopy(json_schema)
    properties = stripped.get("properties")
    if isinstance(properties, dict):
        for name in injected.names:
            properties.pop(name, None)
    required = stripped.get("required")
    if isinstance(required, list):
        kept = [name for name in required if name not in injected.names]
        if kept:
            stripped["required"] = kept
        else:
            del stripped["required"]
    return stripped


#: The reason an ``invalid_arguments`` detail gives for an injected name the model sent.
SENT_BY_MODEL: Final = "supplied by the caller, not by the model"


class MissingContext(Exception):
    """A required injected argument is not in the caller's context: a fault of the caller.

    The pipeline turns it into ``internal_error`` (logged with a correlation
    id): the model cannot fix it, so it is not a refusal of the model's call.
    """


def sent_by_model(args: Mapping[str, object], injected: InjectedNames) -> tuple[str, ...]:
    """The injected names the model's arguments hold, sorted (each one is refused)."""
    if not injected.names:
        return ()
    return tuple(sorted(name for name in injected.names if name in args))


def merged(
    args: dict[str, object], injected: InjectedNames, context: Mapping[str, object] | None
) -> dict[str, object]:
    """The model's arguments plus this tool's injected values from ``context``.

    Raises:
        MissingContext: a required injected name is not in ``context``.
    """
    if not injected.names:
        return args
    supplied = {} if context is None else context
    missing = sorted(injected.required - supplied.keys())
    if missing:
        raise MissingContext(f"the caller's context lacks the injected arguments {missing}")
    return {**args, **{name: supplied[name] for name in injected.names if name in supplied}}
