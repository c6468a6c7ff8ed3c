"""The size checks of a tier tool's arguments, before the strict projection parses them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from boring_dispatch._limits import MAX_TOKEN_BYTES
from boring_dispatch.errors import InvalidRouteRequest
from boring_dispatch.records import RouteRequest

__all__ = ["MAX_NESTING", "MAX_PROJECTION_BYTES", "MAX_TOKEN_BYTES", "check_shape", "stdin_bytes"]

#: The projection without its stdin: the UTF-8 bytes of its strings (keys included).
MAX_PROJECTION_BYTES: Final = 1 << 20
#: projection -> arguments -> options -> list -> item is 4 deep.
MAX_NESTING: Final = 6


def check_shape(value: object) -> None:
    """Refuse a projection that is too large or too deeply nested before parsing it.

    Raises:
        InvalidRouteRequest: more than :data:`MAX_PROJECTION_BYTES` of text
            outside stdin, a string over :data:`MAX_TOKEN_BYTES`, or nesting
            deeper than :data:`MAX_NESTING`.
    """
    total = 0
    pending: list[tuple[object, int, bool]] = [(value, 0, False)]
    while pending:
        item, depth, is_stdin = pending.pop()
        total += 1  # every value costs something, so a long list of numbers is bounded too
        if depth > MAX_NESTING:
            raise InvalidRouteRequest("the projection is nested too deeply")
        if isinstance(item, str):
            if not is_stdin:
                size = len(item.encode("utf-8", "surrogatepass"))
                if size > MAX_TOKEN_BYTES:
                    raise InvalidRouteRequest(
                        f"a projection string is longer than {MAX_TOKEN_BYTES} bytes"
                    )
                total += size
        elif isinstance(item, Mapping):
            for key, member in item.items():
                stdin_member = depth == 1 and key == "stdin"
                pending.append((key, depth + 1, False))
                pending.append((member, depth + 1, stdin_member))
        elif isinstance(item, list):
            pending.extend((member, depth + 1, False) for member in item)
        if total > MAX_PROJECTION_BYTES:
            raise InvalidRouteRequest(f"the projection is larger than {MAX_PROJECTION_BYTES} bytes")


def stdin_bytes(text: str | None, cap: int, request: RouteRequest) -> bytes | None:
    """The stdin text as UTF-8, refused when it is not encodable or over ``cap`` bytes.

    Raises:
        InvalidRouteRequest: a lone surrogate, or more than ``cap`` bytes.
    """
    if text is None:
        return None
    data: bytes | None = None
    if len(text) <= cap:
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidRouteRequest(
                "stdin is not valid Unicode text", caller_module_id=request.caller
            ) from None
    if data is None or len(data) > cap:
        raise InvalidRouteRequest(
            f"stdin is larger than {cap} bytes", caller_module_id=request.caller
        )
    return data
