"""The :class:`Repository`: one object that every client of a blueprint repository uses.

The CLI, replay, the MCP server and nested calls from gateways all go through
``Repository.resolve``/``dry_run``/``invoke``, so they take the same decisions.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path

from boring_dispatch._static import final
from boring_dispatch._value import replace
from boring_dispatch.errors import RuntimeMisconfigured, SetupRefusal
from boring_dispatch.records import ExecLimits, ExecutionResult, Route, RouteRequest
from boring_dispatch.repository.gate import SetupGate
from boring_dispatch.repository.load.config import load_config
from boring_dispatch.repository.pipeline import resolve_route

#: The nested-call ceiling of a route whose level is unavailable: read-only interfaces only.
_LOWEST_LEVEL: Final = 0

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import Final, TypeVar

    from boring_dispatch.observe.repository_audit import RepositoryAuditSink
    from boring_dispatch.process.launch import NestedCall
    from boring_dispatch.repository._audit import RepositoryAudit

    _R = TypeVar("_R")


__all__ = ["Repository", "dry_run_payload"]


@final
class Repository:
    """A blueprint repository named by one exact, absolute ``officina.toml`` path.

    Opening validates the configuration once so that mistakes show early; every
    request then reads the configuration and the blueprints it needs again, so a
    request always sees the repository as it is on disk (no cache, no index).

    ``audit`` sinks get one record per live call (:meth:`resolve_live` refusals,
    and every launch: :meth:`invoke`, :meth:`run_captured`, :meth:`run_streaming`,
    nested calls included); dry runs are not recorded. See docs/repository.md, "Audit".
    """

    __slots__ = ("_audit", "_gate", "config_path", "ledger")

    def __init__(
        self,
        config_path: Path,
        *,
        ledger: str | None = None,
        setup_gate: SetupGate | None = None,
        audit: Sequence[RepositoryAuditSink] = (),
    ) -> None:
        #: The exact configuration path this repository was opened with.
        self.config_path: Final = config_path
        #: The setup ledger (``postgresql://...`` or a SQLite path); ``None``: the
        #: ``BORING_DISPATCH_LEDGER`` variable, else the embedded default file.
        self.ledger: Final = ledger
        self._gate = setup_gate
        self._audit: RepositoryAudit | None = None
        if type(audit) is not tuple or audit:
            # Imported only with sinks: a dry run of the CLI never loads the audit modules.
            from boring_dispatch.repository._audit import RepositoryAudit

            checked = RepositoryAudit(audit)  # refuses a malformed sink now, not at a call
            self._audit = checked if checked.sinks else None

    def setup_gate(self) -> SetupGate:
        """The gate of live calls, built on first use (a dry run never builds it)."""
        if self._gate is None:
            # The one import of the layer above (pyproject: ignore_imports): built lazily,
            # on a live call, so nothing of setup/ loads for a dry run.
            from boring_dispatch.setup.gate import LedgerGate

            self._gate = LedgerGate(self.config_path, ledger=self.ledger)
        return self._gate

    @classmethod
    def open(
        cls,
        config_path: str | os.PathLike[str],
        *,
        ledger: str | None = None,
        audit: Sequence[RepositoryAuditSink] = (),
    ) -> Repository:
        """Validate the configuration at ``config_path`` and return the repository.

        ``audit``: the sinks of the repository's call records (see the class).

        Raises:
            RuntimeMisconfigured: the path is not absolute, not ``officina.toml``,
                has a symlinked component, or the file is invalid (section 1.3);
                or ``audit`` is not a sequence of sinks with ``record(event)``.
        """
        if not str(config_path):
            raise RuntimeMisconfigured(
                "dispatcher requires the exact repository configuration path"
            )
        config = load_config(config_path)
        return cls(config.config_path, ledger=ledger, audit=audit)

    def resolve(
        self,
        request: RouteRequest,
        *,
        certification_status: Mapping[str, object] | None = None,
    ) -> Route:
        """Resolve, authorize and compile ``request`` (see :func:`resolve_route`).

        No setup gate: for dry runs, ``describe`` and offline replay. A call that
        will launch uses :meth:`resolve_live`.
        """
        return resolve_route(self.config_path, request, certification_status=certification_status)

    def resolve_live(self, request: RouteRequest, *, trace_id: str | None = None) -> Route:
        """Resolve for a launch: the setup gate sits between authorize and bind.

        A refusal here is the call's audit record (``trace_id`` goes into it);
        a route that is returned is recorded by its launch.

        Raises:
            InternalFailure: an audit sink failed its last record (nothing is resolved).
            SetupRefusal: ``setup_required``, ``setup_busy`` or ``setup_managed``.
            SetupFlowRefused: a ``setup_flow_id`` the flow does not admit.
            SetupGraphInvalid, SetupUnavailable: the closure or the ledger fails (closed).
        """
        resolve = lambda: resolve_route(self.config_path, request, gate=self.setup_gate())  # noqa: E731
        return self.answer_live(request, resolve, trace_id=trace_id, record_ok=False)

    def answer_live(
        self,
        request: RouteRequest,
        answer: Callable[[], _R],
        *,
        trace_id: str | None = None,
        security_level: int | None = None,
        record_ok: bool = True,
    ) -> _R:
        """Run a live call the dispatcher answers itself (a setup manager route): one record.

        ``answer`` is not run while an audit sink is failing; its refusal is
        recorded by its code, its result as ``ok`` with no exit status (not
        recorded with ``record_ok`` false: a first stage of a call recorded later).

        Raises:
            InternalFailure: an audit sink failed its last record (nothing is run).
        """
        audit = self._audit
        if audit is None:
            return answer()
        from boring_dispatch.repository._audit import Stage

        stage = Stage()
        try:
            audit.admit()
            result = answer()
        except BaseException as error:
            audit.refused(request, stage, error, trace_id=trace_id)
            raise
        if record_ok:
            audit.answered(request, stage, "ok", trace_id=trace_id, security_level=security_level)
        return result

    def dry_run(self, request: RouteRequest) -> dict[str, object]:
        """Authorize and compile without launching and without reading stdin."""
        return dry_run_payload(self.resolve(request))

    def invoke(
        self,
        request: RouteRequest,
        *,
        stdin: bytes | None = None,
        limits: ExecLimits | None = None,
        trace_id: str | None = None,
    ) -> ExecutionResult:
        """Resolve ``request`` and run the gateway with captured, capped output.

        ``stdin`` is sent only when the binding accepted stdin; otherwise the
        child's stdin is empty.
        """
        from boring_dispatch.process.launch import run_captured

        route = self.resolve_live(request, trace_id=trace_id)
        nested = request.from_host is False
        return self._launch(run_captured, route, stdin, limits, trace_id, nested=nested)

    def run_captured(
        self,
        route: Route,
        *,
        stdin: bytes | None,
        limits: ExecLimits | None = None,
        trace_id: str | None = None,
    ) -> ExecutionResult:
        """Run an already resolved route with captured, capped output (MCP, nested calls)."""
        from boring_dispatch.process.launch import run_captured

        return self._launch(run_captured, route, stdin, limits, trace_id)

    def run_streaming(
        self,
        route: Route,
        *,
        stdin: bytes | None,
        limits: ExecLimits | None = None,
        trace_id: str | None = None,
    ) -> int:
        """Run an already resolved route with the child's streams passed through (the CLI)."""
        from boring_dispatch.process.launch import run_streaming

        return self._launch(run_streaming, route, stdin, limits, trace_id)

    def _launch(  # noqa: PLR0913 - private; nested is keyword-only
        self,
        launcher: Callable[..., _R],
        route: Route,
        stdin: bytes | None,
        limits: ExecLimits | None,
        trace_id: str | None,
        *,
        nested: bool = False,
    ) -> _R:
        """Launch ``route`` with its nested calls decided here; a nested setup refusal is raised.

        With audit sinks, the launch is the call's record (``nested``: a gateway made it).
        """
        limits = limits or ExecLimits()
        audit = self._audit
        if audit is None:
            return self._run(launcher, route, stdin, limits, trace_id)
        from boring_dispatch.repository._audit import (
            Stage,
            launch_outcome,
            refusal_outcome,
            streaming_outcome,
        )

        stage = Stage()
        try:
            audit.admit()
            outcome = self._run(launcher, route, stdin, limits, trace_id)
        except BaseException as error:
            code = refusal_outcome(error)
            audit.launched(route, stage, code, None, nested=nested, trace_id=trace_id)
            raise
        if isinstance(outcome, ExecutionResult):
            truncated = outcome.stdout_truncated or outcome.stderr_truncated
            code, status = launch_outcome(
                outcome.exit_code, timed_out=outcome.timed_out, truncated=truncated
            )
        else:  # a streamed run's exit status (run_streaming)
            exit_status: int = outcome  # type: ignore[assignment]
            elapsed_s = stage.elapsed_ms() / 1000.0
            code, status = streaming_outcome(exit_status, elapsed_s, limits.timeout_s)
        audit.launched(route, stage, code, status, nested=nested, trace_id=trace_id)
        return outcome

    def _run(
        self,
        launcher: Callable[..., _R],
        route: Route,
        stdin: bytes | None,
        limits: ExecLimits,
        trace_id: str | None,
    ) -> _R:
        nested = _NestedCalls(self, route, trace_id)
        outcome = launcher(
            route,
            stdin=_accepted_stdin(route, stdin),
            limits=limits,
            trace_id=trace_id,
            nested=nested.invoke,
        )
        nested.raise_refusal()
        return outcome

    def exported_interfaces(self) -> tuple[str, ...]:
        """Every export ID declared in the repository, sorted (an offline scan).

        This walks the configured roots, so it is never used on the routing path.
        """
        from boring_dispatch.repository.offline.inventory import exported_interfaces

        return exported_interfaces(load_config(self.config_path))


class _NestedCalls:
    """How the gateway of ``route`` calls other interfaces: decided here, never by the child.

    The caller is the route's terminal module, ``host`` is false, the level
    ceiling is the route's derived level (0 when the level is unavailable: fail
    closed), the repository and its setup gate are the route's, and the setup
    flow is the outer request's; the child chooses only the interface,
    version, arguments and stdin. A setup refusal of a nested call is kept
    here, in the parent (the private diagnostic path): whatever the gateway
    then prints or exits with, :meth:`raise_refusal` raises it after the run,
    with this route's interface prepended to its ``call_path``.
    """

    __slots__ = ("_refusal", "_repository", "_route", "_trace_id")

    def __init__(self, repository: Repository, route: Route, trace_id: str | None) -> None:
        self._repository = repository
        self._route = route
        self._trace_id = trace_id
        self._refusal: SetupRefusal | None = None

    def invoke(self, call: NestedCall, stdin: bytes | None, limits: ExecLimits) -> ExecutionResult:
        from boring_dispatch.repository.projection import projection_argv

        route = self._route
        request = RouteRequest(
            caller=route.target_module_id,
            target=call.interface,
            version=call.version,
            sends_stdin=stdin is not None,
            from_host=False,
            # No level means nothing is known of the route: the lowest ceiling (fail closed).
            max_level=_LOWEST_LEVEL if route.security_level is None else route.security_level,
            setup_flow_id=route.setup_flow_id,
        )
        # Refused arguments are this nested call's refusal: recorded like any other.
        answer = partial(projection_argv, call.positionals, call.options)
        argv = self._repository.answer_live(
            request, answer, trace_id=self._trace_id, record_ok=False
        )
        request = replace(request, argv=argv)
        try:
            return self._repository.invoke(
                request, stdin=stdin, limits=limits, trace_id=self._trace_id
            )
        except SetupRefusal as refusal:
            if self._refusal is None:
                self._refusal = refusal
            raise

    def raise_refusal(self) -> None:
        """Raise the first nested setup refusal, if any, as this route's own."""
        refusal = self._refusal
        if refusal is not None:
            refusal.within(self._route.target)
            raise refusal


def _accepted_stdin(route: Route, stdin: bytes | None) -> bytes | None:
    """Stdin reaches the child only when the binding accepted it; otherwise it is empty."""
    return stdin if route.binding.takes_stdin else None


def dry_run_payload(route: Route, limits: ExecLimits | None = None) -> dict[str, object]:
    """The dry-run JSON object (BLUEPRINTS-V6 section 7.3, plus our additions).

    Adds ``security_level``, ``output_audiences``, the full child ``argv`` (with
    the ``limits`` a live call would be given; the defaults when ``None``) and
    ``authorization`` (the crossed namespace gates, the caller the terminal
    export admitted, and every policy that admitted the call and why, in order)
    to the keys of the existing implementation.
    """
    # Not process.launch: printing the command needs no subprocess machinery.
    from boring_dispatch.process._argv import child_argv

    target = route.python_target
    payload: dict[str, object] = {
        "argv": list(child_argv(route, limits)),
        "authorization": {
            "crossed_gates": list(route.crossed_gates),
            "immediate_caller": route.immediate_caller,
            "policies": [policy.to_dict() for policy in route.policies],
        },
        "caller_module_id": route.caller_module_id,
        "caller_source_id": None,
        "command": list(route.binding.command),
        "cwd": str(route.cwd),
        "implementing_source_id": route.implementing_source_id,
        "output_audiences": dict(route.output_audiences),
        "pattern": route.binding.pattern,
        "python_target": {
            "gateway_path": target.gateway_path,
            "logical_entrypoint": target.logical_entrypoint,
            "logical_package": target.logical_package,
            "process_entry": target.process_entry,
        },
        "script_interface": route.source_interface_id,
        "security_level": route.security_level,
        "stdin": route.binding.takes_stdin,
        "target": route.target,
        "target_module_id": route.target_module_id,
        "terminal_module_id": route.target_module_id,
    }
    if route.warnings:
        payload["warnings"] = [w.to_dict() for w in route.warnings]
    return payload
