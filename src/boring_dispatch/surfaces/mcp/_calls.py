"""What one MCP tool call does, for either table (no SDK import; runs in a worker thread).

Repository tools: size checks, the strict projection (host caller, tool tier),
the server's caller binding (``--caller``), then resolve (tier gate, authorize,
bind) and, unless it is a dry run, the captured launch. :meth:`RepositoryCalls.prepare`
does everything up to the launch and returns a :class:`Launch` for the server to
run once it holds a slot. Every refusal is a :class:`~boring_dispatch.errors.RouteError`
turned into a structured result; any other exception (``BaseException``: this
runs in worker threads, where no signal arrives) becomes
``dispatcher.internal_error`` without its text. Nothing here raises.

Spans (non-dry calls only): ``mcp.tool_call`` for the whole call and
``dispatcher.resolve`` for resolve/authorize/bind; the launcher adds
``dispatcher.process`` and the child's runner ``gateway.interface``, all under
the call's trace id. Span identifiers are the resolved route's canonical IDs,
never the caller's raw strings, and a span's status is a code, never text.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from boring_dispatch.errors import (
    HostCallerInvalid,
    InternalFailure,
    InvalidRouteRequest,
    RouteError,
    RuntimeMisconfigured,
)
from boring_dispatch.observation import Observation
from boring_dispatch.observe.trace import Span, write_span
from boring_dispatch.records import ExecLimits, ExecutionResult, Route, RouteRequest
from boring_dispatch.repository.projection import parse_projection
from boring_dispatch.repository.repository import Repository, dry_run_payload
from boring_dispatch.surfaces.mcp._manager import (
    ManagerLaunch,
    is_manager_call,
    launches_gateways,
    manager_outcome,
)
from boring_dispatch.surfaces.mcp._results import (
    ToolOutcome,
    dry_run_outcome,
    error_outcome,
    execution_outcome,
    table_outcome,
)
from boring_dispatch.surfaces.mcp._shape import (
    MAX_NESTING,
    MAX_PROJECTION_BYTES,
    MAX_TOKEN_BYTES,
    check_shape,
    stdin_bytes,
)
from boring_dispatch.surfaces.mcp._tools import tier_of

if TYPE_CHECKING:
    from boring_dispatch.registry.registry import Registry

__all__ = [
    "MAX_NESTING",
    "MAX_PROJECTION_BYTES",
    "MAX_TOKEN_BYTES",
    "Launch",
    "ManagerLaunch",
    "RepositoryCalls",
    "TableCalls",
    "bound_callers",
]


@dataclass(slots=True)
class _Clock:
    wall: float = field(default_factory=time.time)
    began: float = field(default_factory=time.perf_counter)

    def span(self, name: str, trace_id: str | None, status: str, route: Route | None) -> None:
        if trace_id is None:
            return
        write_span(
            Span(
                trace_id=trace_id,
                name=name,
                start=self.wall,
                duration_ms=(time.perf_counter() - self.began) * 1000.0,
                status=status,
                interface_id=None if route is None else route.target,
                module_id=None if route is None else route.target_module_id,
                caller_module_id=None if route is None else route.caller_module_id,
            )
        )


def _log_internal_error(error: BaseException) -> str:
    """Log a dispatcher bug under a fresh correlation id; return the id.

    The log line holds the exception's type and its traceback frames (file, line,
    function, source line), never the exception's text, which may hold argument
    values. It is one escaped line (no newline, control or bidi character of a
    type name or source line gets through) and goes to the ``boring_dispatch``
    logger (stderr unless configured).
    """
    import logging
    import traceback

    from boring_dispatch.observe._logtext import log_text
    from boring_dispatch.registry.pipeline import new_correlation_id

    correlation_id = new_correlation_id()
    frames = "".join(traceback.format_tb(error.__traceback__))
    logging.getLogger("boring_dispatch").error(
        "dispatcher mcp: internal_error correlation_id=%s type=%s frames=%s",
        correlation_id,
        log_text(type(error).__name__),
        log_text(frames.rstrip("\n")),
    )
    return correlation_id


class RepositoryCalls:
    """The three tier tools over one repository.

    ``callers``, when given, are the only projection callers this server may
    act for (``dispatcher mcp --caller``): any other caller is refused with
    ``dispatcher.host_caller_invalid`` before anything is resolved.
    """

    __slots__ = ("_callers", "_limits", "_repository")

    def __init__(
        self,
        repository: Repository,
        limits: ExecLimits | None = None,
        *,
        callers: frozenset[str] | None = None,
    ) -> None:
        self._repository = repository
        self._limits = limits or ExecLimits()
        self._callers = callers

    def call(self, name: str, arguments: object, *, trace_id: str) -> ToolOutcome:
        """Run one tool call; a dry run's result and spans carry no trace id."""
        step = self.prepare(name, arguments, trace_id=trace_id)
        return step if isinstance(step, ToolOutcome) else step.run()

    def prepare(
        self, name: str, arguments: object, *, trace_id: str
    ) -> ToolOutcome | Launch | ManagerLaunch:
        """Everything before the launch: the result of a dry run or a refusal, or the launch.

        Only a :class:`Launch` (or a live manager route that launches gateways, a
        :class:`ManagerLaunch`) needs one of the server's call slots; the rest
        (parsing, resolving, dry runs, refusals) never waits for one.
        """
        clock = _Clock()
        traced: str | None = trace_id
        route: Route | None = None
        request: RouteRequest | None = None
        try:
            tier = _tier(name)
            check_shape(arguments)
            projection = parse_projection(arguments, host=True, tier=tier)
            self._check_caller(projection.request.caller)
            request = projection.request
            if is_manager_call(request):
                traced = None if projection.dry_run else traced
                route_call = functools.partial(
                    manager_outcome, self._repository, projection, arguments, tier, trace_id
                )
                answer = functools.partial(_answered, route_call, self._limits, clock, traced)
                if projection.dry_run or not launches_gateways(request):
                    return answer()
                refused = functools.partial(_refused, clock, trace_id, request)
                return ManagerLaunch(answer, refused)
            if projection.dry_run:
                traced = None
                route = self._repository.resolve(projection.request)
                return dry_run_outcome(route, dry_run_payload(route, self._limits))
            stdin = stdin_bytes(projection.stdin_text, self._limits.max_stdin_bytes, request)
            route = self._resolve(projection.request, trace_id)
        except BaseException as error:  # noqa: BLE001 - a worker thread: never a signal
            return _refused(clock, traced, request, error, route)
        return Launch(self, route, request, stdin, trace_id, clock)

    def _check_caller(self, caller: str) -> None:
        """Refuse a caller this server is not bound to act for (exact string match)."""
        if self._callers is not None and not (type(caller) is str and caller in self._callers):
            raise HostCallerInvalid(
                "this server does not act for that caller (see dispatcher mcp --caller)"
            )

    def _resolve(self, request: RouteRequest, trace_id: str) -> Route:
        clock = _Clock()
        try:
            route = self._repository.resolve_live(request, trace_id=trace_id)
        except RouteError as error:
            clock.span("dispatcher.resolve", trace_id, error.code, None)
            raise
        clock.span("dispatcher.resolve", trace_id, "ok", route)
        return route

    def _launch(self, route: Route, stdin: bytes | None, trace_id: str) -> ExecutionResult:
        return self._repository.run_captured(
            route, stdin=stdin, limits=self._limits, trace_id=trace_id
        )


@dataclass(frozen=True, slots=True)
class Launch:
    """A resolved, authorized call whose gateway is still to be launched (takes a slot)."""

    calls: RepositoryCalls
    route: Route
    request: RouteRequest
    stdin: bytes | None
    trace_id: str
    clock: _Clock

    def run(self) -> ToolOutcome:
        """Launch the gateway and wait for it; a refusal at launch keeps the route."""
        route, clock, trace_id = self.route, self.clock, self.trace_id
        try:
            run = self.calls._launch(route, self.stdin, trace_id)  # noqa: SLF001 - its own owner
        except RouteError as error:
            clock.span("mcp.tool_call", trace_id, error.code, route)
            return error_outcome(error, request=self.request, trace_id=trace_id, route=route)
        except BaseException as error:  # noqa: BLE001 - a worker thread: never a signal
            return _internal_outcome(error, clock, trace_id, route, None)
        clock.span("mcp.tool_call", trace_id, _run_status(run), route)
        return execution_outcome(route, run, trace_id)


def _answered(
    route_call: Callable[..., ToolOutcome],
    limits: ExecLimits,
    clock: _Clock,
    traced: str | None,
) -> ToolOutcome:
    """A manager route's outcome, with the server's limits; its ``mcp.tool_call`` span."""
    outcome = route_call(limits=limits)
    clock.span("mcp.tool_call", traced, "ok", None)
    return outcome


def _refused(
    clock: _Clock,
    traced: str | None,
    request: RouteRequest | None,
    error: BaseException,
    route: Route | None = None,
) -> ToolOutcome:
    """A refusal (``RouteError``) as its structured result, anything else as internal_error."""
    if isinstance(error, RouteError):
        clock.span("mcp.tool_call", traced, error.code, route)
        return error_outcome(error, request=request, trace_id=traced, route=route)
    return _internal_outcome(error, clock, traced, route, request)


def _internal_outcome(
    error: BaseException,
    clock: _Clock,
    traced: str | None,
    route: Route | None,
    request: RouteRequest | None,
) -> ToolOutcome:
    """A dispatcher bug as ``dispatcher.internal_error``: logged by id, never its text."""
    correlation_id = _log_internal_error(error)
    clock.span("mcp.tool_call", traced, InternalFailure.code, route)
    failure = InternalFailure(f"internal error in the dispatcher (correlation id {correlation_id})")
    return error_outcome(failure, request=request, trace_id=traced, route=route)


def bound_callers(repository: Repository, callers: Iterable[str]) -> frozenset[str]:
    """Check the operator's ``--caller`` values: each a discoverable top-level skill.

    Raises:
        RuntimeMisconfigured: a value is not the ID of a discoverable
            top-level skill of ``repository`` (as it is on disk now; every
            call is checked again when it is resolved).
    """
    from boring_dispatch.repository.load.config import load_config
    from boring_dispatch.repository.load.exports import require_host_caller
    from boring_dispatch.repository.load.lookup import ModuleLoader

    bound = frozenset(callers)
    for caller in sorted(bound):
        try:
            if "." in caller:
                raise HostCallerInvalid("not a top-level module")
            ancestry = ModuleLoader(load_config(repository.config_path)).load_ancestry(caller)
            require_host_caller(ancestry[-1])
        except RouteError as error:
            raise RuntimeMisconfigured(
                f"--caller {caller[:80]!r} is not a discoverable top-level skill "
                f"of the repository ({error.code})"
            ) from None
    return bound


class TableCalls:
    """The tools of one Python table, each call through ``Registry.dispatch``.

    ``context`` is the operator's function (``--context``) that supplies the
    injected arguments; it is called once per call, in the call's thread.
    """

    __slots__ = ("_context", "_registry")

    def __init__(
        self,
        registry: Registry,
        *,
        context: Callable[[], Mapping[str, object]] | None = None,
    ) -> None:
        self._registry = registry
        self._context = context

    def needs_confirmation(self, name: str) -> bool:
        """Whether ``name`` is an enabled tool built with ``confirm=True``."""
        tool = self._registry.tools.get(name)
        return tool is not None and tool.confirm is True

    def shown_arguments(self, name: str, arguments: Mapping[str, object] | None) -> str:
        """The call's arguments for an approval prompt: JSON, sensitive values redacted."""
        import json

        redacted = self._registry.redacted_arguments(name, arguments or {})
        try:
            return json.dumps(redacted, ensure_ascii=False, sort_keys=True)
        except (TypeError, ValueError):
            return "(arguments that are not JSON)"

    def call(
        self, name: str, arguments: Mapping[str, object] | None, *, confirmed: bool = False
    ) -> ToolOutcome:
        """Dispatch one call; unknown names and bad arguments are observations too.

        ``confirmed`` is a person's approval of this one call, asked through
        MCP elicitation; the model's arguments can never confirm.
        """
        try:
            context = None if self._context is None else self._context()
        except BaseException as error:  # noqa: BLE001 - a worker thread: never a signal
            # The operator's function failed (sys.exit() too, as a handler's would): no call.
            correlation_id = _log_internal_error(error)
            observation = Observation.failure(
                "internal_error", "internal error", correlation_id=correlation_id
            )
        else:
            observation = self._registry.dispatch(
                name, arguments, confirmed=confirmed, context=context
            )
        tool = self._registry.tools.get(name)
        # An unknown tool has no audience bit: its refusal stays in the structured result.
        audience = "machine" if tool is None else tool.audience
        return table_outcome(observation.to_dict(), observation.to_json(), audience)


def _tier(name: str) -> int:
    tier = tier_of(name)
    if tier is None:
        raise InvalidRouteRequest(
            "unknown tool: call invoke_security_0, invoke_security_1 or invoke_security_2"
        )
    return tier


def _run_status(run: ExecutionResult) -> str:
    if run.timed_out:
        return "timed_out"
    if run.stdout_truncated or run.stderr_truncated:
        return "truncated"
    return "ok" if run.exit_code == 0 else "exit_nonzero"
