"""Literal and Enum arguments match with their JSON types, not by Python equality.

pydantic matches a ``Literal`` or an ``Enum`` value by Python equality, even in
strict JSON mode: ``true`` is accepted for ``Literal[1]``, ``1`` for
``Literal[True]``, ``1.0`` for an ``IntEnum`` member ``1``. The published
schema (``const``/``enum``) tells every JSON Schema validator that they
differ, and strict mode promises no coercion at every depth, so the argument
schema refuses them too: :func:`exact_literals` wraps every ``literal`` and
``enum`` node of a core schema in a check, run before the node's own
validation, that the JSON value has the type of a declared value it equals.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["exact_literals"]

# JSON scalars, as pydantic's JSON parser hands them to a validator (exact types).
_JSON_SCALARS = (bool, int, float, str, type(None))
_LITERAL_NODES = frozenset({"literal", "enum"})


def exact_literals(schema: dict[str, Any]) -> dict[str, Any] | None:
    """A copy of the core ``schema`` with its literal and enum nodes type-checked.

    Returns ``None`` when the schema has no such node (the original validator
    is then used as it is). Only dicts and lists of the schema are copied;
    classes, functions and values in it are shared.
    """
    found: list[bool] = []
    copied = _copy(schema, found)
    return copied if found else None  # type: ignore[return-value]


def _copy(node: object, found: list[bool]) -> object:
    if isinstance(node, list):
        return [_copy(item, found) for item in node]
    if not isinstance(node, dict):
        return node
    copied: dict[str, Any] = {key: _copy(value, found) for key, value in node.items()}
    if copied.get("type") in _LITERAL_NODES:
        found.append(True)
        return _wrapped(copied)
    return copied


def _wrapped(node: dict[str, Any]) -> dict[str, Any]:
    """``node`` behind a before-validator; a reference to it now names the wrapper."""
    values = node["expected"] if node["type"] == "literal" else node["members"]
    wrapper: dict[str, Any] = {
        "type": "function-before",
        "function": {"type": "no-info", "function": _check(values)},
        "schema": node,
    }
    if "ref" in node:
        wrapper["ref"] = node.pop("ref")
    return wrapper


def _check(values: Iterable[object]) -> Callable[[object], object]:
    forms = [_json_form(value) for value in values]
    if any(type(form) not in _JSON_SCALARS for form in forms):
        return _unchecked  # a value JSON cannot spell as a scalar: pydantic decides alone
    exact = {(type(form), form) for form in forms}

    def check(value: object) -> object:
        if type(value) in _JSON_SCALARS and (type(value), value) in exact:
            return value
        from pydantic_core import PydanticCustomError

        raise PydanticCustomError(
            "literal_type", "Input should be one of the declared values, of the same JSON type"
        )

    return check


def _unchecked(value: object) -> object:
    return value


def _json_form(value: object) -> object:
    """What JSON spells a declared value with: an Enum member by its value."""
    return value.value if isinstance(value, enum.Enum) else value
