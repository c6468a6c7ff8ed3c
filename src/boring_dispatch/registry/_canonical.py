"""The canonical arguments of a call: the key of a recorded fixture outcome."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from boring_dispatch.observe.redact import redact

if TYPE_CHECKING:
    from boring_dispatch.registry.schema import ArgumentSchema

__all__ = ["canonical_text", "fixture_args"]

# Deeper validated arguments have no canonical form (the validator's own depth is far lower).
_MAX_DEPTH: Final = 200
_ENCODER: Final = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, separators=(",", ":"), sort_keys=True
)


def fixture_args(schema: ArgumentSchema, kwargs: Mapping[str, object]) -> dict[str, object]:
    """The canonical form of validated arguments: JSON data, sensitive values redacted.

    Optional parameters a call left out count with the handler's defaults, so
    ``{"job_id": 7}`` and ``{"job_id": 7, "verbose": false}`` are one key.
    Models and dataclasses are taken field by field, by field name, and never
    through their own serializers: a ``serialization_alias``, a
    ``model_serializer`` or a computed field could show a sensitive value
    where the schema's sensitive tree does not look. Sets are sorted.

    Raises:
        ValueError: the validated arguments have no JSON form.
    """
    from pydantic_core import PydanticSerializationError

    try:
        data = _plain({**schema.defaults, **kwargs}, 0)
    except (PydanticSerializationError, RecursionError) as error:
        raise ValueError("the validated arguments have no JSON form") from error
    redacted = redact(data, schema.sensitive)
    if not isinstance(redacted, dict):
        return {}
    canonical: dict[str, object] = json.loads(canonical_text(redacted))
    return canonical


def _plain(value: object, depth: int) -> object:
    """``value`` as JSON data, models and dataclasses by field name, sets sorted."""
    from pydantic import BaseModel, RootModel
    from pydantic_core import to_jsonable_python

    if depth > _MAX_DEPTH:
        raise ValueError("the validated arguments are nested too deeply")
    deeper = depth + 1
    if isinstance(value, RootModel):
        return _plain(value.root, deeper)  # validated (and redacted) as its root value
    members: Mapping[object, object] | None = None
    if isinstance(value, BaseModel):
        members = {name: getattr(value, name) for name in type(value).model_fields}
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        members = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    elif isinstance(value, Mapping):
        members = value
    if members is not None:
        return {_key(key): _plain(member, deeper) for key, member in members.items()}
    if isinstance(value, list | tuple | set | frozenset):
        items = [_plain(item, deeper) for item in value]
        return items if isinstance(value, list | tuple) else sorted(items, key=canonical_text)
    return to_jsonable_python(value)


def _key(key: object) -> object:
    from pydantic_core import to_jsonable_python

    plain = to_jsonable_python(key)
    return plain if isinstance(plain, str) else canonical_text(plain)


def canonical_text(value: object) -> str:
    """Sorted keys, no spaces, UTF-8 text, no NaN: the one spelling of a key.

    Raises:
        ValueError: ``value`` is not JSON data.
    """
    try:
        return _ENCODER.encode(value)
    except (TypeError, ValueError, RecursionError) as error:
        raise ValueError("not JSON data") from error
