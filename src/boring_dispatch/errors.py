"""The one exception tree of boring-dispatch.

Every refusal the dispatcher can make is a subclass of :class:`DispatchError`
with a stable ``code`` (what tests, logs and clients match on) and an
``exit_code`` (what the CLI exits with). Messages never contain argument
values, stdin, environment values or secrets; context travels as attributes.

::

    DispatchError
    ├── TableError                     Python table (observation codes)
    │   ├── InvalidRequest             invalid_request
    │   ├── UnknownTool                unknown_tool
    │   ├── InvalidArguments           invalid_arguments  (.details)
    │   ├── Denied                     denied
    │   ├── ToolError                  tool_error         (raised by handlers on purpose)
    │   ├── ObservationTooLarge        observation_too_large
    │   ├── NoFixture                  no_fixture         (a fixture world has no answer)
    │   └── RegistryInvalid            registry_invalid   (building or loading a table)
    └── RouteError                     blueprint repository (dispatcher.* codes)
        ├── RuntimeMisconfigured       dispatcher.runtime_misconfigured
        ├── InvalidRouteRequest        dispatcher.invalid_request
        ├── InvalidInterfaceId         dispatcher.invalid_interface_id
        ├── InvalidModuleId            dispatcher.invalid_module_id
        ├── InvalidCallerReference     dispatcher.invalid_caller_reference
        ├── ModuleNotFound             dispatcher.module_not_found
        ├── ModuleAmbiguous            dispatcher.module_ambiguous
        ├── UnsafeBlueprintPath        dispatcher.unsafe_blueprint_path
        ├── BlueprintMalformed         dispatcher.blueprint_malformed
        ├── BlueprintSchemaMismatch    dispatcher.blueprint_schema_mismatch
        ├── BlueprintIdentityMismatch  dispatcher.blueprint_identity_mismatch
        ├── ChildUnregistered          dispatcher.child_unregistered
        ├── HostCallerInvalid          dispatcher.host_caller_invalid
        ├── InterfaceNotFound          dispatcher.interface_not_found
        ├── SourceInterfaceInvalid     dispatcher.source_interface_invalid
        ├── SourceLocatorInvalid       dispatcher.source_locator_invalid
        ├── SourceNotFound             dispatcher.source_not_found
        ├── InterfaceVersionMismatch   dispatcher.interface_version_mismatch
        ├── NamespaceRouteMissing      dispatcher.namespace_route_missing
        ├── NamespaceVersionMismatch   dispatcher.namespace_version_mismatch
        ├── NamespaceSurfaceExcludes   dispatcher.namespace_surface_excludes_interface
        ├── AccessInvalid              dispatcher.access_invalid
        ├── UnauthorizedCaller         dispatcher.unauthorized_caller
        ├── ResolutionFailed           dispatcher.resolution_failed
        ├── LaunchFailed               dispatcher.launch_failed
        ├── SecurityLevelMismatch      dispatcher.security_level_mismatch
        ├── SecurityLevelUnavailable   dispatcher.security_level_unavailable
        ├── NestedLimitExceeded        dispatcher.nested_limit_exceeded
        ├── SetupRefusal > SetupRequired, SetupBusy, SetupManaged: setup_{required,busy,managed}
        ├── SetupGraphInvalid          dispatcher.setup_graph_invalid
        ├── SetupUnavailable           dispatcher.setup_unavailable
        ├── SetupFlowRefused           dispatcher.setup_flow_refused
        └── InternalFailure            dispatcher.internal_error  (a bug; MCP's catch-all)

Denials derive only from this root, never from ``ValueError`` or ``OSError``,
so a generic ``except ValueError`` elsewhere can never swallow one.
"""

from __future__ import annotations

from typing import ClassVar, Final

from boring_dispatch._refusal import SetupFacts

__all__ = [
    "AccessInvalid",
    "BlueprintIdentityMismatch",
    "BlueprintMalformed",
    "BlueprintSchemaMismatch",
    "ChildUnregistered",
    "Denied",
    "DispatchError",
    "HostCallerInvalid",
    "InterfaceNotFound",
    "InterfaceVersionMismatch",
    "InternalFailure",
    "InvalidArguments",
    "InvalidCallerReference",
    "InvalidInterfaceId",
    "InvalidModuleId",
    "InvalidRequest",
    "InvalidRouteRequest",
    "LaunchFailed",
    "ModuleAmbiguous",
    "ModuleNotFound",
    "NamespaceRouteMissing",
    "NamespaceSurfaceExcludes",
    "NamespaceVersionMismatch",
    "NestedLimitExceeded",
    "NoFixture",
    "ObservationTooLarge",
    "RegistryInvalid",
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
    "TableError",
    "ToolError",
    "UnauthorizedCaller",
    "UnknownTool",
    "UnsafeBlueprintPath",
]


class DispatchError(Exception):
    """Root of every refusal. ``code`` is the identity; the message is for people."""

    #: Stable machine-readable identity of the failure.
    code: ClassVar[str] = "error"
    #: Exit status of the CLI when this error ends a command.
    exit_code: ClassVar[int] = 2

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message: Final = message


# --------------------------------------------------------------------------- #
# Python table


class TableError(DispatchError):
    """A call to a Python table was refused or failed in an expected way."""


class InvalidRequest(TableError):
    """Not JSON, not an object, no string name, args not an object, too large or too deep."""

    code = "invalid_request"


class UnknownTool(TableError):
    """The name is not in the table (or the tool is disabled: the two look the same)."""

    code = "unknown_tool"


class InvalidArguments(TableError):
    """The arguments fail the tool's schema. Details name field paths, never values."""

    code = "invalid_arguments"

    def __init__(self, message: str, details: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__(message)
        #: ``(path, reason)`` pairs; never the submitted values.
        self.details: Final = details


class Denied(TableError):
    """A policy bit refused the call before the handler ran."""

    code = "denied"


class ToolError(TableError):
    """Raised by a handler on purpose: an expected failure it chose to explain.

    The message reaches the model, so handlers must not put secrets in it; a
    message that holds the value of a sensitive argument is replaced whole by
    a fixed text (never scrubbed in place, which would show where it was).
    """

    code = "tool_error"


class ObservationTooLarge(TableError):
    """The handler's result exceeds the table's observation cap."""

    code = "observation_too_large"


class NoFixture(TableError):
    """A fixture world has no recorded outcome (and no stand-in) for these arguments.

    Raised only by the answers of a fixture world; the same exception raised by
    a real handler is an ``internal_error`` like any other.
    """

    code = "no_fixture"


class RegistryInvalid(TableError):
    """A table could not be built or loaded: bad name, description or schema, bad spec.

    Raised at construction (never by a dispatch), so a bad table fails at import.
    """

    code = "registry_invalid"


# --------------------------------------------------------------------------- #
# Blueprint repository


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
            "caller_module_id": self.caller_module_id,
            "target_module_id": self.target_module_id,
            "message": self.message,
        }
        if self.interface_id is not None:
            payload["interface_id"] = self.interface_id
        return payload


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
