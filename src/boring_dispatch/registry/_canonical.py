"""The canonical arguments of a call: the key of a recorded fixture outcome."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from boring_dispatch.observe.redact import redact

if TYPE_CHECKING:
    from boring_dispatch.registry.schema import ArgumentSchema

__all__ = ["canonical_text", "fixture_args"]

_ENCODER: Final = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, separators=(",", ":"), sort_keys=True
)


def fixture_args(schema: ArgumentSchema, kwargs: Mapping[str, object]) -> dict[str, object]:
    """The canonical form of validated arguments: JSON data, sensitive values redacted.

    Optional parameters a call left out count with the handler's defaults, so
    ``{"job_id": 7}`` and ``{"job_id": 7, "verbose": false}`` are one key.

    Raises:
        ValueError: the validated arguments have no JSON form.
    """
    from pydantic_core import PydanticSerializationError, to_jsonable_python

    try:
        data = to_jsonable_python({**schema.defaults, **kwargs}, by_alias=True)
    except PydanticSerializationError as error:
        raise ValueError("the validated arguments have no JSON form") from error
    redacted = redact(data, schema.sensitive)
    if not isinstance(redacted, dict):
        return {}
    canonical: dict[str, object] = json.loads(canonical_text(redacted))
    return canonical


def canonical_text(value: object) -> str:
    """Sorted keys, no spaces, UTF-8 text, no NaN: the one spelling of a key.

    Raises:
        ValueError: ``value`` is not JSON data.
    """
    try:
        return _ENCODER.encode(value)
    except (TypeError, ValueError, RecursionError) as error:
        raise ValueError("not JSON data") from error
