"""The parent side of nested calls: a broker that decides them for the running route.

Every gateway process gets one end of a ``socketpair`` (runner option
``--broker-fd``); :meth:`Interface.dispatch` writes a request on it and reads
the reply. The request carries only what the gateway may choose::

    {"interface": str, "version": int, "positionals": [str], "options": {...},
     "stdin": null | base64 str}

Each message is a 4-byte big-endian length and that many bytes of JSON
(:mod:`boring_dispatch.process.wire`). The broker checks the message and the
time left; the decision is the injected :data:`NestedInvoke`, supplied by the
table that launched the route (the repository builds the request itself: the
caller is the route's terminal module, ``host`` is false, the level ceiling is
the route's derived level, 0 when that is unavailable, and the repository is
the route's configuration). Nothing the child sends or holds in memory can
change those. An unknown field
(``caller``, ``max_level``...), a wrong type or bad base64 is
``dispatcher.invalid_request``; a message over the size cap gets that reply
and ends the broker (the stream cannot be resynchronised). The nested call runs
captured, bounded by the outer call's remaining time and output caps; a
nested gateway gets its own broker, so nested-nested calls are decided the
same way. Each nested call is one level deeper than the gateway that asks, and
every launch of one top-level call counts against one budget
(:mod:`~boring_dispatch.process._admission`): both live in this process, so a
gateway that calls itself or fans out is refused with
``dispatcher.nested_limit_exceeded`` at ``ExecLimits.max_nested_depth`` or
``max_gateway_processes``. The reply is the :class:`~boring_dispatch.gateway.NestedResult`
fields or ``{"error": RouteError.to_dict()}``. A fault in the broker is
``dispatcher.internal_error``, never a crash of the dispatcher.
"""

from __future__ import annotations

import binascii
import json
import socket
import threading
import time
from collections.abc import Callable, Mapping
from contextlib import suppress
from typing import Final, TypeAlias

from boring_dispatch._value import replace, value
from boring_dispatch.errors import (
    InternalFailure,
    InvalidRouteRequest,
    RouteError,
    RuntimeMisconfigured,
)
from boring_dispatch.process._admission import CallTree, enter_nested
from boring_dispatch.process.wire import MessageTooLarge, read_message, write_message
from boring_dispatch.records import ExecLimits, ExecutionResult

__all__ = ["Broker", "NestedCall", "NestedInvoke"]

_KEYS: Final = frozenset({"interface", "version", "positionals", "options", "stdin"})
_JOIN_GRACE_S: Final = 10.0
_OVERHEAD: Final = 1 << 20


@value
class NestedCall:
    """What a gateway may choose about a nested call: never the caller or the level."""

    #: Export ID ``<module>.interface.<name>``.
    interface: str
    version: int
    positionals: tuple[str, ...]
    options: Mapping[str, object]


NestedInvoke: TypeAlias = Callable[[NestedCall, "bytes | None", ExecLimits], ExecutionResult]
"""Decide and run one nested call for the running route: ``(call, stdin, limits) -> result``.

Supplied by the table that launched the route; ``limits.timeout_s`` is the
time the outer call has left.
"""


class Broker:
    """Serves the nested calls of one running gateway, in a thread, until it goes away."""

    def __init__(
        self,
        invoke: NestedInvoke | None,
        limits: ExecLimits,
        deadline: float,
        chain: tuple[int, CallTree],
    ) -> None:
        self._invoke = invoke
        #: The running gateway's depth and its call tree (see ``_admission``).
        self._chain = chain
        self._limits = limits
        self._deadline = deadline
        self._cap = limits.max_stdin_bytes * 4 // 3 + _OVERHEAD
        self._parent, self._child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self._thread = threading.Thread(target=self._serve, name="gateway-broker", daemon=True)

    @property
    def child_fd(self) -> int:
        """The descriptor to pass to the child (``pass_fds``)."""
        return self._child.fileno()

    def start(self) -> None:
        """Close our copy of the child's end (the child has its own) and start serving."""
        self._child.close()
        self._thread.start()

    def close(self) -> None:
        """Stop serving and release both ends; waits for a nested call in progress (bounded)."""
        with suppress(OSError):
            self._parent.shutdown(socket.SHUT_RDWR)
        if self._thread.is_alive():
            self._thread.join(max(0.0, self._deadline - time.monotonic()) + _JOIN_GRACE_S)
        self._child.close()
        self._parent.close()

    def _serve(self) -> None:
        # This thread's launches are the running gateway's nested calls: one level deeper,
        # counted against the same top-level call (a fresh thread has a fresh context).
        enter_nested(*self._chain)
        try:
            self._serve_until_done()
        finally:
            # The child's next request (after an oversized one) sees EOF, never a silent hang.
            with suppress(OSError):
                self._parent.shutdown(socket.SHUT_RDWR)

    def _serve_until_done(self) -> None:
        while True:
            try:
                body = read_message(self._parent, self._cap)
            except MessageTooLarge:
                self._reply(_error(InvalidRouteRequest("broker message is too large")))
                return
            except OSError:
                return
            if body is None:
                return
            if not self._reply(self._answer(body)):
                return

    def _reply(self, payload: Mapping[str, object]) -> bool:
        try:
            write_message(self._parent, payload)
        except OSError:
            return False
        return True

    def _answer(self, body: bytes) -> dict[str, object]:
        try:
            return self._call(body)
        except RouteError as error:
            return _error(error)
        except Exception:  # noqa: BLE001 - a broker fault must never take the dispatcher down
            return _error(InternalFailure("the nested-call broker failed"))

    def _call(self, body: bytes) -> dict[str, object]:
        interface, version, positionals, options, data = _parse(body)
        if self._invoke is None:
            raise RuntimeMisconfigured("this launch accepts no nested calls")
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise InvalidRouteRequest("no time left for a nested call")
        call = NestedCall(
            interface=interface, version=version, positionals=tuple(positionals), options=options
        )
        result = self._invoke(call, data, replace(self._limits, timeout_s=remaining))
        return result.to_dict()


def _error(error: RouteError) -> dict[str, object]:
    return {"error": error.to_dict()}


def _parse(body: bytes) -> tuple[str, int, list[str], Mapping[str, object], bytes | None]:
    """The request fields, checked strictly.

    Raises:
        InvalidRouteRequest: not a JSON object of exactly the allowed fields
            with the right types.
    """
    try:
        fields = json.loads(body.decode("utf-8"))
    except ValueError:
        raise InvalidRouteRequest("broker message is not JSON") from None
    if not isinstance(fields, dict) or not set(fields) <= _KEYS or "interface" not in fields:
        raise InvalidRouteRequest("broker message has unknown or missing fields")
    interface = fields["interface"]
    version = fields.get("version", 1)
    positionals = fields.get("positionals", [])
    options = fields.get("options", {})
    stdin = fields.get("stdin")
    if (
        not isinstance(interface, str)
        or type(version) is not int
        or version < 1
        or not isinstance(positionals, list)
        or not isinstance(options, dict)
        or not (stdin is None or isinstance(stdin, str))
    ):
        raise InvalidRouteRequest("broker message has a field of the wrong type")
    data = None
    if stdin is not None:
        try:
            data = binascii.a2b_base64(stdin.encode("ascii"), strict_mode=True)
        except (ValueError, binascii.Error):
            raise InvalidRouteRequest("broker message stdin is not base64") from None
    return interface, version, positionals, options, data
