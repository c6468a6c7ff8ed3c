"""The blueprint repository's refusals: one class per ``dispatcher.*`` code.

The tree and the codes are drawn in :mod:`boring_dispatch.errors`.
"""

from __future__ import annotations

from boring_dispatch._refusal import SetupFacts
from boring_dispatch.errors._base import DispatchError

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import Final

__all__ = [
    "AccessInvalid",
    "BlueprintIdentityMismatch",
    "BlueprintMalformed",
    "BlueprintSchemaMismatch",
    "ChildUnregistered",
    "HostCallerInvalid",
    "InterfaceNotFound",
    "InterfaceVersionMismatch",
    "InternalFailure",
    "InvalidCallerReference",
    "InvalidInterfaceId",
    "InvalidModuleId",
    "InvalidRouteRequest",
    "LaunchFailed",
    "ModuleAmbiguous",
    "ModuleNotFound",
    "NamespaceRouteMissing",
    "NamespaceSurfaceExcludes",
    "NamespaceVersionMismatch",
    "NestedLimitExceeded",
    "ResolutionFailed",
    "RouteError",
    "RuntimeMisconfigured",
    "SecurityLevelMismatch",
    "SecurityLevelUnavailable",
    "SetupBusy",
    "SetupFlowRefused",
    "SetupGraphInvalid",
    "SetupManaged",
    "SetupRefusal",
    "SetupRequired",
    "SetupUnavailable",
    "SourceInterfaceInvalid",
    "SourceLocatorInvalid",
    "SourceNotFound",
    "UnauthorizedCaller",
    "UnsafeBlueprintPath",
]


class RouteError(DispatchError):
    """A repository request was refused. Carries the IDs the JSON error line reports."""

    code = "dispatcher.error"

    def __init__(
        self,
        message: str,
        *,
        caller_module_id: str = "",
        target_module_id: str = "",
        interface_id: str | None = None,
    ) -> None:
        super().__init__(message)
        #: The caller of the request, as far as it was known when the error happened.
        self.caller_module_id: Final = caller_module_id
        #: The module being processed when the error happened.
        self.target_module_id: Final = target_module_id
        #: The export ID, for errors that concern one (``unauthorized_caller``).
        self.interface_id: Final = interface_id

    def to_dict(self) -> dict[str, object]:
        """The error line of ``--error-format json`` (schema version 1)."""
        payload: dict[str, object] = {
            "schema_version": 1,
            "code": self.code,
            "caller_module_id": _text(self.caller_module_id),
            "target_module_id": _text(self.target_module_id),
            "message": _text(self.message),
        }
        if self.interface_id is not None:
            payload["interface_id"] = _text(self.interface_id)
        return payload


def _text(value: object) -> object:
    """``value`` with each lone surrogate (a non-UTF-8 argument byte) as the text ``\\udcff``.

    The IDs are the request's own (a caller that is not a valid ID is still
    reported); as a JSON ``\\udcff`` escape a lone surrogate is no character at
    all, and a strict reader would refuse the whole error line.
    """
    if type(value) is not str or value.isascii():
        return value
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


class RuntimeMisconfigured(RouteError):
    code = "dispatcher.runtime_misconfigured"


class InvalidRouteRequest(RouteError):
    code = "dispatcher.invalid_request"


class InvalidInterfaceId(RouteError):
    code = "dispatcher.invalid_interface_id"


class InvalidModuleId(RouteError):
    code = "dispatcher.invalid_module_id"


class InvalidCallerReference(RouteError):
    code = "dispatcher.invalid_caller_reference"


class ModuleNotFound(RouteError):
    code = "dispatcher.module_not_found"


class ModuleAmbiguous(RouteError):
    code = "dispatcher.module_ambiguous"


class UnsafeBlueprintPath(RouteError):
    code = "dispatcher.unsafe_blueprint_path"


class BlueprintMalformed(RouteError):
    code = "dispatcher.blueprint_malformed"


class BlueprintSchemaMismatch(RouteError):
    code = "dispatcher.blueprint_schema_mismatch"


class BlueprintIdentityMismatch(RouteError):
    code = "dispatcher.blueprint_identity_mismatch"


class ChildUnregistered(RouteError):
    code = "dispatcher.child_unregistered"


class HostCallerInvalid(RouteError):
    code = "dispatcher.host_caller_invalid"


class InterfaceNotFound(RouteError):
    code = "dispatcher.interface_not_found"


class SourceInterfaceInvalid(RouteError):
    code = "dispatcher.source_interface_invalid"


class SourceLocatorInvalid(RouteError):
    code = "dispatcher.source_locator_invalid"


class SourceNotFound(RouteError):
    code = "dispatcher.source_not_found"


class InterfaceVersionMismatch(RouteError):
    code = "dispatcher.interface_version_mismatch"


class NamespaceRouteMissing(RouteError):
    code = "dispatcher.namespace_route_missing"


class NamespaceVersionMismatch(RouteError):
    code = "dispatcher.namespace_version_mismatch"


class NamespaceSurfaceExcludes(RouteError):
    code = "dispatcher.namespace_surface_excludes_interface"


class AccessInvalid(RouteError):
    code = "dispatcher.access_invalid"


class UnauthorizedCaller(RouteError):
    code = "dispatcher.unauthorized_caller"


class ResolutionFailed(RouteError):
    """The route could not be resolved: most often the bind stage refused the argv or binding.

    ``reason`` names the bind-stage check that refused (a
    ``boring_dispatch.repository._shapes.RefusalReason`` such as ``no_pattern``
    or ``value_type``), ``None`` for refusals made outside the bind stage. It is
    internal, for tests and debugging: the public identity stays ``code``, and
    ``reason`` is not part of :meth:`to_dict` (the CLI JSON error line), the MCP
    result or the dry-run payload, which are the same with or without it.
    """

    code = "dispatcher.resolution_failed"

    def __init__(
        self,
        message: str,
        *,
        caller_module_id: str = "",
        target_module_id: str = "",
        interface_id: str | None = None,
        reason: str | None = None,
    ) -> None:
        super().__init__(
            message,
            caller_module_id=caller_module_id,
            target_module_id=target_module_id,
            interface_id=interface_id,
        )
        #: The bind-stage check that refused; ``None`` outside the bind stage. Never shown.
        self.reason: Final = reason


class LaunchFailed(RouteError):
    code = "dispatcher.launch_failed"


class SecurityLevelMismatch(RouteError):
    code = "dispatcher.security_level_mismatch"


class SecurityLevelUnavailable(RouteError):
    code = "dispatcher.security_level_unavailable"


class NestedLimitExceeded(RouteError):
    """A nested call would go deeper, or start more gateway processes, than the limits allow.

    Decided by the dispatcher process for the whole tree of one top-level call
    (``ExecLimits.max_nested_depth`` and ``max_gateway_processes``), never by a gateway.
    """

    code = "dispatcher.nested_limit_exceeded"


class SetupRefusal(SetupFacts, RouteError):
    """The setup gate refused a live call (it did not run); raised ``...(ids).with_facts(...)``."""

    def to_dict(self) -> dict[str, object]:
        return {**super().to_dict(), "setup": self.status()}


class SetupRequired(SetupRefusal):
    """The target's setup closure is not ready and no flow is active."""

    code = "dispatcher.setup_required"


class SetupBusy(SetupRefusal):
    """A setup flow is active: only its ID is exposed; nothing is authorized."""

    code = "dispatcher.setup_busy"
    busy = True


class SetupManaged(SetupRefusal):
    """The target is a managed setup or teardown export: only the manager runs it."""

    code = "dispatcher.setup_managed"


class SetupGraphInvalid(RouteError):
    """A bad ``setup_requires_setup_of``: missing or non-setup, wrong version, twice, a cycle."""

    code = "dispatcher.setup_graph_invalid"


class SetupUnavailable(RouteError):
    """The setup ledger cannot be reached or used: the managed target does not run."""

    code = "dispatcher.setup_unavailable"


class SetupFlowRefused(RouteError):
    """An unknown or inactive flow, a step that is not current, a call the flow does not admit."""

    code = "dispatcher.setup_flow_refused"


class InternalFailure(RouteError):
    """An unexpected exception in the dispatcher itself (a bug), reported without its text.

    The MCP server turns any non-``RouteError`` exception of a call into this,
    so a bad call never ends the server and exception text never reaches a client.
    """

    code = "dispatcher.internal_error"
