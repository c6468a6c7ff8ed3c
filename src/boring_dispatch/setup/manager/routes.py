"""The setup manager's routes: one table, one implementation for MCP, the CLI and Python.

Each route loads exactly the closure the seed names: ``status``/``authorize``
the target's; ``begin`` the one rooted at its setup; the flow routes the one
rooted at the flow's recorded root; ``teardown``, ``teardown-all`` and
``invalidate`` the repository-wide graph (:mod:`.lifecycle`). Results are
plain JSON data and never hold arguments of the resumed call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final, Literal

from boring_dispatch.errors import (
    InvalidRouteRequest,
    RouteError,
    SetupBusy,
    SetupFlowRefused,
    SetupGraphInvalid,
)
from boring_dispatch.records import ExecLimits, RouteRequest
from boring_dispatch.repository.load.config import load_config
from boring_dispatch.repository.load.files import MAX_BLUEPRINT_BYTES, FsRefused, read_regular
from boring_dispatch.repository.load.lookup import ModuleLoader
from boring_dispatch.repository.pipeline import resolve_route, resolve_target
from boring_dispatch.repository.repository import Repository
from boring_dispatch.setup import service
from boring_dispatch.setup.classify import classify
from boring_dispatch.setup.closure import SetupNode, load_closure, load_setup
from boring_dispatch.setup.continuation import manager_call
from boring_dispatch.setup.gate import LedgerGate
from boring_dispatch.setup.ledger import ops
from boring_dispatch.setup.ledger.store import Ledger
from boring_dispatch.setup.manager import lifecycle
from boring_dispatch.setup.manager.options import (
    check_options,
    dump_resume,
    parse_resume,
    parse_setup_key,
)
from boring_dispatch.setup.manager.steps import run_python_step
from boring_dispatch.setup.status import ClosureStatus

__all__ = ["SetupManager"]

Result = dict[str, object]
_Route = Callable[[str, dict[str, str]], Result]
#: The largest Markdown step text returned by ``run-markdown``.
MAX_MARKDOWN_BYTES: Final = MAX_BLUEPRINT_BYTES


class SetupManager:
    """The manager of one repository and its ledger.

    ``limits`` and ``trace_id`` are those of the gateways the routes launch (a
    Python step, teardowns): an MCP server passes its own (``--timeout``,
    ``--run-as``, the fork server) and the call's trace id; ``None`` is the
    library's defaults, as for :meth:`Repository.invoke`.
    """

    def __init__(
        self,
        repository: Repository,
        *,
        limits: ExecLimits | None = None,
        trace_id: str | None = None,
    ) -> None:
        self.repository: Final = repository
        self._limits: Final = limits
        self._trace_id: Final = trace_id
        # A fixed table of our own routes: a requested name is only ever a key here.
        self._routes: Final[Mapping[str, _Route]] = {
            "status": self._status,
            "authorize": self._authorize,
            "begin": self._begin,
            "run-python": self._run_python,
            "run-markdown": self._run_markdown,
            "authorize-markdown-call": self._authorize_markdown_call,
            "settle": self._settle,
            "recover": self._recover,
            "recover-busy": self._recover_busy,
            "teardown": self._teardown,
            "teardown-all": self._teardown_all,
            "invalidate": self._invalidate,
        }

    def call(self, route: str, caller: str, options: Mapping[str, object]) -> Result:
        """Run one route for ``caller`` with ``options``; the result is JSON data.

        Raises:
            RouteError: the route's ``dispatcher.*`` refusal; the ledger is unchanged.
        """
        checked = check_options(route, options)
        result = self._routes[route](caller, checked)
        return {"route": route, **result}

    # ----------------------------------------------------------------- helpers

    def ledger(self) -> Ledger:
        gate = self.repository.setup_gate()
        if not isinstance(gate, LedgerGate):
            raise InvalidRouteRequest("this repository's setup gate has no ledger")
        return gate.ledger()

    def _loader(self) -> ModuleLoader:
        return ModuleLoader(load_config(self.repository.config_path))

    def _target_closure(self, options: dict[str, str]) -> tuple[SetupNode, ...]:
        """The closure governing ``options["interface"]`` (empty: unmanaged)."""
        loader = self._loader()
        version = int(options["version"]) if "version" in options else None
        target = resolve_target(loader, options["interface"], version)
        found = classify("", options["interface"], target.ancestry)
        if found.setup is None:
            return ()
        return load_closure(loader, found.setup)

    def _flow(self, flow_id: str) -> tuple[ops.Flow, tuple[SetupNode, ...]]:
        """The flow and the closure rooted at its recorded root."""
        with self.ledger().transaction() as tx:
            flow = ops.flow_by_id(tx, flow_id)
        return flow, load_closure(self._loader(), flow.root)

    def _current(self, flow: ops.Flow, closure: Sequence[SetupNode]) -> SetupNode:
        if flow.state != "active" or flow.current_step is None:
            raise SetupFlowRefused("the setup flow is not active")
        for node in closure:
            if node.key == flow.current_step:
                return node
        raise SetupFlowRefused("the flow's current step is no longer in its setup closure")

    def _next(self, caller: str, flow: ops.Flow, closure: Sequence[SetupNode]) -> Result:
        """The continuation after a step: the next step, the resumed call, or the failure."""
        if flow.state == "active":
            node = self._current(flow, closure)
            route = "run-python" if node.python else "run-markdown"
            return {
                "status": "step",
                "flow_id": flow.flow_id,
                "step": node.key,
                "manager": manager_call(caller, route, {"flow": flow.flow_id}),
            }
        if flow.state == "completed":
            return {"status": "completed", "flow_id": flow.flow_id, **self._resume(flow.resume)}
        return {"status": flow.state, "flow_id": flow.flow_id, "step": flow.current_step}

    def _resume(self, text: str) -> Result:
        """The resumed call as a complete request for the tier of its interface."""
        caller, interface, version = parse_resume(text)
        request: dict[str, object] = {
            "caller": caller,
            "interface": interface,
            "version": version,
            "arguments": {"positionals": [], "options": {}, "stdin": None},
            "dry_run": False,
        }
        try:
            route = resolve_route(
                self.repository.config_path, RouteRequest(caller, interface, version)
            )
        except RouteError as error:
            return {"resume": {"tool": None, "request": request, "error": error.code}}
        tool = None if route.security_level is None else f"invoke_security_{route.security_level}"
        return {"resume": {"tool": tool, "request": request}}

    # ------------------------------------------------------------------ routes

    def _status(self, _caller: str, options: dict[str, str]) -> Result:
        closure = self._target_closure(options)
        if not closure:
            return {"status": "ready", "managed": False, "setups": []}
        return {"managed": True, **service.status(self.ledger(), closure).to_dict()}

    def _authorize(self, _caller: str, options: dict[str, str]) -> Result:
        closure = self._target_closure(options)
        if not closure:
            return {"status": "ready", "managed": False, "setups": []}
        seen = service.authorize(self.ledger(), closure, options["interface"])
        return {"managed": True, **seen.to_dict()}

    def _begin(self, caller: str, options: dict[str, str]) -> Result:
        setup_id, version = parse_setup_key(options["setup"])
        resume = dump_resume(parse_resume(options["resume"]))
        with self.ledger().transaction() as tx:
            active = ops.active_flow(tx)
        if active is not None:
            # While a flow is active: the canonical, repository-wide graph (the seed), then busy.
            graph, _ = lifecycle.setup_graph(self.repository)
            if setup_id not in graph:
                raise SetupGraphInvalid(f"not a setup export of the repository: {setup_id}")
            _check_version(load_setup(self._loader(), setup_id), version)
            raise SetupBusy("a setup flow is active").with_facts(flow_id=active.flow_id)
        closure = load_closure(self._loader(), setup_id)
        _check_version(closure[-1], version)
        began = service.begin(self.ledger(), closure, resume)
        if isinstance(began, ClosureStatus):
            return {**began.to_dict(), **self._resume(resume)}
        return self._next(caller, began, closure)

    def _run_python(self, caller: str, options: dict[str, str]) -> Result:
        flow, closure = self._flow(options["flow"])
        node = self._current(flow, closure)
        if not node.python:
            raise SetupFlowRefused("the current step is a Markdown step: use run-markdown")
        result, settled = run_python_step(
            self.repository, self.ledger(), flow, node, limits=self._limits, trace_id=self._trace_id
        )
        ran: Result = {"setup": node.key, "ok": result is not None and result.ok}
        if result is not None:
            ran.update(exit_code=result.exit_code, stdout=result.stdout, stderr=result.stderr)
        return {"ran": ran, **self._next(caller, settled, closure)}

    def _run_markdown(self, caller: str, options: dict[str, str]) -> Result:
        flow, closure = self._flow(options["flow"])
        node = self._current(flow, closure)
        if node.python:
            raise SetupFlowRefused("the current step is a Python step: use run-python")
        parts = node.source.gateway_path.split("/")
        try:
            text = read_regular(node.module.root.joinpath(*parts), MAX_MARKDOWN_BYTES)
        except FsRefused:
            raise SetupFlowRefused("the Markdown step's text cannot be read") from None
        service.renew_flow(self.ledger(), flow.flow_id)  # in use: recover-busy must not free it
        settle = {"flow": flow.flow_id, "setup": node.key, "outcome": "ready"}
        return {
            "status": "markdown",
            "flow_id": flow.flow_id,
            "step": node.key,
            "markdown": text.decode("utf-8", "replace"),
            "setup_flow_id": flow.flow_id,
            "settle": manager_call(caller, "settle", settle),
        }

    def _authorize_markdown_call(self, _caller: str, options: dict[str, str]) -> Result:
        flow, _ = self._flow(options["flow"])
        closure = self._target_closure({"interface": options["interface"]})
        if closure:
            service.authorize_flow_call(self.ledger(), flow.flow_id, closure, options["interface"])
        return {"status": "authorized", "flow_id": flow.flow_id, "managed": bool(closure)}

    def _settle(self, caller: str, options: dict[str, str]) -> Result:
        flow, closure = self._flow(options["flow"])
        node = self._current(flow, closure)
        setup_id, version = parse_setup_key(options["setup"])
        if node.setup_id != setup_id or (version is not None and version != node.version):
            raise SetupFlowRefused("that setup is not the current step of the flow")
        if node.python or flow.step_state != "pending":
            raise SetupFlowRefused("a Python step is settled by run-python only")
        outcome: Literal["ready", "failed"] = "ready" if options["outcome"] == "ready" else "failed"
        settled = service.settle(self.ledger(), flow.flow_id, node, outcome)
        return self._next(caller, settled, closure)

    def _recover(self, caller: str, options: dict[str, str]) -> Result:
        with self.ledger().transaction() as tx:
            flow = ops.flow_by_id(tx, options["flow"])
            recovered = ops.recover_step(tx, flow)
            flow = ops.flow_by_id(tx, flow.flow_id)
        closure = load_closure(self._loader(), flow.root)
        return {"recovered": recovered, **self._next(caller, flow, closure)}

    def _recover_busy(self, _caller: str, options: dict[str, str]) -> Result:
        with self.ledger().transaction() as tx:
            flow = ops.flow_by_id(tx, options["flow"])
            abandoned = ops.recover_busy(tx, flow)
        return {"status": "abandoned" if abandoned else flow.state, "flow_id": flow.flow_id}

    def _teardown(self, _caller: str, options: dict[str, str]) -> Result:
        setup_id, _ = parse_setup_key(options["setup"])
        cascade = options.get("cascade") == "true"
        return lifecycle.teardown(
            self.repository,
            self.ledger(),
            setup_id,
            cascade=cascade,
            limits=self._limits,
            trace_id=self._trace_id,
        )

    def _teardown_all(self, _caller: str, _options: dict[str, str]) -> Result:
        return lifecycle.teardown_all(
            self.repository, self.ledger(), limits=self._limits, trace_id=self._trace_id
        )

    def _invalidate(self, _caller: str, options: dict[str, str]) -> Result:
        setup_id, _ = parse_setup_key(options["setup"])
        return lifecycle.invalidate(self.repository, self.ledger(), setup_id)


def _check_version(node: SetupNode, version: int | None) -> None:
    """A pinned ``setup@version`` must be the setup's current version."""
    if version is not None and node.version != version:
        raise SetupGraphInvalid(
            f"{node.setup_id} is version {node.version}, not {version}",
            interface_id=node.setup_id,
        )
