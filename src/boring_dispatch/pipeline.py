"""The Python table's pipeline, in one place and in one order.

::

    parse -> look up -> validate -> redact -> call -> observe

Nothing runs before it is validated, nothing is written before it is
redacted, and a name becomes code only through one exact dictionary lookup:
there is no ``getattr``, ``globals()``, import or ``eval`` of a requested name
anywhere on this path. Every outcome is an :class:`Observation`; an exception
never yields ``ok: true``.

Refusals (handler never called): ``invalid_request``, ``unknown_tool``,
``denied`` (a tool built with ``confirm=True`` that the client did not
confirm), ``invalid_arguments``. After the call: ``tool_error`` (the handler raised
:class:`ToolError`; sensitive values scrubbed from its message),
``internal_error`` (any other exception, ``SystemExit`` included, or a result that is not JSON: the
traceback goes to the ``boring_dispatch`` logger under a fresh correlation
id, scrubbed of sensitive values, never into the observation) and
``observation_too_large``. A result is JSON when it encodes, within the size
cap, nested at most :data:`MAX_RESULT_DEPTH` deep, and as UTF-8 (no lone
surrogate, such as ``os.listdir()`` gives for a file name that is not UTF-8):
what one surface could not write, no surface returns.
"""

from __future__ import annotations

import json
import logging
import os
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, final

from boring_dispatch._json import StrictJSONError, nested_deeper_than, strict_loads
from boring_dispatch.errors import (
    Denied,
    InvalidArguments,
    InvalidRequest,
    ObservationTooLarge,
    TableError,
    ToolError,
    UnknownTool,
)
from boring_dispatch.observation import Observation
from boring_dispatch.observe.audit import AuditEvent, AuditSink
from boring_dispatch.observe.redact import (
    PLACEHOLDER,
    redact,
    redact_invalid,
    scrub,
    sensitive_values,
)

if TYPE_CHECKING:
    from boring_dispatch.table.schema import ArgumentSchema

__all__ = [
    "MAX_RESULT_DEPTH",
    "Entry",
    "Request",
    "Table",
    "TableLimits",
    "dispatch",
    "dispatch_json",
    "new_correlation_id",
    "parse_request",
]

_LOG: Final = logging.getLogger("boring_dispatch")
_ENCODER: Final = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":"))
_UTF8_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
#: Deepest nesting of ``[`` and ``{`` in a handler's result; deeper is ``internal_error``
#: (JSON writers have their own limits, the MCP SDK's is near 250 with its envelope).
MAX_RESULT_DEPTH: Final = 64
_CROCKFORD: Final = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_REQUEST_KEYS: Final = frozenset({"name", "args"})
_RECORDED_KEYS: Final = frozenset({"name", "args", "observation"})


@final
@dataclass(frozen=True, slots=True)
class TableLimits:
    """Caps of one table. Every one of them refuses; none truncates silently."""

    #: Largest ``dispatch_json`` request (bytes, or characters for ``str``), checked before parsing.
    max_request_bytes: int = 1 << 20
    #: Deepest nesting of ``[`` and ``{`` in a ``dispatch_json`` request.
    max_depth: int = 32
    #: Largest result, as compact ASCII JSON: beyond it, ``observation_too_large``.
    max_observation_bytes: int = 64 << 10
    #: ``tool_error`` messages are cut to this many characters.
    max_message_chars: int = 2000

    def __post_init__(self) -> None:
        for value in (
            self.max_request_bytes,
            self.max_depth,
            self.max_observation_bytes,
            self.max_message_chars,
        ):
            if type(value) is not int or value < 1:
                raise ValueError("every table limit is a positive int")


@final
@dataclass(frozen=True, slots=True)
class Entry:
    """One row of a built table: the handler and its checked schema."""

    handler: Callable[..., object]
    schema: ArgumentSchema
    #: Policy bit: the client (never the model's text) must confirm each call.
    confirm: bool = False


@final
@dataclass(frozen=True, slots=True)
class Table:
    """The frozen state a Registry hands to the pipeline."""

    surface: str
    entries: Mapping[str, Entry]
    limits: TableLimits
    sinks: tuple[AuditSink, ...]


@final
@dataclass(frozen=True, slots=True)
class Request:
    """A parsed request: a string name, an arguments object, maybe a recorded observation."""

    name: str
    args: dict[str, object]
    observation: dict[str, object] | None = None


class _Trail:
    """What the sinks will be told; exists only when the table has sinks."""

    __slots__ = ("args", "clock", "secrets", "started", "tool")

    def __init__(self) -> None:
        self.started = time.time()
        self.clock = time.perf_counter()
        self.tool: str | None = None
        self.args: dict[str, object] | None = None
        self.secrets: tuple[str, ...] = ()


def dispatch(table: Table, name: object, args: object, *, confirmed: bool = False) -> Observation:
    """Run one call through the pipeline. Never raises for anything a caller sends.

    Refuses with ``invalid_request`` a name that is not exactly a ``str`` and
    arguments that are not a mapping; with ``denied`` a tool that needs
    confirmation when ``confirmed`` is not true; see the module docstring for the rest.
    """
    return _dispatch(table, name, args, _Trail() if table.sinks else None, confirmed)


def dispatch_json(table: Table, text: str | bytes) -> Observation:
    """Parse ``{"name": ..., "args": {...}}`` strictly, then :func:`dispatch` it.

    Refuses with ``invalid_request``: more than ``max_request_bytes`` (checked
    before parsing), nesting deeper than ``max_depth``, not UTF-8, not JSON,
    duplicate keys, NaN/Infinity, oversized integers, a non-object, members
    other than ``name``/``args``, a name that is not a string, args that are
    not an object. A missing ``args`` means ``{}``.
    """
    trail = _Trail() if table.sinks else None
    try:
        request = parse_request(text, table.limits)
    except InvalidRequest as error:
        observation = Observation.from_error(error)
        if trail is not None:
            _emit(table, trail, observation)
        return observation
    return _dispatch(table, request.name, request.args, trail)


def parse_request(text: str | bytes, limits: TableLimits, *, recorded: bool = False) -> Request:
    """Parse one request (or, with ``recorded``, one trace line that may carry an observation).

    Raises:
        InvalidRequest: for every refusal listed in :func:`dispatch_json`.
    """
    try:
        data = strict_loads(text, max_bytes=limits.max_request_bytes, max_depth=limits.max_depth)
    except StrictJSONError as error:
        raise InvalidRequest(str(error)) from None
    if type(data) is not dict:
        raise InvalidRequest("a request must be a JSON object")
    if not data.keys() <= (_RECORDED_KEYS if recorded else _REQUEST_KEYS):
        raise InvalidRequest("a request has only the members name and args")
    name, args, observation = data.get("name"), data.get("args", {}), data.get("observation")
    if type(name) is not str:
        raise InvalidRequest("name must be a string")
    if type(args) is not dict:
        raise InvalidRequest("args must be an object")
    if observation is not None and type(observation) is not dict:
        raise InvalidRequest("a recorded observation must be an object")
    return Request(name, args, observation)


def _dispatch(
    table: Table, name: object, args: object, trail: _Trail | None, confirmed: bool = False
) -> Observation:
    try:
        observation = _stages(table, name, args, trail, confirmed)
    except TableError as error:
        observation = Observation.from_error(error)
    except Exception as error:  # noqa: BLE001 - a fault of the dispatcher itself is never ok
        # Also reached by an explicit model's validator raising something unexpected.
        observation = _internal_error(
            table.surface, _shown(name), error, _secrets_of(table, name, args)
        )
    if trail is not None:
        _emit(table, trail, observation)
    return observation


def _stages(
    table: Table, name: object, args: object, trail: _Trail | None, confirmed: bool
) -> Observation:
    name, args = _parse(name, args, trail)
    entry = _look_up(table, name, args, trail)
    if entry.confirm and confirmed is not True:
        if trail is not None:
            trail.args = redact_invalid(args, entry.schema.sensitive, entry.schema.accepted)
        raise Denied(f"tool {_shown(name)} needs the client's confirmation")
    kwargs = _validate(entry.schema, args, trail)
    if trail is not None:
        _redact(entry.schema, args, trail)
    return _call(table, name, entry, kwargs, args)


def _parse(name: object, args: object, trail: _Trail | None) -> tuple[str, dict[str, object]]:
    """Stage 1: exactly a ``str`` name (no subclass with its own ``__eq__``) and a mapping."""
    if type(name) is not str:
        raise InvalidRequest("name must be a string")
    if trail is not None:
        trail.tool = name[:128]
    if type(args) is not dict:
        if not isinstance(args, Mapping):
            raise InvalidRequest("args must be an object")
        args = dict(args)
    return name, args


def _look_up(table: Table, name: str, args: dict[str, object], trail: _Trail | None) -> Entry:
    """Stage 2: one exact dict lookup is the only way from a name to code."""
    entry = table.entries.get(name)
    if entry is None:
        if trail is not None:
            trail.args = redact_invalid(args, None, None)
        raise UnknownTool(f"no tool named {_shown(name)}")
    return entry


def _validate(
    schema: ArgumentSchema, args: dict[str, object], trail: _Trail | None
) -> dict[str, object]:
    """Stage 3: the handler is not reached unless the arguments fit the schema exactly."""
    try:
        return schema.validate(args)
    except InvalidArguments:
        if trail is not None:
            unknown = schema.unknown(args)
            trail.args = redact_invalid(args, schema.sensitive, schema.accepted, unknown)
        raise


def _redact(schema: ArgumentSchema, args: dict[str, object], trail: _Trail) -> None:
    """Stage 4: what sinks will see, redacted before the call (which may not return)."""
    redacted = redact(args, schema.sensitive)
    trail.args = redacted if isinstance(redacted, dict) else {}
    trail.secrets = sensitive_values(args, schema.sensitive)


def _call(
    table: Table, name: str, entry: Entry, kwargs: dict[str, object], args: dict[str, object]
) -> Observation:
    """Stages 5 and 6: call the handler, then make a small JSON-serializable observation."""
    try:
        result = entry.handler(**kwargs)
    except ToolError as error:
        secrets = sensitive_values(args, entry.schema.sensitive)
        message = _utf8_text(scrub(str(error.message), secrets))[: table.limits.max_message_chars]
        return Observation.failure(ToolError.code, message)
    except (Exception, SystemExit) as error:  # noqa: BLE001 - every other exception
        # SystemExit too: a handler calling sys.exit() must not end the process that serves
        # the table (an MCP server). KeyboardInterrupt still propagates.
        return _internal_error(
            table.surface, name, error, sensitive_values(args, entry.schema.sensitive)
        )
    try:
        text = _ENCODER.encode(result)
    except (TypeError, ValueError, RecursionError) as error:
        # A result that is not JSON is a handler bug: internal_error, logged.
        return _internal_error(
            table.surface, name, error, sensitive_values(args, entry.schema.sensitive)
        )
    cap = table.limits.max_observation_bytes
    if len(text) > cap:
        raise ObservationTooLarge(f"the result is {len(text)} bytes of JSON; the cap is {cap}")
    unfit = _unfit_result(text, result)
    if unfit is not None:
        return _internal_error(
            table.surface, name, unfit, sensitive_values(args, entry.schema.sensitive)
        )
    return Observation.success(result)


def _unfit_result(text: str, result: object) -> ValueError | None:
    """Why a result that encodes as ASCII JSON (``text``) is still not JSON every surface can write.

    Nested deeper than :data:`MAX_RESULT_DEPTH`, or a lone surrogate: ASCII JSON
    shows one as a ``\\udXXX`` escape, but UTF-8 cannot encode it.
    """
    if nested_deeper_than(text, MAX_RESULT_DEPTH):
        return ValueError(f"the result is nested deeper than {MAX_RESULT_DEPTH}")
    if "\\ud" in text:  # a surrogate escape (or the text "\\ud"): check the UTF-8 encoding
        try:
            _UTF8_ENCODER.encode(result).encode("utf-8")
        except UnicodeEncodeError:
            return ValueError("the result holds a lone surrogate (text that is not UTF-8)")
    return None


def _utf8_text(text: str) -> str:
    """``text`` with each lone surrogate shown as its escape (``\\udce9``): UTF-8 can encode it."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _secrets_of(table: Table, name: object, args: object) -> tuple[str, ...]:
    """Best effort, for faults outside the call: the sensitive values of a known tool."""
    entry = table.entries.get(name) if type(name) is str else None
    if entry is None or not isinstance(args, Mapping):
        return ()
    try:
        return sensitive_values(args, entry.schema.sensitive)
    except Exception:  # noqa: BLE001 - scrubbing must not turn one fault into two
        return ()


def _internal_error(
    surface: str, tool: str, error: BaseException, secrets: tuple[str, ...]
) -> Observation:
    correlation_id = new_correlation_id()
    text = scrub("".join(traceback.format_exception(error)), secrets)
    # The record holds the scrubbed traceback text only: no exc_info, no arguments.
    _LOG.error(
        "internal_error surface=%s tool=%s correlation_id=%s\n%s",
        surface,
        tool,
        correlation_id,
        text,
    )
    return Observation.failure("internal_error", "internal error", correlation_id=correlation_id)


def _emit(table: Table, trail: _Trail, observation: Observation) -> None:
    if trail.secrets and observation.ok:
        observation = _scrub_result(observation, trail.secrets)
    event = AuditEvent(
        time=trail.started,
        surface=table.surface,
        tool=trail.tool,
        outcome=observation.code,
        duration_ms=(time.perf_counter() - trail.clock) * 1000.0,
        args=trail.args,
        observation=observation,
    )
    for sink in table.sinks:
        try:
            sink.record(event)
        except Exception as error:  # noqa: BLE001 - a sink never changes the outcome
            _LOG.warning("audit sink %s failed: %s", type(sink).__name__, type(error).__name__)


def _scrub_result(observation: Observation, secrets: tuple[str, ...]) -> Observation:
    """The observation as sinks see it: a result that echoes a secret is scrubbed."""
    text = _ENCODER.encode(observation.result)
    scrubbed = scrub(text, secrets)
    if scrubbed == text:
        return observation
    try:
        return Observation.success(json.loads(scrubbed))
    except ValueError:
        return Observation.success(PLACEHOLDER)


def new_correlation_id() -> str:
    """A fresh ULID-like id: 26 Crockford base-32 characters, time-ordered (ms), 80 random bits."""
    value = (time.time_ns() // 1_000_000) << 80 | int.from_bytes(os.urandom(10), "big")
    return "".join(_CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))


def _shown(name: object) -> str:
    """A requested name as it may appear in messages and logs: ``repr``, cut to 64 characters."""
    if type(name) is not str:
        return f"<{type(name).__name__}>"
    return repr(name[:64]) + ("..." if len(name) > 64 else "")
