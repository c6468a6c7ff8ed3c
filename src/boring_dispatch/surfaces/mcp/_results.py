"""MCP tool results as plain data: the complete structured result and the audience filter.

The v6 reference's audience table, applied to every result::

    declared audience   text content          structuredContent.result
    machine             omit the stream       the complete stream
    human               include the stream    the complete stream
    both                include the stream    the complete stream

Text content is qualifying stdout, then qualifying stderr, one text block each;
exactly one empty text block when neither contributes text. Failures use the
same filter: a dispatcher error has no streams, so its text is the empty block
and the error lives in ``structuredContent.result.dispatcher.error`` only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from boring_dispatch.errors import RouteError, SetupRefusal
from boring_dispatch.observation import RETRYABLE_CODES
from boring_dispatch.records import ExecutionResult, Route, RouteRequest

__all__ = [
    "META_CODE",
    "META_RETRYABLE",
    "SHOWN_AUDIENCES",
    "TRACE_ID_META_KEY",
    "ToolOutcome",
    "display_texts",
    "dry_run_outcome",
    "error_outcome",
    "execution_outcome",
    "table_outcome",
]

#: Audiences whose streams appear in text content.
SHOWN_AUDIENCES: Final = frozenset({"human", "both"})
#: The result's ``_meta`` key that carries the call's trace id (reverse DNS, ours).
TRACE_ID_META_KEY: Final = "dev.boring-dispatch/trace_id"
#: The result's ``_meta`` keys: the outcome code, and whether other arguments can help.
META_CODE: Final = "boring-dispatch/code"
META_RETRYABLE: Final = "boring-dispatch/retryable"
_MACHINE_ONLY: Final[Mapping[str, str]] = {"stdout": "machine", "stderr": "machine"}


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """What one tool call returns: ``structuredContent``, text blocks and ``isError``."""

    structured: dict[str, object]
    #: Text blocks, in order; ``("",)`` when nothing qualifies (never empty).
    texts: tuple[str, ...]
    is_error: bool
    #: The call's trace id, also sent in the result's ``_meta`` (``None``: not traced).
    trace_id: str | None = None
    #: The result's ``_meta``: the code (``ok`` or the error code) for clients that only
    #: read ``isError``, and, for a table call, whether a retry with other arguments can help.
    meta: dict[str, object] | None = None

    def wire_meta(self) -> dict[str, object] | None:
        """The result's ``_meta`` as sent: :attr:`meta` and the trace id, or ``None``."""
        out = dict(self.meta or {})
        if self.trace_id is not None:
            out[TRACE_ID_META_KEY] = self.trace_id
        return out or None


def display_texts(stdout: str, stderr: str, audiences: Mapping[str, str]) -> tuple[str, ...]:
    """The text blocks of a result: human/both streams, stdout first, or one empty block.

    An audience that is missing from ``audiences`` or not one of the three
    values counts as ``machine`` (hidden).
    """
    blocks = tuple(
        text
        for stream, text in (("stdout", stdout), ("stderr", stderr))
        if text and audiences.get(stream) in SHOWN_AUDIENCES
    )
    return blocks or ("",)


def _route_metadata(route: Route) -> dict[str, object]:
    return {
        "caller_module_id": route.caller_module_id,
        "target": route.target,
        "target_module_id": route.target_module_id,
        "security_level": route.security_level,
        "output_audiences": dict(route.output_audiences),
        "warnings": [warning.to_dict() for warning in route.warnings],
    }


def _result(
    dispatcher: dict[str, object],
    *,
    stdout: str = "",
    stderr: str = "",
    exit_code: int | None = None,
) -> dict[str, object]:
    return {
        "result": {
            "stdout": stdout,
            "stderr": stderr,
            "exit_code": exit_code,
            "dispatcher": dispatcher,
        }
    }


def execution_outcome(route: Route, run: ExecutionResult, trace_id: str) -> ToolOutcome:
    """The result of a launched gateway: failed on a non-zero exit, a timeout or a cut stream."""
    dispatcher = _route_metadata(route)
    dispatcher.update(
        trace_id=trace_id,
        timed_out=run.timed_out,
        stdout_truncated=run.stdout_truncated,
        stderr_truncated=run.stderr_truncated,
    )
    failed = not run.ok
    return ToolOutcome(
        structured=_result(
            dispatcher, stdout=run.stdout, stderr=run.stderr, exit_code=run.exit_code
        ),
        texts=display_texts(run.stdout, run.stderr, route.output_audiences),
        is_error=failed,
        trace_id=trace_id,
    )


def dry_run_outcome(route: Route, payload: Mapping[str, object]) -> ToolOutcome:
    """The result of a dry run: nothing ran (``exit_code`` null), the payload under ``dry_run``."""
    dispatcher = _route_metadata(route)
    dispatcher["dry_run"] = dict(payload)
    return ToolOutcome(structured=_result(dispatcher), texts=("",), is_error=False)


def error_outcome(
    error: RouteError,
    *,
    request: RouteRequest | None,
    trace_id: str | None,
    route: Route | None = None,
) -> ToolOutcome:
    """The result of a refused request: no streams, the error object, the empty text block.

    ``request`` is the parsed projection's request (``None`` when the
    projection itself was refused); ``route`` is given when the refusal came
    after resolution (at launch).
    """
    if route is not None:
        dispatcher = _route_metadata(route)
    else:
        caller = error.caller_module_id or ("" if request is None else request.caller)
        dispatcher = {
            "caller_module_id": caller or None,
            "target": None if request is None else request.target,
            "target_module_id": error.target_module_id or None,
            "security_level": None,
            "output_audiences": dict(_MACHINE_ONLY),
            "warnings": [],
        }
    dispatcher["error"] = error.to_dict()
    if isinstance(error, SetupRefusal):
        dispatcher["setup"] = _setup_result(error, request, route)
    if trace_id is not None:
        dispatcher["trace_id"] = trace_id
    return ToolOutcome(
        structured=_result(dispatcher),
        texts=("",),
        is_error=True,
        trace_id=trace_id,
        meta={META_CODE: error.code, META_RETRYABLE: False},
    )


def _setup_result(
    error: SetupRefusal, request: RouteRequest | None, route: Route | None
) -> dict[str, object]:
    """``dispatcher.setup``: the status and, for required/managed, the manager request.

    The continuation resumes the **outer** call: this MCP request's caller,
    interface and version (the resolved version when it was not pinned).
    """
    from boring_dispatch.setup.continuation import manager_request

    payload = error.status()
    if request is None or error.code == "dispatcher.setup_busy":
        return payload
    if request.version is not None:
        version: int | None = request.version
    elif route is not None:
        version = route.interface_version
    else:
        version = error.interface_version or None
    payload["manager"] = manager_request(error, request.caller, request.target, version)
    return payload


def table_outcome(observation: Mapping[str, object], text: str, audience: str) -> ToolOutcome:
    """The result of a Python-table call: the observation, shown as text for human/both tools.

    Args:
        observation: the observation envelope (``Observation.to_dict()``).
        text: the envelope as JSON text (``Observation.to_json()``).
        audience: the tool's audience bit; ``machine`` for an unknown tool.
    """
    shown = audience in SHOWN_AUDIENCES and bool(text)
    error = observation.get("error")
    code = error.get("code") if isinstance(error, Mapping) else None
    code = code if type(code) is str else "ok"
    return ToolOutcome(
        structured={"result": dict(observation)},
        texts=(text,) if shown else ("",),
        is_error=observation.get("ok") is not True,
        meta={META_CODE: code, META_RETRYABLE: code in RETRYABLE_CODES},
    )
