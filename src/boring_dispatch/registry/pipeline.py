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
confirm), ``invalid_arguments`` (also a non-finite number anywhere in the
validated arguments), and ``internal_error`` while an audit sink has failed
its last record. After the call: ``tool_error`` (the handler raised
:class:`ToolError`; a message that holds a sensitive value is replaced whole
by a fixed text), ``internal_error`` (any other exception, or a result that is
not JSON, such as a coroutine or a generator: the traceback goes to the
``boring_dispatch`` logger under a fresh correlation id, without the
exceptions' text when it holds a sensitive value, never into the observation)
and ``observation_too_large``.

The handler gets its own deep copy of the validated arguments; the sinks get
a JSON snapshot of the redacted arguments taken before the call; the
observation holds the result's checked JSON, decoded afresh. None of the
three shares an object with the others or with the caller.

"Any other exception" means every ``BaseException`` (``SystemExit``,
``KeyboardInterrupt``, ``GeneratorExit``, ``CancelledError``, subclasses): a
handler cannot stop the process that serves the table. The price: a Ctrl-C
while a handler runs on the main thread ends that call, not the program.

A result is JSON when it encodes, within the size cap, nested at most
:data:`MAX_RESULT_DEPTH` deep, and as UTF-8 (no lone surrogate, such as
``os.listdir()`` gives for a file name that is not UTF-8): what one surface
could not write, no surface returns.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, final

from boring_dispatch._json import StrictJSONError, strict_loads
from boring_dispatch._quote import shown
from boring_dispatch.errors import (
    Denied,
    InvalidArguments,
    InvalidRequest,
    NoFixture,
    ObservationTooLarge,
    TableError,
    ToolError,
    UnknownTool,
)
from boring_dispatch.observation import Observation
from boring_dispatch.observe.otel import enabled as otel_enabled
from boring_dispatch.observe.otel import tool_span
from boring_dispatch.observe.redact import (
    redact_invalid,
    sensitive_values,
)
from boring_dispatch.registry import _call_guards as guards
from boring_dispatch.registry import injected as _injected
from boring_dispatch.registry._exact import exact_arguments
from boring_dispatch.registry._outcomes import (
    MAX_RESULT_DEPTH,
    WITHHELD_MESSAGE,
    audit_unavailable,
    internal_error,
    new_correlation_id,
    tool_error,
    unfit_result,
)
from boring_dispatch.registry._trail import Trail, emit
from boring_dispatch.registry.records import AuditHealth, Entry, Request, Table, TableLimits

if TYPE_CHECKING:
    from boring_dispatch.registry.schema import ArgumentSchema

__all__ = [
    "MAX_RESULT_DEPTH",
    "WITHHELD_MESSAGE",
    "AuditHealth",
    "Entry",
    "Request",
    "Table",
    "TableLimits",
    "dispatch",
    "dispatch_args_json",
    "dispatch_json",
    "new_correlation_id",
    "parse_request",
]

_LOG: Final = logging.getLogger("boring_dispatch")
_ENCODER: Final = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":"))
_REQUEST_KEYS: Final = frozenset({"name", "args"})
_RECORDED_KEYS: Final = frozenset({"name", "args", "observation"})
_ARGUMENTS_MESSAGE: Final = "arguments do not match the tool's schema"


def dispatch(
    table: Table,
    name: object,
    args: object,
    *,
    confirmed: bool = False,
    context: Mapping[str, object] | None = None,
) -> Observation:
    """Run one call through the pipeline. Never raises for anything a caller sends.

    Refuses with ``invalid_request`` a name that is not exactly a ``str`` and
    arguments or a context that are not a mapping; with ``invalid_arguments``
    arguments that name an injected parameter; with ``denied`` a tool that needs
    confirmation when ``confirmed`` is not true; see the module docstring for the rest.
    ``context`` supplies the tool's injected parameters (a required one missing
    is ``internal_error``: the caller's fault, not the model's).
    """
    trail = Trail() if table.sinks else None
    return _dispatch(table, name, args, trail, _caller(confirmed, context))


def dispatch_json(table: Table, text: str | bytes) -> Observation:
    """Parse ``{"name": ..., "args": {...}}`` strictly, then :func:`dispatch` it.

    Refuses with ``invalid_request``: more than ``max_request_bytes`` (checked
    before parsing), nesting deeper than ``max_depth``, not UTF-8, not JSON,
    duplicate keys, NaN/Infinity and numbers beyond the float range (``1e400``),
    oversized integers, a non-object, members
    other than ``name``/``args``, a name that is not a string, args that are
    not an object. A missing ``args`` means ``{}``.
    """
    trail = Trail() if table.sinks else None
    try:
        request = parse_request(text, table.limits)
    except InvalidRequest as error:
        observation = Observation.from_error(error)
        if trail is not None:
            emit(table, trail, observation)
        return observation
    return _dispatch(table, request.name, request.args, trail)


def dispatch_args_json(
    table: Table,
    name: object,
    text: str | bytes,
    *,
    confirmed: bool = False,
    context: Mapping[str, object] | None = None,
) -> Observation:
    """Parse a model's argument text (one JSON object) strictly, then :func:`dispatch` it.

    The parser and limits of :func:`dispatch_json`; a refusal, or text that is
    not an object, is ``invalid_request`` (recorded by the sinks like any call).
    """
    trail = Trail() if table.sinks else None
    try:
        args = strict_loads(
            text, max_bytes=table.limits.max_request_bytes, max_depth=table.limits.max_depth
        )
    except StrictJSONError as error:
        args = InvalidRequest(str(error))
    if type(args) is not dict:
        refusal = (
            args
            if isinstance(args, InvalidRequest)
            else InvalidRequest("the arguments must be a JSON object")
        )
        observation = Observation.from_error(refusal)
        if trail is not None:
            trail.tool = name[:128] if type(name) is str else None
            emit(table, trail, observation)
        return observation
    return _dispatch(table, name, args, trail, _caller(confirmed, context))


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


@final
@dataclass(frozen=True, slots=True)
class _Caller:
    """What only the client decides for one call: its approval and the injected values."""

    confirmed: bool = False
    context: Mapping[str, object] | None = None


_MODEL_ONLY: Final = _Caller()  # shared by every call that is not confirmed and has no context


def _caller(confirmed: bool, context: Mapping[str, object] | None) -> _Caller:
    return _MODEL_ONLY if confirmed is False and context is None else _Caller(confirmed, context)


def _dispatch(
    table: Table, name: object, args: object, trail: Trail | None, caller: _Caller = _MODEL_ONLY
) -> Observation:
    if not otel_enabled():  # the common case pays for no span machinery at all
        return _dispatch_traced(table, name, args, trail, caller)
    # The span names the tool only once the table knows it (never a caller-chosen string).
    known = name if type(name) is str and name in table.entries else None
    with tool_span(known) as otel:
        observation = _dispatch_traced(table, name, args, trail, caller)
        if observation.error is not None:
            otel.fail(observation.error.code)
    return observation


def _dispatch_traced(
    table: Table, name: object, args: object, trail: Trail | None, caller: _Caller
) -> Observation:
    context = caller.context
    try:
        observation = _stages(table, name, args, trail, caller)
    except TableError as error:
        observation = Observation.from_error(error)
    except BaseException as error:  # noqa: BLE001 - a fault of the dispatcher itself is never ok
        # Also reached by an explicit model's validator raising something unexpected.
        observation = internal_error(
            table.surface, shown(name, 64), error, _secrets_of(table, name, args, context)
        )
    if trail is not None:
        emit(table, trail, observation)
    return observation


def _stages(
    table: Table, name: object, args: object, trail: Trail | None, caller: _Caller
) -> Observation:
    confirmed, context = caller.confirmed, caller.context
    name, args = _parse(name, args, trail)
    if context is not None and not isinstance(context, Mapping):
        raise InvalidRequest("context must be a mapping")
    entry = _look_up(table, name, args, trail)
    _refuse_injected(entry.schema, args, trail)
    if entry.confirm and confirmed is not True:
        if trail is not None:
            trail.args = guards.record_copy(
                redact_invalid(args, entry.schema.sensitive, entry.schema.accepted)
            )
        raise Denied(f"tool {shown(name, 64)} needs the client's confirmation")
    if entry.schema.injected.names:  # the caller's values get exact types too
        args = exact_arguments(_injected.merged(args, entry.schema.injected, context))
    kwargs = _validate(entry.schema, args, trail)
    secrets = sensitive_values(args, entry.schema.sensitive)
    if trail is not None:
        trail.note_arguments(entry.schema, args, secrets)
        if any(getattr(sink, "wants_fixture_args", False) is True for sink in table.sinks):
            trail.note_fixture_args(entry.schema, kwargs)
    if table.audit.failing:
        return audit_unavailable(table, name)
    return _call(table, name, entry, kwargs, secrets)


def _parse(name: object, args: object, trail: Trail | None) -> tuple[str, dict[str, object]]:
    """Stage 1: an exact ``str`` name and a mapping, made of exact JSON types (:mod:`._exact`)."""
    if type(name) is not str:
        raise InvalidRequest("name must be a string")
    if trail is not None:
        trail.tool = name[:128]
    if type(args) is not dict:
        if not isinstance(args, Mapping):
            raise InvalidRequest("args must be an object")
        args = dict(args)
    return name, exact_arguments(args)


def _look_up(table: Table, name: str, args: dict[str, object], trail: Trail | None) -> Entry:
    """Stage 2: one exact dict lookup is the only way from a name to code."""
    entry = table.entries.get(name)
    if entry is None:
        if trail is not None:
            trail.args = guards.record_copy(redact_invalid(args, None, None))
        raise UnknownTool(f"no tool named {shown(name, 64)}")
    return entry


def _refuse_injected(schema: ArgumentSchema, args: dict[str, object], trail: Trail | None) -> None:
    """Stage 2, continued: the model never names a parameter the caller supplies."""
    sent = _injected.sent_by_model(args, schema.injected)
    if sent:
        if trail is not None:
            trail.args = guards.record_copy(redact_invalid(args, schema.sensitive, schema.accepted))
        raise InvalidArguments(
            _ARGUMENTS_MESSAGE, tuple((name, _injected.SENT_BY_MODEL) for name in sent)
        )


def _validate(
    schema: ArgumentSchema, args: dict[str, object], trail: Trail | None
) -> dict[str, object]:
    """Stage 3: the handler is not reached unless the arguments fit the schema exactly."""
    try:
        return _handler_arguments(schema.validate(args))
    except InvalidArguments:
        if trail is not None:
            unknown = schema.unknown(args)
            trail.args = guards.record_copy(
                redact_invalid(args, schema.sensitive, schema.accepted, unknown)
            )
        raise


def _handler_arguments(kwargs: dict[str, object]) -> dict[str, object]:
    """Stage 3, continued: only finite numbers, and the handler's own copy of everything."""
    if guards.plain_arguments(kwargs):
        return kwargs  # a fresh dict of immutable values: already the handler's own
    bad = guards.non_finite_paths(kwargs)
    if bad:
        raise InvalidArguments(
            _ARGUMENTS_MESSAGE, tuple((path, guards.NON_FINITE_REASON) for path in bad)
        )
    copied, failed = guards.own_copy(kwargs)
    if failed:
        raise InvalidArguments(
            _ARGUMENTS_MESSAGE, tuple((key, guards.UNCOPYABLE_REASON) for key in failed)
        )
    return copied


def _call(  # noqa: PLR0911 - one return per outcome of the call stage
    table: Table, name: str, entry: Entry, kwargs: dict[str, object], secrets: tuple[str, ...]
) -> Observation:
    """Stages 5 and 6: call the handler, then make a small JSON-serializable observation."""
    try:
        result = entry.handler(**kwargs)
    except ToolError as error:
        return tool_error(table, name, str(error.message), secrets)
    except NoFixture as error:
        if entry.fixture:
            raise  # a fixture world has no answer: no_fixture, never a success
        return internal_error(table.surface, name, error, secrets)  # a real handler's is a fault
    except BaseException as error:  # noqa: BLE001 - every other exception
        # BaseException too: a handler's sys.exit(), KeyboardInterrupt, GeneratorExit or
        # CancelledError must not end (or wedge) the process that serves the table, and its
        # text must not reach stderr unredacted.
        return internal_error(table.surface, name, error, secrets)
    if guards.deferred(result):
        # Backstop of the build-time check: a coroutine is closed, never awaited.
        fault = TypeError("the handler returned a coroutine, an awaitable or a generator")
        return internal_error(table.surface, name, fault, secrets)
    try:
        text = _ENCODER.encode(result)
    except (TypeError, ValueError, RecursionError) as error:
        # A result that is not JSON is a handler bug: internal_error, logged.
        return internal_error(table.surface, name, error, secrets)
    size = len(text)
    cap = table.limits.max_observation_bytes
    if size > cap:
        raise ObservationTooLarge(f"the result is {size} bytes of JSON; the cap is {cap}")
    unfit = unfit_result(text, result)
    if unfit is not None:
        return internal_error(table.surface, name, unfit, secrets)
    # What was checked is what is kept: the JSON decoded afresh, not the handler's live object.
    return Observation.success(guards.checked_copy(result, text))


def _secrets_of(
    table: Table, name: object, args: object, context: Mapping[str, object] | None
) -> tuple[str, ...]:
    """Best effort, for faults outside the call: the sensitive values of a known tool."""
    entry = table.entries.get(name) if type(name) is str else None
    if entry is None or not isinstance(args, Mapping):
        return ()
    try:
        given = context if isinstance(context, Mapping) else {}
        names = entry.schema.injected.names
        args = {**args, **{k: v for k, v in given.items() if k in names}}
        return sensitive_values(exact_arguments(args), entry.schema.sensitive)
    except Exception:  # noqa: BLE001 - scrubbing must not turn one fault into two
        return ()
