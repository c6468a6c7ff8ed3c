"""Authorization of one route: namespace gates, then the terminal export (BLUEPRINTS-V6 5.2-5.4).

The walk goes down the target's ancestry. Every parent-child boundary whose
parent is not an ancestor of the caller is a crossed gate: the parent's
namespace route must exist, pin the child's version, list the exact export at
the chosen version, and admit the *immediate* caller (route access AND any
per-interface restriction). After a gate admits, the gate's owner becomes the
immediate caller of the next hop; the original caller is not propagated. The
terminal export's own policy is always evaluated last, so gates can only
narrow what the export allows.

An access policy admits caller ``x`` for owner ``y`` when ``x == y``, when
``allow_all_modules`` is literally ``True``, or when a dotted prefix of ``x``
(segment-wise, ``a.b`` never matches ``a.bc``) is one of the resolved
``allowed_callers``. Every entry is resolved and loaded, even after a match,
so a policy can never name a module that does not exist or is unregistered.

Fail closed: a shape this module does not expect is an error, never a rule
to skip.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

from boring_dispatch._static import Protocol
from boring_dispatch._value import value
from boring_dispatch.errors import (
    AccessInvalid,
    InterfaceVersionMismatch,
    NamespaceRouteMissing,
    NamespaceSurfaceExcludes,
    NamespaceVersionMismatch,
    ResolutionFailed,
    UnauthorizedCaller,
)
from boring_dispatch.records import AdmittedPolicy, ModuleRecord
from boring_dispatch.repository import ids

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import Final, Literal

__all__ = [
    "AncestryLoader",
    "Authorization",
    "Filter",
    "FilterKind",
    "Gate",
    "authorize",
]

if TYPE_CHECKING:
    #: What a policy guards: a namespace route, a per-interface restriction at a
    #: route, or the terminal export.
    FilterKind = Literal["namespace-route", "namespace-interface", "terminal-export"]

_ROUTE: Final = "namespace-route"
_INTERFACE: Final = "namespace-interface"
_TERMINAL: Final = "terminal-export"


class AncestryLoader(Protocol):
    """What authorization needs from the module loader (:mod:`~.repository.load.lookup`)."""

    def load_ancestry(self, module_id: str) -> tuple[ModuleRecord, ...]:
        """Load ``module_id`` and its ancestors, outermost first, or raise a loading error."""


@value
class Filter:
    """The audit record of one evaluated policy (upstream ``EffectiveAuthorizationFilter``)."""

    kind: FilterKind
    owner_module_id: str
    #: The requested export ID.
    interface_id: str
    #: The immediate caller this policy judged.
    caller_module_id: str
    allow_all_modules: bool
    #: Resolved module IDs, sorted and unique.
    resolved_callers: tuple[str, ...]
    caller_is_self: bool
    admits: bool

    @property
    def diagnostic(self) -> str:
        """``caller-filtered:<kind>:<owner>`` (``<export id>`` for the terminal export)."""
        subject = self.interface_id if self.kind == _TERMINAL else self.owner_module_id
        return f"caller-filtered:{self.kind}:{subject}"


@value
class Gate:
    """One crossed namespace boundary (upstream ``CrossedNamespaceGate``)."""

    route_owner_id: str
    child_module_id: str
    interface_id: str
    interface_version: int
    terminal_module_id: str


@value
class Authorization:
    """The admitted route: which gates were crossed and which policies were consulted."""

    #: The original caller.
    caller_module_id: str
    interface_id: str
    interface_version: int
    terminal_module_id: str
    gates: tuple[Gate, ...]
    #: Every evaluated policy, in evaluation order (all admitted).
    filters: tuple[Filter, ...]
    #: The caller the terminal export admitted (the last crossed gate's owner).
    immediate_caller: str

    @property
    def crossed_gates(self) -> tuple[str, ...]:
        """The owners of the crossed routes, outermost first."""
        return tuple(gate.route_owner_id for gate in self.gates)

    @property
    def policies(self) -> tuple[AdmittedPolicy, ...]:
        """Every evaluated policy and why it admitted the call, in evaluation order."""
        return tuple(
            AdmittedPolicy(
                kind=f.kind,
                owner_module_id=f.owner_module_id,
                caller_module_id=f.caller_module_id,
                admitted_by=(
                    "self"
                    if f.caller_is_self
                    else "all_modules"
                    if f.allow_all_modules
                    else "allowed_callers"
                ),
            )
            for f in self.filters
        )


def authorize(  # noqa: PLR0913 (the stage contract: all keyword-only)
    loader: AncestryLoader,
    *,
    caller: str,
    target: str,
    target_ancestry: tuple[ModuleRecord, ...],
    export: Mapping[str, object],
    version: int,
) -> Authorization:
    """Decide whether ``caller`` may reach export ``target`` at ``version``.

    Args:
        loader: the request's module loader; every module a consulted policy
            names is loaded through it (with its whole ancestry).
        caller: the canonical caller module ID (already loaded by the pipeline).
        target: the export ID, without a pin.
        target_ancestry: the loaded target modules, outermost first; the last
            one owns ``exports[target]``.
        export: ``exports[target]`` of the terminal module.
        version: the chosen interface version (a strict integer >= 1).

    Returns:
        The audit of the admitted route.

    Raises:
        NamespaceRouteMissing: a crossed owner has no route mapping for the child.
        NamespaceVersionMismatch: the route does not pin the child's version
            (both must be strict integers >= 1).
        NamespaceSurfaceExcludes: ``surface.only`` does not map the export to
            ``version`` (strict integer).
        AccessInvalid: a policy is not a mapping, ``allowed_callers`` is not a
            list of strings, or ``interface_access`` is not a mapping.
        InvalidCallerReference: a relative entry is only dots or climbs too high.
        UnauthorizedCaller: a policy does not admit its immediate caller; the
            message ends with ``[caller-filtered:<kind>:<owner-or-id>]``.
        RouteError: any loading error of a module named by a policy, and
            ResolutionFailed/InterfaceVersionMismatch if the inputs break the
            pipeline's own invariants.
    """
    terminal_id, _ = ids.parse_interface_id(target)
    ids.parse_module_id(caller)
    if type(version) is not int or version < 1:
        raise InterfaceVersionMismatch(
            f"version mismatch for {target}: not a strict integer >= 1",
            target_module_id=terminal_id,
        )
    _require_ancestry(target_ancestry, terminal_id)

    caller_line = ids.ancestry(caller)
    walk = _Walk(loader, caller=caller, target=target, terminal_id=terminal_id)
    immediate = caller
    gates: list[Gate] = []
    for owner, child in itertools.pairwise(target_ancestry):
        if owner.module_id in caller_line:
            continue  # the caller is already inside this owner's subtree
        route = _route(owner, child, target, version)
        walk.check(_ROUTE, owner.module_id, route.get("access"), immediate)
        if "interface_access" in route:
            per_interface = route["interface_access"]
            if not isinstance(per_interface, Mapping):
                raise AccessInvalid(
                    f"interface_access of {owner.module_id}->{_last(child)} is not a mapping",
                    target_module_id=owner.module_id,
                )
            if target in per_interface:
                walk.check(_INTERFACE, owner.module_id, per_interface[target], immediate)
        gates.append(
            Gate(owner.module_id, child.module_id, target, version, terminal_id),
        )
        immediate = owner.module_id
    walk.check(_TERMINAL, terminal_id, export.get("access"), immediate)

    return Authorization(
        caller_module_id=caller,
        interface_id=target,
        interface_version=version,
        terminal_module_id=terminal_id,
        gates=tuple(gates),
        filters=tuple(walk.filters),
        immediate_caller=immediate,
    )


class _Walk:
    """Evaluates policies for one request and keeps their audit records."""

    def __init__(
        self, loader: AncestryLoader, *, caller: str, target: str, terminal_id: str
    ) -> None:
        self._loader = loader
        self._caller = caller
        self._target = target
        self._terminal_id = terminal_id
        self.filters: list[Filter] = []

    def check(self, kind: FilterKind, owner: str, access: object, immediate: str) -> None:
        """Evaluate one policy for ``immediate``; raise UnauthorizedCaller if it refuses."""
        public, named = _read_access(access, owner, kind)
        resolved: set[str] = set()
        for reference in named:  # all of them, even after a match
            module_id = ids.resolve_caller_reference(owner, reference)
            self._loader.load_ancestry(module_id)  # proves it exists and is registered
            resolved.add(module_id)
        is_self = immediate == owner
        admits = is_self or public or not resolved.isdisjoint(ids.ancestry(immediate))
        record = Filter(
            kind=kind,
            owner_module_id=owner,
            interface_id=self._target,
            caller_module_id=immediate,
            allow_all_modules=public,
            resolved_callers=tuple(sorted(resolved)),
            caller_is_self=is_self,
            admits=admits,
        )
        self.filters.append(record)
        if not admits:
            raise UnauthorizedCaller(
                f"{self._caller} is not an allowed caller of {self._target} [{record.diagnostic}]",
                caller_module_id=self._caller,
                target_module_id=self._terminal_id,
                interface_id=self._target,
            )


def _read_access(access: object, owner: str, kind: str) -> tuple[bool, tuple[str, ...]]:
    """Validate an access object: ``(is public, allowed_callers entries)``."""
    if not isinstance(access, Mapping):
        raise AccessInvalid(f"{kind} access of {owner} is not a mapping", target_module_id=owner)
    entries = access.get("allowed_callers")
    if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
        raise AccessInvalid(
            f"{kind} access of {owner}: allowed_callers must be a list of strings",
            target_module_id=owner,
        )
    # Only the literal boolean makes a policy public; "true", 1 or yes-like
    # strings leave it private (not an error, but never an admission).
    return access.get("allow_all_modules") is True, tuple(entries)


def _route(
    owner: ModuleRecord, child: ModuleRecord, target: str, version: int
) -> Mapping[str, object]:
    """The owner's route to ``child``, checked for version and surface."""
    segment = _last(child)
    routes = owner.data.get("namespace_exports")
    route = routes.get(segment) if isinstance(routes, Mapping) else None
    if not isinstance(route, Mapping):
        raise NamespaceRouteMissing(
            f"missing namespace export {owner.module_id}->{segment}",
            target_module_id=owner.module_id,
        )
    route_version = route.get("version")
    if not (_is_version(route_version) and _is_version(child.version)) or (
        route_version != child.version
    ):
        raise NamespaceVersionMismatch(
            f"namespace route {owner.module_id}->{segment} does not pin the version "
            f"of {child.module_id}",
            target_module_id=owner.module_id,
        )
    surface = route.get("surface")
    only = surface.get("only") if isinstance(surface, Mapping) else None
    pinned = only.get(target) if isinstance(only, Mapping) else None
    if not _is_version(pinned) or pinned != version:
        raise NamespaceSurfaceExcludes(
            f"namespace surface excludes {target}@{version}",
            target_module_id=owner.module_id,
        )
    return route


def _require_ancestry(target_ancestry: tuple[ModuleRecord, ...], terminal_id: str) -> None:
    """The records must be exactly the terminal module's ancestry, in order."""
    found = tuple(record.module_id for record in target_ancestry)
    if found != ids.ancestry(terminal_id):
        raise ResolutionFailed(
            f"cannot authorize {terminal_id}: the loaded ancestry does not match",
            target_module_id=terminal_id,
        )


def _is_version(value: object) -> bool:
    # `type(...) is int` because bool is a subclass of int and `true` is not 1.
    return type(value) is int and value >= 1


def _last(module: ModuleRecord) -> str:
    return module.module_id.rpartition(".")[2]
