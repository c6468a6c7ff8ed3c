"""What one line of the MCP server's stdin may be: strict JSON, checked before it is built.

:func:`read_message` turns one line into a JSON object or a :class:`Refusal`
(the JSON-RPC error the server answers with). Before parsing, the line's
shape is bounded: at most :data:`MAX_MESSAGE_ITEMS` values and keys and at
most :data:`MAX_MESSAGE_DEPTH` levels of nesting, counted outside strings
without building anything. Then the text must be UTF-8 JSON without duplicate
keys, ``NaN``/``Infinity``, numbers too large for a float, or lone surrogates
(``"\\ud800"``, which no UTF-8 writer can write back). A message's ``id``
must be a string or an integer of at most :data:`MAX_ID` in magnitude (JSON-RPC
ids are strings or numbers, and numbers SHOULD NOT have fractional parts; an
integer beyond 2**53 - 1 is not exact in most JSON readers).

A refusal carries the message's id when one can be recovered (from the parsed
object, or from the line's first or last bytes when it cannot be parsed), so
the client's waiting call ends; otherwise ``null``. No SDK import here.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Final, NoReturn

from boring_dispatch._json import holds_lone_surrogate
from boring_dispatch.surfaces.mcp._stdin import Oversized

__all__ = [
    "INVALID_REQUEST",
    "MAX_ID",
    "MAX_MESSAGE_DEPTH",
    "MAX_MESSAGE_ITEMS",
    "PARSE_ERROR",
    "Message",
    "Refusal",
    "read_message",
]

#: JSON-RPC 2.0: the text is not JSON.
PARSE_ERROR: Final = -32700
#: JSON-RPC 2.0: the JSON is not an acceptable message.
INVALID_REQUEST: Final = -32600
#: Values and keys in one message (``[``, ``{``, ``,`` and ``:`` outside strings, plus one).
MAX_MESSAGE_ITEMS: Final = 1 << 18
#: Nesting of ``[`` and ``{`` in one message: the envelope, plus a table's own arguments.
MAX_MESSAGE_DEPTH: Final = 64
#: The largest integer id, in magnitude (2**53 - 1: exact in every JSON reader).
MAX_ID: Final = (1 << 53) - 1

_EDGE_ID: Final = rb'(-?\d{1,16}(?![\d.eE])|"(?:[^"\\]|\\.){0,128}")'
_HEAD_ID: Final = re.compile(rb'\A\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*' + _EDGE_ID)
_TAIL_ID: Final = re.compile(rb'"id"\s*:\s*' + _EDGE_ID + rb"\s*\}\s*\Z")
# A string, possessively: never backtracks, and an unterminated one runs to the end.
_STRING: Final = re.compile(rb'"(?:[^"\\]++|\\.)*+\\?+(?:"|\Z)', re.DOTALL)
_SEPARATORS: Final = (b"[", b"{", b",", b":")
_SURROGATE_ESCAPE: Final = re.compile(rb"\\u[dD][89a-fA-F]")


@dataclass(frozen=True, slots=True)
class Refusal:
    """The error response for a message that cannot be served."""

    code: int
    message: str
    #: The message's id when it could be recovered and is a valid id, else ``None`` (``null``).
    request_id: str | int | None


@dataclass(frozen=True, slots=True)
class Message:
    """One parsed message, not yet checked against the JSON-RPC shapes."""

    value: dict[str, object]
    #: A request's or notification's id, when it has a valid one.
    request_id: str | int | None
    #: It has ``result`` or ``error`` and no ``method``: a response, which is never answered.
    is_response: bool


def read_message(line: bytes | Oversized, *, max_line_bytes: int) -> Message | Refusal | None:
    """One line of stdin as a :class:`Message`, or the :class:`Refusal` to answer it with.

    ``None`` for a response (``result`` or ``error``, no ``method``) that is
    malformed: a response is never answered, so it is dropped.
    """
    if isinstance(line, Oversized):
        too_large = f"the message is larger than {max_line_bytes} bytes"
        return Refusal(INVALID_REQUEST, too_large, _edge_id(line.head, line.tail))
    parsed = _parse(line)
    if isinstance(parsed, Refusal):
        return parsed
    value, keys = parsed
    if not isinstance(value, dict):
        return Refusal(INVALID_REQUEST, "a message is one JSON object (no batches)", None)
    is_response = "method" not in value and ("result" in value or "error" in value)
    request_id = value.get("id")
    if not _valid_id(request_id) or id(value) in keys.ambiguous_id:
        request_id = None
    problem = _problem(value, keys, line, request_id)
    if problem is not None:
        return None if is_response else problem
    return Message(value, request_id, is_response)


def _problem(
    value: dict[str, object], keys: _Keys, line: bytes, request_id: str | int | None
) -> Refusal | None:
    """What is wrong with a parsed message (``request_id``: its id, if valid), or ``None``."""
    if line.count(b"[") + line.count(b"{") > MAX_MESSAGE_DEPTH and _deeper_than_cap(value):
        return Refusal(INVALID_REQUEST, _TOO_DEEP, request_id)
    if keys.duplicated:
        return Refusal(INVALID_REQUEST, "the message has a duplicate key", request_id)
    if "id" in value and request_id is None:
        return Refusal(INVALID_REQUEST, _ID_RULE, None)
    if _SURROGATE_ESCAPE.search(line) and holds_lone_surrogate(value):
        return Refusal(PARSE_ERROR, "the message holds a lone surrogate", request_id)
    return None


def _parse(line: bytes) -> tuple[object, _Keys] | Refusal:
    """The JSON value of a line of at most :data:`MAX_MESSAGE_ITEMS` items, or why not."""

    def edge_id() -> str | int | None:  # only a refusal looks at the line's edges
        return _edge_id(line[:512], line[-512:])

    if _too_many_items(line):
        too_many = f"the message has more than {MAX_MESSAGE_ITEMS} values"
        return Refusal(INVALID_REQUEST, too_many, edge_id())
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return Refusal(PARSE_ERROR, "the message is not UTF-8", edge_id())
    keys = _Keys()
    try:
        value = json.loads(
            text,
            object_pairs_hook=keys.object,
            parse_float=_finite_float,
            parse_constant=_no_constant,
        )
    except RecursionError:
        return Refusal(INVALID_REQUEST, _TOO_DEEP, edge_id())
    except ValueError:
        return Refusal(PARSE_ERROR, "the message is not JSON", edge_id())
    return value, keys


_TOO_DEEP: Final = f"the message is nested deeper than {MAX_MESSAGE_DEPTH}"
_ID_RULE: Final = f"an id is a string or an integer of at most {MAX_ID} in magnitude"


def _valid_id(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return -MAX_ID <= value <= MAX_ID
    if isinstance(value, str):
        return not holds_lone_surrogate(value)
    return False


def _too_many_items(line: bytes) -> bool:
    """More than :data:`MAX_MESSAGE_ITEMS` values and keys, counted outside strings.

    Nothing is copied: the separators inside each string are counted in place
    and taken off, and every string is a value or a key, so more strings than
    the cap is too many already.
    """
    items = 1 + sum(map(line.count, _SEPARATORS))
    if items <= MAX_MESSAGE_ITEMS:
        return False
    for count, string in enumerate(_STRING.finditer(line), start=1):
        if count > MAX_MESSAGE_ITEMS:
            return True
        start, end = string.span()
        items -= sum(line.count(separator, start, end) for separator in _SEPARATORS)
    return items > MAX_MESSAGE_ITEMS


def _deeper_than_cap(value: object) -> bool:
    """Nesting of the parsed value beyond :data:`MAX_MESSAGE_DEPTH` (an iterative walk)."""
    pending: list[tuple[object, int]] = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict | list):
            if depth >= MAX_MESSAGE_DEPTH:
                return True
            members = item.values() if isinstance(item, dict) else item
            pending.extend((member, depth + 1) for member in members)
    return False


def _edge_id(head: bytes, tail: bytes) -> str | int | None:
    """The id written first (after ``jsonrpc``) or last in a message that cannot be parsed."""
    match = _HEAD_ID.match(head) or _TAIL_ID.search(tail.rstrip(b"\r\n"))
    if match is None:
        return None
    try:
        found = json.loads(match.group(1))
    except ValueError:
        return None
    return found if _valid_id(found) else None


class _Keys:
    """``object_pairs_hook`` that notes duplicate keys (and objects whose ``id`` is doubled)."""

    __slots__ = ("ambiguous_id", "duplicated")

    def __init__(self) -> None:
        self.duplicated = False
        self.ambiguous_id: set[int] = set()

    def object(self, pairs: list[tuple[str, object]]) -> dict[str, object]:
        result = dict(pairs)
        if len(result) != len(pairs):
            self.duplicated = True
            if sum(key == "id" for key, _ in pairs) > 1:
                self.ambiguous_id.add(id(result))
        return result


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError("a number too large for a float")
    return number


def _no_constant(name: str) -> NoReturn:
    raise ValueError(f"the non-standard number {name}")
