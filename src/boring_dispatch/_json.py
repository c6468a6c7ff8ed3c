"""Strict JSON for requests: what the stdlib accepts by default, we refuse.

``json.loads`` keeps the last of duplicate keys, accepts ``NaN``/``Infinity``
and lone surrogates (``"\\ud800"``, which no UTF-8 writer can write back),
turns a number literal beyond the float range (``1e400``) into ``inf``,
raises ``RecursionError`` on deep nesting and ``ValueError`` on huge integers.
:func:`strict_loads` refuses all of these with one exception type, after
checking the size before parsing and the depth before building objects.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Final, NoReturn

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_DEPTH",
    "StrictJSONError",
    "holds_lone_surrogate",
    "nested_deeper_than",
    "same_json",
    "strict_loads",
]

DEFAULT_MAX_BYTES: Final = 1 << 20
DEFAULT_MAX_DEPTH: Final = 32
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
#: A ``\\uD800``..``\\uDFFF`` escape (maybe half of a valid pair, maybe a lone surrogate).
_SURROGATE_ESCAPE: Final = re.compile(r"\\u[dD][89a-fA-F]")


class StrictJSONError(ValueError):
    """The text is not acceptable JSON for a request. The message names the reason only."""


def _plain_text(text: object) -> str | bytes:
    """``text`` as an exact ``str`` or ``bytes``, read through the base types' own methods.

    A subclass's ``__len__`` or ``encode`` never runs; a ``bytearray`` is its bytes.

    Raises:
        StrictJSONError: anything else (``None``, a number, a container, a memoryview).
    """
    kind = type(text)
    if kind is str or kind is bytes:
        return text  # type: ignore[return-value]
    if issubclass(kind, str):
        return str.__str__(text)
    if issubclass(kind, bytes | bytearray):
        return bytes(memoryview(text))  # type: ignore[arg-type]  # never its __bytes__
    raise StrictJSONError("request is not text (a str, or UTF-8 bytes)")


def strict_loads(
    text: str | bytes,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> object:
    """Parse ``text`` as one JSON value, refusing the hazards listed above.

    Raises:
        StrictJSONError: too large, too deep, not UTF-8, not JSON, duplicate
            keys, a non-finite number (``NaN``, ``Infinity`` or a literal that
            overflows a float, such as ``1e400``), or an integer beyond
            Python's digit limit.
    """
    text = _plain_text(text)
    if len(text) > max_bytes:
        raise StrictJSONError(f"request is larger than {max_bytes} bytes")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise StrictJSONError("request is not UTF-8") from None
    if nested_deeper_than(text, max_depth):
        raise StrictJSONError(f"request is nested deeper than {max_depth}")
    if _SURROGATE.search(text):
        raise StrictJSONError("request is not valid Unicode text")
    try:
        value = json.loads(
            text,
            object_pairs_hook=_unique_object,
            parse_constant=_no_constant,
            parse_float=_finite_float,
        )
    except StrictJSONError:
        raise
    except (ValueError, RecursionError):
        raise StrictJSONError("request is not valid JSON") from None
    if _SURROGATE_ESCAPE.search(text) and holds_lone_surrogate(value):
        raise StrictJSONError("request is not valid Unicode text")
    return value


def nested_deeper_than(text: str, max_depth: int) -> bool:
    """True when the JSON ``text`` nests ``[``/``{`` more than ``max_depth`` deep."""
    # Counting brackets is C-speed; the exact scan runs only when the count could exceed the cap.
    return text.count("[") + text.count("{") > max_depth and _depth(text) > max_depth


def holds_lone_surrogate(value: object) -> bool:
    """True when a string of a parsed JSON value (a key or a member) holds a lone surrogate.

    Such a string cannot be encoded as UTF-8: every writer of JSON text would fail on it.
    """
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            pending.extend(item)
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            pending.extend(item)
    return False


def _depth(text: str) -> int:
    """Upper bound of the nesting depth, counted outside strings, without parsing."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _unique_object(pairs: list[tuple[str, object]]) -> dict[str, object]:
    result: dict[str, object] = {}
    for key, value in pairs:
        if key in result:
            raise StrictJSONError("request has a duplicate key")
        result[key] = value
    return result


def _finite_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise StrictJSONError("request contains a number beyond the range of a float")
    return value


def _no_constant(name: str) -> NoReturn:
    raise StrictJSONError(f"request contains the non-standard number {name}")


def same_json(left: object, right: object) -> bool:
    """Whether two parsed JSON values are the same, type by type, at every depth.

    Python's ``==`` says ``True == 1 == 1.0``; here a boolean is never a
    number, and an integer literal (``1``) is not a fraction literal (``1.0``):
    Python's encoder writes them differently, so a recorded ``1`` that comes
    back as ``1.0`` is a changed result. ``0.0`` and ``-0.0`` differ too.
    Objects compare by key set and members (order ignored), arrays item by
    item. Iterative: any depth.
    """
    pending: list[tuple[Any, Any]] = [(left, right)]
    while pending:
        a, b = pending.pop()
        kind = type(a)
        if kind is not type(b):
            return False
        if kind is dict:
            if a.keys() != b.keys():
                return False
            pending.extend((a[key], b[key]) for key in a)
        elif kind is list:
            if len(a) != len(b):
                return False
            pending.extend(zip(a, b, strict=True))
        elif kind is float:
            if a != b or math.copysign(1.0, a) != math.copysign(1.0, b):
                return False
        elif a != b:
            return False
    return True
