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

from boring_dispatch.errors._base import DispatchError
from boring_dispatch.errors._route import (
    AccessInvalid,
    BlueprintIdentityMismatch,
    BlueprintMalformed,
    BlueprintSchemaMismatch,
    ChildUnregistered,
    HostCallerInvalid,
    InterfaceNotFound,
    InterfaceVersionMismatch,
    InternalFailure,
    InvalidCallerReference,
    InvalidInterfaceId,
    InvalidModuleId,
    InvalidRouteRequest,
    LaunchFailed,
    ModuleAmbiguous,
    ModuleNotFound,
    NamespaceRouteMissing,
    NamespaceSurfaceExcludes,
    NamespaceVersionMismatch,
    NestedLimitExceeded,
    ResolutionFailed,
    RouteError,
    RuntimeMisconfigured,
    SecurityLevelMismatch,
    SecurityLevelUnavailable,
    SetupBusy,
    SetupFlowRefused,
    SetupGraphInvalid,
    SetupManaged,
    SetupRefusal,
    SetupRequired,
    SetupUnavailable,
    SourceInterfaceInvalid,
    SourceLocatorInvalid,
    SourceNotFound,
    UnauthorizedCaller,
    UnsafeBlueprintPath,
)
from boring_dispatch.errors._table import (
    Denied,
    InvalidArguments,
    InvalidRequest,
    NoFixture,
    ObservationTooLarge,
    RegistryInvalid,
    TableError,
    ToolError,
    UnknownTool,
)

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
