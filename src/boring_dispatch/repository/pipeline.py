"""The repository pipeline: resolve -> [tier gate] -> authorize -> bind, in this order only.

One function, :func:`resolve_route`, is the only place that calls the stages
of a repository request, so every client (CLI, MCP tools, replay, nested calls
from gateways) takes the same decisions in the same order. The order follows
BLUEPRINTS-V6 section 5.1, with the MCP tier gate placed before authorization
as the v6 reference asks.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from boring_dispatch._value import value
from boring_dispatch.errors import (
    InvalidRouteRequest,
    ResolutionFailed,
    RouteError,
    RuntimeMisconfigured,
    SecurityLevelMismatch,
    SecurityLevelUnavailable,
)
from boring_dispatch.records import ModuleRecord, Route, RouteRequest, SourceRecord
from boring_dispatch.repository import ids
from boring_dispatch.repository.authorize import authorize
from boring_dispatch.repository.bind.binding import compile_binding, python_target
from boring_dispatch.repository.facts.audiences import output_audiences
from boring_dispatch.repository.facts.certification import certification_warnings
from boring_dispatch.repository.facts.levels import derive_level
from boring_dispatch.repository.gate import MANAGER_MODULE, GateCall, SetupGate
from boring_dispatch.repository.load.config import load_config
from boring_dispatch.repository.load.exports import (
    find_export,
    require_host_caller,
    select_interface,
)
from boring_dispatch.repository.load.files import DirectoryTree
from boring_dispatch.repository.load.lookup import ModuleLoader

__all__ = ["Target", "resolve_route", "resolve_target"]


@value
class Target:
    """What the resolve stage finds for a target export: the facts every later stage reads."""

    #: The target's ancestry, outermost first; the last is the terminal module.
    ancestry: tuple[ModuleRecord, ...]
    #: ``exports.<target>`` of the terminal module.
    export: Mapping[str, object]
    source: SourceRecord
    #: ``<terminal>.source.<name>.interface.<name>``.
    source_interface_id: str
    #: The selected source interface's body, at ``version``.
    interface: Mapping[str, object]
    version: int

    @property
    def terminal(self) -> ModuleRecord:
        """The module that exports the target."""
        return self.ancestry[-1]


def resolve_target(loader: ModuleLoader, target: str, version: int | None) -> Target:
    """Load the target's ancestry, export, source and source interface (section 5.1, 3-7).

    The one place that does so: requests and ``describe`` share it.

    Raises:
        RouteError: the loading or selection error of the first step that refuses.
    """
    module_id, _ = ids.parse_interface_id(target)
    ancestry = loader.load_ancestry(module_id)
    export, source_id, source_interface_id = find_export(ancestry[-1], target)
    source = loader.load_source(ancestry[-1], source_id)
    interface, selected = select_interface(source, source_interface_id, version)
    return Target(
        ancestry=ancestry,
        export=export,
        source=source,
        source_interface_id=source_interface_id,
        interface=interface,
        version=selected,
    )


def resolve_route(
    config_path: Path,
    request: RouteRequest,
    *,
    certification_status: Mapping[str, object] | None = None,
    gate: SetupGate | None = None,
) -> Route:
    """Resolve, authorize and compile one request; nothing is launched.

    ``gate`` is given for live calls only (never a dry run): the setup gate,
    asked after authorization and before binding.

    Every read happens here, for this request only: the configuration, the
    caller's and target's ancestry, the terminal module, the selected source,
    and the modules a consulted policy names. Nothing is cached across calls.

    Raises:
        RouteError: the documented ``dispatcher.*`` error of the first stage
            that refuses the request. ``caller_module_id`` is always filled in.
    """
    tree = _request_tree(config_path)
    try:
        return _resolve(tree, config_path, request, certification_status, gate)
    except RouteError as error:
        raise _with_caller(error, request.caller) from None
    finally:
        tree.close()


def _request_tree(config_path: object) -> DirectoryTree:
    """The descriptors of this request (its repository root walked from ``/`` once)."""
    if isinstance(config_path, Path):
        return DirectoryTree(config_path.parent)
    if isinstance(config_path, str):
        return DirectoryTree(Path(config_path).parent)
    # No path at all (load_config refuses it): a tree whose every path is walked from /.
    return DirectoryTree(Path())


def _resolve(
    tree: DirectoryTree,
    config_path: Path,
    request: RouteRequest,
    certification_status: Mapping[str, object] | None,
    gate: SetupGate | None,
) -> Route:
    if not isinstance(request.caller, str):
        raise InvalidRouteRequest("caller must be a string")
    # An empty caller is a malformed module ID like any other (invalid_module_id, as v6).
    target_module_id, _ = ids.parse_interface_id(request.target)
    config = load_config(config_path, tree)
    loader = ModuleLoader(config)
    loader.read_through(tree)

    # resolve: caller, target, export, source, interface version
    # The built-in manager is no repository module: it calls only from inside the
    # dispatcher (never from a host, never as a gateway's caller, which is its module).
    manager = request.caller == MANAGER_MODULE and not request.from_host
    if target_module_id == MANAGER_MODULE or (
        request.from_host and request.caller == MANAGER_MODULE
    ):
        # Reserved: the built-in manager answers its routes itself, and a repository
        # module under this ID would otherwise bypass the setup gate.
        raise RuntimeMisconfigured(
            f"{MANAGER_MODULE} is reserved for the built-in setup manager",
            target_module_id=target_module_id,
        )
    caller_ancestry = () if manager else loader.load_ancestry(request.caller)
    if request.from_host:
        require_host_caller(caller_ancestry[-1])
    target = resolve_target(loader, request.target, request.version)
    target_ancestry, terminal, interface = target.ancestry, target.terminal, target.interface
    if any(module.module_id == MANAGER_MODULE for module in (*caller_ancestry, *target_ancestry)):
        raise RuntimeMisconfigured(
            f"{MANAGER_MODULE} is reserved for the built-in setup manager",
            target_module_id=target_module_id,
        )
    source, source_id, version = target.source, target.source.source_id, target.version

    # tier gate (MCP): the level is derived from the current blueprint, never stored
    try:
        level: int | None = derive_level(interface, terminal)
    except SecurityLevelUnavailable:
        if request.tier is not None or request.max_level is not None:
            raise
        level = None
    if request.tier is not None and level != request.tier:
        raise SecurityLevelMismatch(
            f"{request.target} is security level {level}, not {request.tier}: "
            f"call invoke_security_{level}",
            target_module_id=target_module_id,
            interface_id=request.target,
        )

    if request.max_level is not None and level is not None and level > request.max_level:
        raise SecurityLevelMismatch(
            f"{request.target} is security level {level}, above the level "
            f"{request.max_level} of the calling route",
            target_module_id=target_module_id,
            interface_id=request.target,
        )

    # authorize: namespace gates below the common ancestor, then the terminal export
    authorization = authorize(
        loader,
        caller=request.caller,
        target=request.target,
        target_ancestry=target_ancestry,
        export=target.export,
        version=version,
    )

    # setup gate (live calls only): classification reads only what is loaded
    if gate is not None:
        gate.check(
            GateCall(
                caller=request.caller,
                target=request.target,
                version=version,
                ancestry=target_ancestry,
                export=target.export,
                loader=loader,
                setup_flow_id=request.setup_flow_id,
            )
        )

    # bind: compile the caller's argv against the declared grammar
    binding = compile_binding(
        interface, interface_id=request.target, argv=request.argv, stdin=request.sends_stdin
    )
    warnings = certification_warnings(
        caller_ancestry, target_ancestry, source_id, certification_status
    )
    return Route(
        caller_module_id=request.caller,
        target=request.target,
        target_module_id=target_module_id,
        interface_version=version,
        implementing_source_id=source_id,
        source_interface_id=target.source_interface_id,
        binding=binding,
        python_target=python_target(terminal, source, binding.entry),
        cwd=terminal.root,
        repository_root=config.repository_root,
        config_path=config.config_path,
        module_roots=config.module_roots,
        crossed_gates=authorization.crossed_gates,
        policies=authorization.policies,
        immediate_caller=authorization.immediate_caller,
        setup_flow_id=request.setup_flow_id if gate is not None else None,
        security_level=level,
        output_audiences=output_audiences(interface),
        warnings=warnings,
    )


def _with_caller(error: RouteError, caller: str) -> RouteError:
    """Fill in the caller ID that stage errors leave empty (fixes upstream quirk A5)."""
    if error.caller_module_id or not isinstance(caller, str):
        return error
    if isinstance(error, ResolutionFailed):  # keeps the internal reason of a bind refusal
        copy: RouteError = type(error)(
            error.message,
            caller_module_id=caller,
            target_module_id=error.target_module_id,
            interface_id=error.interface_id,
            reason=error.reason,
        )
    else:
        copy = type(error)(
            error.message,
            caller_module_id=caller,
            target_module_id=error.target_module_id,
            interface_id=error.interface_id,
        )
    copy.__cause__ = error.__cause__
    return copy
