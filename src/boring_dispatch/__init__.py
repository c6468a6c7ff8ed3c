"""boring-dispatch: the one place where a model's tool call becomes (or does not become) an action.

Public API (imported lazily so that ``import boring_dispatch`` and the CLI stay fast):

- :class:`Registry`, :class:`Tool`, :class:`Observation`, :class:`ToolError`,
  :data:`Sensitive`: the Python table.
- :class:`Repository`: the blueprint repository.
- :mod:`boring_dispatch.errors`: the exception tree.
"""

# No runtime import here (not even ``__future__`` or ``typing``): the ``dispatcher``
# entry point runs after this file and before anything else of ours, and must see
# no module found on a hostile PYTHONPATH (see ``_entry``).
TYPE_CHECKING = False
__all__ = [
    "Observation",
    "Registry",
    "Repository",
    "Sensitive",
    "Tool",
    "ToolError",
]

if TYPE_CHECKING:
    from boring_dispatch.blueprints.repository import Repository
    from boring_dispatch.errors import ToolError
    from boring_dispatch.observation import Observation
    from boring_dispatch.table.python import Registry, Tool
    from boring_dispatch.table.schema import Sensitive
del TYPE_CHECKING

_LAZY = {
    "Observation": "boring_dispatch.observation",
    "Registry": "boring_dispatch.table.python",
    "Repository": "boring_dispatch.blueprints.repository",
    "Sensitive": "boring_dispatch.table.schema",
    "Tool": "boring_dispatch.table.python",
    "ToolError": "boring_dispatch.errors",
}


def __getattr__(name: str) -> object:
    # A fixed table of our own public names: never a name chosen by a caller.
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'boring_dispatch' has no attribute {name!r}")
    import importlib

    module = importlib.import_module(module_name)  # allowed: fixed table of own modules
    return getattr(module, name)
