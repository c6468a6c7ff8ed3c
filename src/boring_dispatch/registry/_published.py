"""The published JSON Schema of a tool's arguments: what every client that lists tools sees.

Sensitive places are marked ``writeOnly`` and carry no default or example:
:func:`generator` is the pydantic JSON Schema generator that marks them (and
closes every object schema, as validation is closed), and
:func:`drop_examples_of_secrets` removes ``default``/``examples`` from every
schema with a ``writeOnly`` place below it, since either would publish the
secret (or a part of it).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from pydantic.json_schema import GenerateJsonSchema

    from boring_dispatch.registry._sensitive_tree import Walk

__all__ = ["drop_examples_of_secrets", "generator"]


def generator(walk: Walk) -> type[GenerateJsonSchema]:
    from pydantic.json_schema import GenerateJsonSchema

    class _Publish(GenerateJsonSchema):
        def generate_inner(self, schema: Any) -> Any:  # noqa: ANN401 - pydantic's own types
            produced = super().generate_inner(schema)
            if isinstance(schema.get("type"), str) and walk.whole(schema):
                produced = {**produced, "writeOnly": True}
            return produced

        def default_schema(self, schema: Any) -> Any:  # noqa: ANN401
            if walk.holds(schema["schema"]):
                # The default is not even serialized: it may be (or hold) the secret.
                return self.generate_inner(schema["schema"])
            return super().default_schema(schema)

        def typed_dict_schema(self, schema: Any) -> Any:  # noqa: ANN401
            return {**super().typed_dict_schema(schema), "additionalProperties": False}

        def model_fields_schema(self, schema: Any) -> Any:  # noqa: ANN401
            return {**super().model_fields_schema(schema), "additionalProperties": False}

        def dataclass_args_schema(self, schema: Any) -> Any:  # noqa: ANN401
            return {**super().dataclass_args_schema(schema), "additionalProperties": False}

    return _Publish


#: JSON Schema keywords whose value is a subschema, a list of them, or a name -> subschema map.
_ONE_SCHEMA: Final = (
    "items",
    "additionalProperties",
    "not",
    "propertyNames",
    "contains",
    "if",
    "then",
    "else",
    "unevaluatedProperties",
    "unevaluatedItems",
)
_SCHEMA_LISTS: Final = ("anyOf", "oneOf", "allOf", "prefixItems", "items")
_SCHEMA_MAPS: Final = (
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
)
#: Keywords that publish values: never above a writeOnly place.
_VALUE_KEYWORDS: Final = ("default", "examples", "example")


def _subschemas(schema: Mapping[str, object]) -> Iterator[dict[str, Any]]:
    for key in _ONE_SCHEMA:
        value = schema.get(key)
        if isinstance(value, dict):
            yield value
    for key in _SCHEMA_LISTS:
        value = schema.get(key)
        if isinstance(value, list):
            yield from (item for item in value if isinstance(item, dict))
    for key in _SCHEMA_MAPS:
        value = schema.get(key)
        if isinstance(value, dict):
            yield from (item for item in value.values() if isinstance(item, dict))


def drop_examples_of_secrets(root: dict[str, Any]) -> None:
    """Remove ``default``/``examples`` from every schema with a ``writeOnly`` place in it.

    A default or an example there would publish the secret (or a part of it)
    to every client that lists the tools.
    """
    definitions = root.get("$defs")
    defs = definitions if isinstance(definitions, dict) else {}
    memo: dict[int, bool] = {}

    def secret(schema: dict[str, Any], active: frozenset[int]) -> bool:
        key = id(schema)
        if key in memo:
            return memo[key]
        if key in active:
            return False  # a cycle: the other members decide
        active = active | {key}
        found = schema.get("writeOnly") is True
        reference = schema.get("$ref")
        if not found and isinstance(reference, str):
            target = defs.get(reference.removeprefix("#/$defs/"))
            # A reference this function cannot follow counts as secret (fail closed).
            found = not isinstance(target, dict) or secret(target, active)
        found = found or any(secret(sub, active) for sub in _subschemas(schema))
        if not active - {key}:
            memo[key] = found
        return found

    pending, seen = [root], set()
    while pending:
        schema = pending.pop()
        if id(schema) in seen:
            continue
        seen.add(id(schema))
        if any(keyword in schema for keyword in _VALUE_KEYWORDS) and secret(schema, frozenset()):
            for keyword in _VALUE_KEYWORDS:
                schema.pop(keyword, None)
        pending.extend(_subschemas(schema))
