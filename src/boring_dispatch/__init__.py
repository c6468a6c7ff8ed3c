"""boring-dispatch: the one place where a model's tool call becomes (or does not become) an action.

Everything a user needs is importable from here (lazily, so that
``import boring_dispatch`` and the CLI stay fast):

- the Python table: :class:`Registry`, :class:`Tool`, :data:`Sensitive`,
  :class:`Injected`, :class:`TableLimits`, :class:`ToolSpec`, and what a call
  returns, :class:`Observation` and :class:`ObservationError`; a handler's
  expected failure is :class:`ToolError`; a tool's :class:`Fixture` of
  :class:`Recorded` outcomes, written by a :class:`FixtureRecorder`;
- the blueprint repository: :class:`Repository`, the request it takes
  (:class:`RouteRequest`), the decision it makes (:class:`Route`,
  :class:`RouteWarning`) and the run it performs (:class:`ExecLimits`,
  :class:`ExecutionResult`); its managed setup, :class:`SetupManager`
  (``docs/setup.md``);
- the records both write: :class:`AuditSink`, :class:`AuditEvent`,
  :class:`JsonLinesAuditSink`, :class:`TraceRecorder`; a repository's
  :class:`RepositoryAuditSink` and :class:`RepositoryAuditEvent`;
- the roots of the exception tree: :class:`DispatchError`, :class:`TableError`,
  :class:`RouteError`.

Public modules, beside this one: :mod:`boring_dispatch.errors` (the whole
exception tree with its codes), :mod:`boring_dispatch.gateway` (for gateway
authors), :mod:`boring_dispatch.testing` (fake models, golden-file checks),
:mod:`boring_dispatch.golden`, :mod:`boring_dispatch.tools.http` (the safe
HTTP GET tool), :mod:`boring_dispatch.registry.deployed` (deployed tables) and
:mod:`boring_dispatch.registry.fixture_files` (reading fixture files), and
the framework adapters :mod:`boring_dispatch.adapters.pydantic_ai`,
:mod:`boring_dispatch.adapters.openai_agents` and
:mod:`boring_dispatch.adapters.langchain` (each an optional extra).
Every other module is internal and may change without notice;
``docs/architecture.md`` maps them.
"""

# No runtime import here (not even ``__future__`` or ``typing``): the ``dispatcher``
# entry point runs after this file and before anything else of ours, and must see
# no module found on a hostile PYTHONPATH (see ``_entry``).
TYPE_CHECKING = False

__version__ = "0.1.0"

__all__ = [
    "AuditEvent",
    "AuditSink",
    "DispatchError",
    "ExecLimits",
    "ExecutionResult",
    "Fixture",
    "FixtureRecorder",
    "Injected",
    "JsonLinesAuditSink",
    "Observation",
    "ObservationError",
    "Recorded",
    "Registry",
    "Repository",
    "RepositoryAuditEvent",
    "RepositoryAuditSink",
    "Route",
    "RouteError",
    "RouteRequest",
    "RouteWarning",
    "Sensitive",
    "SetupManager",
    "TableError",
    "TableLimits",
    "Tool",
    "ToolError",
    "ToolSpec",
    "TraceRecorder",
]

if TYPE_CHECKING:
    from boring_dispatch.errors import DispatchError, RouteError, TableError, ToolError
    from boring_dispatch.observation import Observation, ObservationError
    from boring_dispatch.observe.audit import (
        AuditEvent,
        AuditSink,
        JsonLinesAuditSink,
        TraceRecorder,
    )
    from boring_dispatch.observe.repository_audit import (
        RepositoryAuditEvent,
        RepositoryAuditSink,
    )
    from boring_dispatch.records import (
        ExecLimits,
        ExecutionResult,
        Route,
        RouteRequest,
        RouteWarning,
    )
    from boring_dispatch.registry.fixture_files import FixtureRecorder
    from boring_dispatch.registry.fixtures import Fixture, Recorded
    from boring_dispatch.registry.injected import Injected
    from boring_dispatch.registry.records import TableLimits
    from boring_dispatch.registry.registry import Registry, Tool
    from boring_dispatch.registry.schema import Sensitive
    from boring_dispatch.registry.tool_specs import ToolSpec
    from boring_dispatch.repository.repository import Repository
    from boring_dispatch.setup.manager.routes import SetupManager
del TYPE_CHECKING

# Each public name and the module that defines it: a fixed table of our own modules.
_LAZY = {
    "AuditEvent": "boring_dispatch.observe.audit",
    "AuditSink": "boring_dispatch.observe.audit",
    "DispatchError": "boring_dispatch.errors",
    "ExecLimits": "boring_dispatch.records",
    "ExecutionResult": "boring_dispatch.records",
    "Fixture": "boring_dispatch.registry.fixtures",
    "FixtureRecorder": "boring_dispatch.registry.fixture_files",
    "Injected": "boring_dispatch.registry.injected",
    "JsonLinesAuditSink": "boring_dispatch.observe.audit",
    "Observation": "boring_dispatch.observation",
    "ObservationError": "boring_dispatch.observation",
    "Recorded": "boring_dispatch.registry.fixtures",
    "Registry": "boring_dispatch.registry.registry",
    "Repository": "boring_dispatch.repository.repository",
    "RepositoryAuditEvent": "boring_dispatch.observe.repository_audit",
    "RepositoryAuditSink": "boring_dispatch.observe.repository_audit",
    "Route": "boring_dispatch.records",
    "RouteError": "boring_dispatch.errors",
    "RouteRequest": "boring_dispatch.records",
    "RouteWarning": "boring_dispatch.records",
    "Sensitive": "boring_dispatch.registry.schema",
    "SetupManager": "boring_dispatch.setup.manager.routes",
    "TableError": "boring_dispatch.errors",
    "TableLimits": "boring_dispatch.registry.records",
    "Tool": "boring_dispatch.registry.registry",
    "ToolError": "boring_dispatch.errors",
    "ToolSpec": "boring_dispatch.registry.tool_specs",
    "TraceRecorder": "boring_dispatch.observe.audit",
}


def __getattr__(name: str) -> object:
    # A fixed table of our own public names: never a name chosen by a caller.
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'boring_dispatch' has no attribute {name!r}")
    import importlib

    module = importlib.import_module(module_name)  # allowed: fixed table of own modules
    value = getattr(module, name)
    globals()[name] = value  # resolved once; later lookups do not come back here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
