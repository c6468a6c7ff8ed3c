"""Arguments that are not JSON data, and what a refusal of invalid arguments says.

Arguments are JSON data on every surface, so a Python caller's arguments are
checked the way ``dispatch_json`` reads the same call written as JSON
(:func:`json_text`, bounded in depth and size). The details of an
:class:`~boring_dispatch.errors.InvalidArguments` (:func:`details`) never show
a sensitive value: a path is cut at the first sensitive place, and a message
that would quote the submitted value becomes the bare error type. :func:`extras`
finds the unknown members of refused arguments, for the audit records.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from boring_dispatch.errors import InvalidArguments
from boring_dispatch.observe.redact import PLACEHOLDER, SensitiveNode
from boring_dispatch.registry._call_guards import reveals

if TYPE_CHECKING:
    from pydantic import ValidationError

__all__ = ["MAX_NESTING", "MAX_VALUES", "MESSAGE", "details", "extras", "json_text"]

MESSAGE: Final = "arguments do not match the tool's schema"
_MAX_DETAILS: Final = 20
_MAX_PATH: Final = 200
#: Python arguments deeper than this, or with more values, are not taken for JSON data.
MAX_NESTING: Final = 128
MAX_VALUES: Final = 1 << 20
#: pydantic error types that name a member the schema does not know.
_EXTRA_TYPES: Final = frozenset({"extra_forbidden", "unexpected_keyword_argument"})
#: Value types a flat call (the common case) may hold, checked without a walk.
_FLAT: Final = frozenset({str, int, bool, type(None)})

#: A location in the arguments: keys and indexes.
_Loc = tuple[str | int, ...]


def json_text(
    args: dict[str, object],
    sensitive: SensitiveNode | None,
    encode: Callable[[object], bytes],
) -> bytes:
    """``args`` as JSON text, or :class:`InvalidArguments` when they are not JSON data.

    A Python caller's arguments get exactly the treatment ``dispatch_json``
    gives the same call written as JSON: objects with string keys, arrays
    (lists or tuples), strings, finite numbers, booleans and null. A ``date``,
    ``UUID`` or set is not JSON data: pass its JSON form (``"2024-05-01"``).
    ``encode`` is ``pydantic_core.to_json``, given once the data is known to be JSON.
    """
    problem = None if _flat(args) else _not_json(args)
    if problem is None:
        try:
            return encode(args)
        except ValueError:  # e.g. a lone surrogate, which no JSON text can carry
            problem = ((), "not JSON data: cannot be written as JSON")
    loc, reason = problem
    raise InvalidArguments(MESSAGE, (_detail(loc, "not_json", reason, sensitive),))


def _flat(args: dict[str, object]) -> bool:
    """The common case, checked fast: string keys, and values that are plain scalars."""
    for key, value in args.items():
        if type(key) is not str:
            return False
        if type(value) not in _FLAT and not (type(value) is float and math.isfinite(value)):
            return False
    return True


def _not_json(args: object) -> tuple[_Loc, str] | None:
    """Where ``args`` stops being JSON data, and why (``None``: it is JSON data).

    Depth and size are bounded, which also stops a cycle in Python input.
    """
    pending: list[tuple[object, _Loc]] = [(args, ())]
    budget = MAX_VALUES
    while pending:
        value, loc = pending.pop()
        budget -= 1
        if budget < 0:
            return (), "not JSON data: too many values"
        problem = _not_json_here(value, loc)
        if problem is not None:
            return problem
        if isinstance(value, dict):
            pending.extend((value[key], (*loc, key)) for key in reversed(value))
        elif isinstance(value, list | tuple):
            pending.extend((value[i], (*loc, i)) for i in reversed(range(len(value))))
    return None


def _not_json_here(value: object, loc: _Loc) -> tuple[_Loc, str] | None:
    if value is None or isinstance(value, str | bool | int):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else (loc, "not JSON data: a non-finite number")
    if not isinstance(value, dict | list | tuple):
        return loc, f"not JSON data: {type(value).__name__}"
    if len(loc) >= MAX_NESTING:
        return loc, "not JSON data: nested too deeply"
    if isinstance(value, dict) and not all(isinstance(key, str) for key in value):
        return loc, "not JSON data: an object key is not a string"
    return None


def extras(
    validate_json: Callable[[bytes], object], validation_error: type[ValidationError]
) -> Callable[[dict[str, object]], tuple[tuple[str | int, ...], ...]]:
    """For audit records of refused calls: where the members the schema does not know are."""
    from pydantic_core import to_json

    def unknown(args: dict[str, object]) -> tuple[tuple[str | int, ...], ...]:
        try:
            validate_json(json_text(args, None, to_json))
        except InvalidArguments:
            return ()  # not JSON data: the sensitive tree alone redacts the record
        except validation_error as error:
            found = error.errors(include_url=False, include_context=False, include_input=False)
            return tuple(tuple(item["loc"]) for item in found if item["type"] in _EXTRA_TYPES)
        return ()

    return unknown


def details(
    error: ValidationError, sensitive: SensitiveNode | None, secrets: tuple[str, ...] = ()
) -> tuple[tuple[str, str], ...]:
    """The ``(path, reason)`` pairs of a refusal; a reason that quotes a value is the error type.

    ``secrets`` are the sensitive values of the whole call: a custom validator
    (a model validator, a field validator reading ``info.data``) can quote one
    in an error whose path is not the secret's own.
    """
    shown = []
    for item in error.errors(include_url=False, include_context=False)[:_MAX_DETAILS]:
        reason = _reason(item["type"], item["msg"], item.get("input"))
        if secrets and reveals(reason, secrets):
            reason = item["type"]
        shown.append(_detail(item["loc"], item["type"], reason, sensitive))
    return tuple(shown)


def _detail(
    loc: tuple[str | int, ...], kind: str, reason: str, sensitive: SensitiveNode | None
) -> tuple[str, str]:
    """One ``(path, reason)``: inside a sensitive value only the error type, and no keys."""
    path, inside = _shown_path(loc, sensitive)
    return path[:_MAX_PATH], kind if inside else reason


def _shown_path(loc: tuple[str | int, ...], node: SensitiveNode | None) -> tuple[str, bool]:
    """The path as text, cut at the first sensitive place; and whether it reaches one.

    A location may hold a union's choice label (``str``, ``Card``) as well as
    keys and indexes, so every reading of each step is followed: a place is
    sensitive when any reading makes it so (over-redaction, never under).
    """
    parts: list[str] = []
    places = [node] if node is not None else []
    for part in loc:
        if any(place.whole for place in places):
            parts.append(PLACEHOLDER)
            return ".".join(parts), True
        parts.append(str(part))
        following: dict[int, SensitiveNode] = {}
        for place in places:
            if isinstance(part, str):
                child = place.keys.get(part)
                if child is not None:
                    following[id(child)] = child
                following[id(place)] = place  # the part may be a union's choice label
            if place.items is not None:
                following[id(place.items)] = place.items
        places = list(following.values())
    return ".".join(parts), any(place.whole for place in places)


def _reason(kind: str, message: str, submitted: object) -> str:
    """pydantic's message, unless it quotes the submitted value (then only the error type)."""
    if isinstance(submitted, str | bytes | int | float) and not isinstance(submitted, bool):
        text = (
            submitted.decode("utf-8", "replace") if isinstance(submitted, bytes) else str(submitted)
        )
        if len(text) >= 4 and text in message:
            return kind
    return message
