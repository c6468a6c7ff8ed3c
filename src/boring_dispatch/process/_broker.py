"""The parent side of nested calls: a broker that decides them for the running route.

Every gateway process gets one end of a ``socketpair`` (runner option
``--broker-fd``); :meth:`Interface.dispatch` writes a request on it and reads
the reply. The request carries only what the gateway may choose::

    {"interface": str, "version": int, "positionals": [str], "options": {...},
     "stdin": null | base64 str}

Each message is a 4-byte big-endian length and that many bytes of JSON. The
parent builds the :class:`~boring_dispatch.types.RouteRequest` itself: the
caller is the route's terminal module, ``host`` is false, the level ceiling is
the route's derived level, and the repository is the route's configuration.
Nothing the child sends or holds in memory can change those. An unknown field
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
fields or ``{"error": RouteError.to_json()}``. A fault in the broker is
``dispatcher.internal_error``, never a crash of the dispatcher.
"""

from __future__ import annotations

import binascii
import json
import socket
import threading
import time
from collections.abc import Mapping
from contextlib import suppress
from typing import Final

from boring_dispatch._value import replace
from boring_dispatch.errors import InternalFailure, InvalidRouteRequest, RouteError
from boring_dispatch.process._admission import CallTree, enter_nested
from boring_dispatch.types import ExecLimits, Route, RouteRequest

__all__ = ["Broker", "read_message", "write_message"]

_HEADER_BYTES: Final = 4  # big-endian length
_KEYS: Final = frozenset({"interface", "version", "positionals", "options", "stdin"})
_JOIN_GRACE_S: Final = 10.0
_OVERHEAD: Final = 1 << 20


class MessageTooLarge(Exception):
    """The announced length is over the cap: the stream is unusable after it."""


def write_message(sock: socket.socket, payload: Mapping[str, object]) -> None:
    """Send one length-prefixed JSON message."""
    data = json.dumps(payload, ensure_ascii=False, allow_nan=False).encode("utf-8")
    sock.sendall(len(data).to_bytes(_HEADER_BYTES, "big") + data)


def read_message(sock: socket.socket, cap: int) -> bytes | None:
    """Receive one message body; ``None`` on a clean EOF before a header.

    Raises:
        MessageTooLarge: the announced length exceeds ``cap``.
        OSError: the socket failed, or EOF came inside a message.
    """
    header = _read_exact(sock, _HEADER_BYTES, eof_ok=True)
    if header is None:
        return None
    size = int.from_bytes(header, "big")
    if size > cap:
        raise MessageTooLarge
    return _read_exact(sock, size, eof_ok=False) or b""


def _read_exact(sock: socket.socket, size: int, *, eof_ok: bool) -> bytes | None:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(min(size - len(chunks), 1 << 16))
        if not chunk:
            if eof_ok and not chunks:
                return None
            raise ConnectionError("end of stream inside a message")
        chunks += chunk
    return bytes(chunks)


class Broker:
    """Serves the nested calls of one running gateway, in a thread, until it goes away."""

    def __init__(
        self,
        route: Route,
        limits: ExecLimits,
        trace_id: str | None,
        deadline: float,
        chain: tuple[int, CallTree],
    ) -> None:
        self._route = route
        #: The running gateway's depth and its call tree (see ``_admission``).
        self._chain = chain
        self._limits = limits
        self._trace_id = trace_id
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
        from boring_dispatch.blueprints.projection import projection_argv
        from boring_dispatch.blueprints.repository import Repository

        interface, version, positionals, options, data = _parse(body)
        route = self._route
        request = RouteRequest(
            caller=route.target_module_id,
            target=interface,
            version=version,
            argv=projection_argv(positionals, options),
            stdin=data is not None,
            host=False,
            max_level=route.security_level,
        )
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise InvalidRouteRequest("no time left for a nested call")
        limits = replace(self._limits, timeout_s=remaining)
        result = Repository(route.config_path).invoke(
            request, stdin=data, limits=limits, trace_id=self._trace_id
        )
        return result.to_json()


def _error(error: RouteError) -> dict[str, object]:
    return {"error": error.to_json()}


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
