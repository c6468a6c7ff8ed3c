"""The repository-wide routes: teardown, teardown-all and invalidate.

The one place the manager scans the module roots (the canonical setup graph:
every ``<module>.interface.setup``); never on the path of an ordinary call.
Teardown runs each setup's ``<module>.interface.teardown`` export, if it has
one, dependents first, through the dispatcher as the manager (with the
caller's execution limits and trace id: an MCP server's ``--timeout`` and
``--run-as`` hold for it); then clears the records. While a flow is active,
teardown refuses (``setup_busy``); ``invalidate`` does not wait (revoking a
setup must not wait for a flow): the flow's calls are checked against the
ledger's current states, so an invalidated setup admits nothing more.
"""

from __future__ import annotations

from collections.abc import Sequence

from boring_dispatch.errors import RouteError, SetupBusy, SetupFlowRefused, SetupGraphInvalid
from boring_dispatch.records import ExecLimits, RouteRequest
from boring_dispatch.repository.load.config import load_config
from boring_dispatch.repository.load.lookup import ModuleLoader
from boring_dispatch.repository.offline.inventory import iter_exports, iter_module_exports
from boring_dispatch.repository.repository import Repository
from boring_dispatch.setup.closure import load_closure
from boring_dispatch.setup.ledger import ops
from boring_dispatch.setup.ledger.store import Ledger
from boring_dispatch.setup.names import MANAGER_MODULE, setup_export_id, teardown_export_id

__all__ = ["invalidate", "setup_graph", "teardown", "teardown_all"]

Graph = dict[str, tuple[str, ...]]


def setup_graph(repository: Repository) -> tuple[Graph, tuple[str, ...]]:
    """Every setup with what it requires, and all of them in one setup order.

    Raises:
        SetupGraphInvalid: any setup's closure is invalid (fail closed).
    """
    config = load_config(repository.config_path)
    loader = ModuleLoader(config)
    graph: Graph = {}
    order: list[str] = []
    for export_id, module_id in iter_exports(config):
        if export_id != setup_export_id(module_id):
            continue
        for node in load_closure(loader, export_id):
            if node.setup_id not in graph:
                graph[node.setup_id] = node.requires
                order.append(node.setup_id)
    return graph, tuple(order)


def _dependents(graph: Graph, setup_id: str) -> set[str]:
    """Every setup that requires ``setup_id``, directly or not."""
    found: set[str] = set()
    pending = [setup_id]
    while pending:
        current = pending.pop()
        for other, requires in graph.items():
            if current in requires and other not in found:
                found.add(other)
                pending.append(other)
    return found


def _no_active_flow(ledger: Ledger) -> None:
    with ledger.transaction() as tx:
        flow = ops.active_flow(tx)
    if flow is not None:
        raise SetupBusy("a setup flow is active").with_facts(flow_id=flow.flow_id)


def teardown(  # noqa: PLR0913 - keyword-only, the launch's limits and trace id
    repository: Repository,
    ledger: Ledger,
    setup_id: str,
    *,
    cascade: bool,
    limits: ExecLimits | None = None,
    trace_id: str | None = None,
) -> dict[str, object]:
    """Tear ``setup_id`` down; ready dependents first when ``cascade``, else refuse.

    Raises:
        SetupFlowRefused: a ready setup depends on it and ``cascade`` is false.
        SetupBusy: a flow is active.
    """
    graph, order = setup_graph(repository)
    if setup_id not in graph:
        raise SetupGraphInvalid(f"not a setup export of the repository: {setup_id}")
    dependents = _dependents(graph, setup_id)
    with ledger.transaction() as tx:
        ready = [
            s for s, r in ops.read_setups(tx, sorted(dependents)).items() if r.state == "ready"
        ]
    if ready and not cascade:
        raise SetupFlowRefused(f"ready setups depend on {setup_id}: pass cascade to tear them down")
    chosen = [s for s in reversed(order) if s in dependents or s == setup_id]
    return _run_teardowns(repository, ledger, chosen, limits, trace_id)


def teardown_all(
    repository: Repository,
    ledger: Ledger,
    *,
    limits: ExecLimits | None = None,
    trace_id: str | None = None,
) -> dict[str, object]:
    """Tear every setup down, in reverse setup order."""
    _, order = setup_graph(repository)
    return _run_teardowns(repository, ledger, list(reversed(order)), limits, trace_id)


def _readable_graph(repository: Repository) -> tuple[Graph, tuple[str, ...], bool]:
    """:func:`setup_graph` of the setups that can be read; False: some could not.

    A broken module or setup elsewhere does not hide the others (``invalidate``
    must work whatever else is broken); the flag says the graph is partial.
    """
    config = load_config(repository.config_path)
    loader = ModuleLoader(config)
    complete = True
    setups: list[str] = []
    for module_id, exports in iter_module_exports(config):
        if exports is None:
            complete = False
        elif setup_export_id(module_id) in exports:
            setups.append(setup_export_id(module_id))
    graph: Graph = {}
    order: list[str] = []
    for export_id in sorted(setups):
        try:
            closure = load_closure(loader, export_id)
        except RouteError:
            complete = False
            continue
        for node in closure:
            if node.setup_id not in graph:
                graph[node.setup_id] = node.requires
                order.append(node.setup_id)
    return graph, tuple(order), complete


def invalidate(repository: Repository, ledger: Ledger, setup_id: str) -> dict[str, object]:
    """Mark ``setup_id`` and every dependent ``invalidated``.

    Revoking must not wait for an unrelated repair: when some module or setup
    of the repository cannot be read, the recorded setups outside the readable
    graph (any of them may depend on ``setup_id``) are invalidated too.
    """
    graph, order, complete = _readable_graph(repository)
    with ledger.transaction() as tx:
        if setup_id not in graph and (complete or not ops.read_setups(tx, [setup_id])):
            raise SetupGraphInvalid(f"not a setup export of the repository: {setup_id}")
        chosen = [s for s in order if s == setup_id or s in _dependents(graph, setup_id)]
        if setup_id not in chosen:
            chosen.insert(0, setup_id)
        if not complete:
            chosen += [s for s in ops.recorded_setups(tx) if s not in graph and s != setup_id]
        changed = ops.mark_setups(tx, chosen, "invalidated", only_ready=False)
    return {"status": "invalidated", "setups": changed}


def _run_teardowns(
    repository: Repository,
    ledger: Ledger,
    chosen: Sequence[str],
    limits: ExecLimits | None,
    trace_id: str | None,
) -> dict[str, object]:
    """Mark the recorded ones ``teardown``, run their teardown exports, clear them."""
    _no_active_flow(ledger)
    with ledger.transaction() as tx:
        if ops.active_flow(tx) is not None:
            raise SetupFlowRefused("a setup flow became active")
        recorded = ops.mark_setups(tx, chosen, "teardown", only_ready=False)
    runs: list[dict[str, object]] = []
    loader = ModuleLoader(load_config(repository.config_path))
    for setup_id in recorded:
        module_id = setup_id.rpartition(".interface.")[0]
        ran = _teardown_one(repository, loader, module_id, limits, trace_id)
        runs.append({"setup": setup_id, **ran})
    with ledger.transaction() as tx:
        ops.clear_setups(tx, recorded)
    return {"status": "torn_down", "setups": list(recorded), "teardowns": runs}


def _teardown_one(
    repository: Repository,
    loader: ModuleLoader,
    module_id: str,
    limits: ExecLimits | None,
    trace_id: str | None,
) -> dict[str, object]:
    teardown_id = teardown_export_id(module_id)
    exports = loader.load(module_id).data.get("exports")
    if not isinstance(exports, dict) or teardown_id not in exports:
        return {"teardown": None}
    try:
        request = RouteRequest(MANAGER_MODULE, teardown_id, from_host=False)
        result = repository.invoke(request, limits=limits, trace_id=trace_id)
    except RouteError as error:
        return {"teardown": teardown_id, "ok": False, "error": error.code}
    return {"teardown": teardown_id, "ok": result.ok, "exit_code": result.exit_code}
