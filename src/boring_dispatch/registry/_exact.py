"""A Python caller's arguments with exact JSON types, before anything reads them.

The validator reads arguments as JSON text, so a ``str`` subclass validates
as the plain text it holds, an ``IntEnum`` member as its ``int``. Everything
else the pipeline does with the arguments must see those same plain values:
the look-up of sensitive members by name (a key whose ``__hash__`` or
``__eq__`` differs from ``str``'s would miss it), the injected-name check,
the text forms of a secret (a ``__repr__`` that lies or raises), the audit
snapshot. So a caller's ``str``, ``int`` and ``float`` subclasses, keys
included, become exact ``str``, ``int`` and ``float`` here, through the base
type's own conversion (never the subclass's methods), and tuples become lists.

Anything that is not JSON data (a ``date``, a set, a mapping that is not a
``dict``, an object) is left as it is, for the validator to refuse with its
path; so is whatever lies deeper than the validator looks, or beyond its
budget of values.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Final

from boring_dispatch.errors import InvalidRequest
from boring_dispatch.registry._invalid import MAX_NESTING, MAX_VALUES

__all__ = ["exact_arguments"]

_FLAT: Final = frozenset({str, int, bool, type(None)})


def exact_arguments(args: dict[str, object]) -> dict[str, object]:
    """``args``, or a copy of them whose JSON values and keys have exact types.

    Raises:
        InvalidRequest: two keys of one object are the same text (the JSON
            form of the call would hold a duplicate key).
    """
    if _flat(args):
        return args  # the common case: nothing to convert
    budget = [MAX_VALUES]
    converted = _exact(args, 0, budget)
    return converted if type(converted) is dict else args


def _flat(args: dict[str, object]) -> bool:
    for key, value in args.items():
        if type(key) is not str:
            return False
        kind = type(value)
        if kind not in _FLAT and not (kind is float and math.isfinite(value)):  # type: ignore[arg-type]
            return False
    return True


def _exact(value: object, depth: int, budget: list[int]) -> object:
    budget[0] -= 1
    if budget[0] < 0 or depth > MAX_NESTING:
        return value  # past the validator's bounds: it refuses the call
    # type(), not isinstance(): an object's ``__class__`` may claim to be a str.
    kind = type(value)
    if kind is bool or value is None:
        return value
    for base, convert in _SCALARS:
        if issubclass(kind, base):
            return convert(value)
    if issubclass(kind, list | tuple):
        return [_exact(item, depth + 1, budget) for item in value]  # type: ignore[attr-defined]
    if not issubclass(kind, dict):
        return value  # not JSON data: the validator refuses it
    members: dict[object, object] = {}
    for key, member in value.items():  # type: ignore[attr-defined]
        plain = str.__str__(key) if issubclass(type(key), str) else key
        if plain in members:
            raise InvalidRequest("args hold two members with the same name")
        members[plain] = _exact(member, depth + 1, budget)
    return members


#: The base type's own conversion of each JSON scalar type (never the subclass's methods).
_SCALARS: Final[tuple[tuple[type, Callable[[Any], object]], ...]] = (
    (str, str.__str__),
    (int, int.__index__),
    (float, float.__float__),
)
