"""The implementation of the gateway authoring API (public as :mod:`boring_dispatch.gateway`).

Runs in the child process. It stays light: importing it never imports
pydantic, mcp or the tables. A nested call (:meth:`Interface.dispatch`) is
decided by the dispatcher process, not here: the gateway sends only the
interface, version, arguments and stdin on the broker descriptor the runner
was given (:mod:`boring_dispatch.process.wire`), and the parent resolves the
call as the running route's module under its level.
"""

from __future__ import annotations

import _thread
import abc
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from boring_dispatch.process.context import RuntimeContext, runtime_context

if TYPE_CHECKING:
    import argparse

    from boring_dispatch.records import ExecutionResult as NestedResult

__all__ = ["ArgvInterface", "Interface", "NestedResult"]


_BROKER_LOCK = _thread.allocate_lock()  # one request and its reply at a time
#: The reply may hold two capped streams, JSON-escaped.
_REPLY_OVERHEAD = 1 << 20


def __getattr__(name: str) -> object:
    # ``NestedResult`` (the outcome of :meth:`Interface.dispatch`) is the same record as any
    # captured run, :class:`boring_dispatch.records.ExecutionResult`: exit code, streams,
    # truncation and timeout flags, ``ok``. Resolved lazily so that a gateway that never
    # dispatches does not load the dispatcher's types.
    if name == "NestedResult":
        from boring_dispatch.records import ExecutionResult

        return ExecutionResult
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _Gateway:
    """What both gateway kinds share: nested dispatch under the running identity."""

    def dispatch(
        self,
        interface: str,
        version: int = 1,
        positionals: Sequence[str] = (),
        options: Mapping[str, object] | None = None,
        stdin: bytes | str | None = None,
    ) -> NestedResult:
        """Call another exported interface through the same pipeline.

        The dispatcher process decides the call, not this process: it makes the
        running route's terminal module the caller and the route's level the
        ceiling, and uses the route's repository configuration. There is no
        parameter (and no field in the broker request) to claim another
        identity, and rewriting the runtime context changes nothing. The
        version is always pinned, resolution runs in nested mode (no
        top-level-skill requirement), output is captured with this call's
        caps, and the call cannot outlive this one's deadline.

        Args:
            interface: Export ID ``<module>.interface.<name>``.
            version: The pinned interface version.
            positionals: Positional arguments, in order.
            options: ``{flag: value}`` compiled by ``projection_argv``.
            stdin: Bytes (or text, sent as UTF-8) for the nested gateway, sent
                only when its binding accepts stdin; ``None`` for empty stdin.

        Returns:
            The nested call's exit code and captured streams.

        Raises:
            RuntimeMisconfigured: not running inside a gateway process (no
                broker), or the broker is gone.
            InvalidRouteRequest: an argument is not a JSON value, or no time
                is left (the same code the parent's broker answers with).
            RouteError: the nested request is refused: the subclass of the
                ``dispatcher.*`` code the parent replied with.
        """
        from boring_dispatch.errors import InvalidRouteRequest, RuntimeMisconfigured

        context = runtime_context()
        if context is None or context.broker_fd is None:
            raise RuntimeMisconfigured("nested dispatch is available only inside a gateway")
        if context.deadline - time.monotonic() <= 0:
            raise InvalidRouteRequest("no time left for a nested call")
        data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
        return _ask_broker(
            context,
            {
                "interface": interface,
                "version": version,
                "positionals": list(positionals),
                "options": dict(options or {}),
                "stdin": None if data is None else _base64(data),
            },
        )


def _base64(data: bytes) -> str:
    import binascii

    return binascii.b2a_base64(data, newline=False).decode("ascii")


def _ask_broker(context: RuntimeContext, request: dict[str, object]) -> NestedResult:
    """Send one request to the parent's broker and turn its reply into a result or an error."""
    import json
    import socket

    from boring_dispatch.errors import InvalidRouteRequest, RuntimeMisconfigured
    from boring_dispatch.process.wire import read_message, write_message

    if context.broker_fd is None:
        raise RuntimeMisconfigured("nested dispatch is available only inside a gateway")
    try:
        json.dumps(request, allow_nan=False)
    except (TypeError, ValueError):
        raise InvalidRouteRequest("nested call arguments must be JSON values") from None
    cap = 12 * context.max_output_bytes + _REPLY_OVERHEAD
    # A socket object over the inherited descriptor, not owning it (detached after use).
    with _BROKER_LOCK:
        sock = socket.socket(fileno=context.broker_fd)
        try:
            write_message(sock, request)
            body = read_message(sock, cap)
        except Exception as error:
            raise RuntimeMisconfigured("the dispatcher's nested-call broker is gone") from error
        finally:
            sock.detach()
    if body is None:
        raise RuntimeMisconfigured("the dispatcher's nested-call broker is gone")
    try:
        return _result(json.loads(body.decode("utf-8")))
    except (ValueError, KeyError) as error:
        from boring_dispatch.errors import InternalFailure

        raise InternalFailure("the nested-call broker sent a malformed reply") from error


def _result(reply: object) -> NestedResult:
    from boring_dispatch import errors

    if not isinstance(reply, dict):
        raise errors.InternalFailure("the nested-call broker sent a malformed reply")
    if "error" in reply:
        raise _route_error(reply["error"])
    from boring_dispatch.records import ExecutionResult

    return ExecutionResult(
        exit_code=reply["exit_code"],
        stdout=reply["stdout"],
        stderr=reply["stderr"],
        stdout_truncated=reply["stdout_truncated"],
        stderr_truncated=reply["stderr_truncated"],
        timed_out=reply["timed_out"],
    )


def _route_error(payload: object) -> Exception:
    """The :class:`~boring_dispatch.errors.RouteError` subclass whose ``code`` the reply names."""
    from boring_dispatch import errors

    if not isinstance(payload, dict):
        return errors.InternalFailure("the nested-call broker sent a malformed error")
    classes = {
        cls.code: cls
        for name in errors.__all__
        if isinstance(cls := vars(errors)[name], type) and issubclass(cls, errors.RouteError)
    }
    error_class = classes.get(str(payload.get("code")), errors.InternalFailure)
    interface_id = payload.get("interface_id")
    return error_class(
        str(payload.get("message", "")),
        caller_module_id=str(payload.get("caller_module_id", "")),
        target_module_id=str(payload.get("target_module_id", "")),
        interface_id=interface_id if isinstance(interface_id, str) else None,
    )


class Interface(_Gateway, abc.ABC):
    """A gateway whose arguments are parsed by the parser it builds."""

    @abc.abstractmethod
    def build_parser(self) -> argparse.ArgumentParser:
        """Return the parser of this interface's argv (argparse exits 2 on bad usage)."""

    @abc.abstractmethod
    def run(self, args: argparse.Namespace) -> int | bool | None:
        """Do the work. ``None``/``True`` -> exit 0, ``False`` -> 1, an int 0..255 -> itself."""


class ArgvInterface(_Gateway, abc.ABC):
    """A gateway that receives the raw argument list (after the runner's ``--``)."""

    @abc.abstractmethod
    def run(self, argv: list[str]) -> int | bool | None:
        """Do the work. ``None``/``True`` -> exit 0, ``False`` -> 1, an int 0..255 -> itself."""
