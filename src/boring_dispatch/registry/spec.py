"""``--registry pkg.module:NAME``: how an operator names a Python table.

This is operator configuration read once at start-up, never the dispatch
path: a tool name never reaches this module. Even so, the spec is checked
against a strict pattern before anything is imported, and the attribute is
read from the module's own namespace (no ``getattr``, so no module
``__getattr__`` hook runs).

The working directory is never put on ``sys.path``. The module is imported
from ``sys.path`` as it stands (installed packages first); only when its
top-level package is not found there, that one top-level name is looked up
in the working directory, then in the ``PYTHONPATH`` entries (which the
dispatcher's isolated interpreter does not read, see ``boring_dispatch._entry``),
and loaded from its spec, and its submodules are
found through the package's own ``__path__``. So a checkout's ``pydantic/``,
``anyio/``, ``mcp/``, ``yaml/`` or ``json.py`` never shadows a dependency:
nothing else is ever imported from the working directory.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from importlib.machinery import PathFinder
from importlib.util import find_spec, module_from_spec
from pathlib import Path
from types import ModuleType
from typing import Final, cast

from boring_dispatch.errors import RegistryInvalid
from boring_dispatch.registry.registry import Registry

__all__ = ["load_context", "load_registry"]

_IDENTIFIER: Final = r"[A-Za-z_][A-Za-z0-9_]*"
_SPEC: Final = re.compile(rf"(?P<module>{_IDENTIFIER}(?:\.{_IDENTIFIER})*):(?P<name>{_IDENTIFIER})")
_MAX_SPEC: Final = 256


def load_context(spec: str) -> Callable[[], Mapping[str, object]]:
    """``--context pkg.module:NAME``: the operator's function that supplies injected arguments.

    Loaded like :func:`load_registry`; the function is called with no
    arguments for every call and returns a mapping (for example, secrets read
    from the environment or a vault), from which each tool takes only the
    names it marks ``Injected``.

    Raises:
        RegistryInvalid: the spec is malformed, the module cannot be imported,
            it has no such top-level name, or the object is not callable.
    """
    function = _load_object(spec, "context")
    if not callable(function) or isinstance(function, type):
        raise RegistryInvalid(f"{spec[:80]} is a {type(function).__name__}, not a function")
    return cast("Callable[[], Mapping[str, object]]", function)


def load_registry(spec: str) -> Registry:
    """Import ``pkg.module`` and return its module-level ``Registry`` named ``NAME``.

    The module comes from ``sys.path`` as it stands or, when its top-level
    package is not there, from the working directory (that one package only;
    see the module docstring).

    Raises:
        RegistryInvalid: the spec does not match ``pkg.module:NAME`` (ASCII
            identifiers only, at most 256 characters); the module cannot be
            imported or raises while importing; it has no such top-level name;
            or the object is not a :class:`Registry`.
    """
    registry = _load_object(spec, "registry")
    if not isinstance(registry, Registry):
        module_name, _, name = spec.partition(":")
        raise RegistryInvalid(
            f"{module_name}:{name} is a {type(registry).__name__}, not a boring_dispatch Registry"
        )
    return registry


def _load_object(spec: str, kind: str) -> object:
    """The module-level object ``NAME`` of ``pkg.module``, read from the module's namespace."""
    match = _SPEC.fullmatch(spec) if len(spec) <= _MAX_SPEC else None
    if match is None:
        raise RegistryInvalid(f"{kind} spec {spec[:80]!r} must look like pkg.module:NAME")
    module_name, name = match["module"], match["name"]
    try:
        module = _import(module_name)
    except Exception as error:  # any failure of the operator's module is reported
        raise RegistryInvalid(
            f"cannot import {module_name!r} for the {kind}: {type(error).__name__}: {error}"
        ) from error
    namespace = vars(module)
    if name not in namespace:
        raise RegistryInvalid(f"module {module_name!r} has no top-level name {name!r}")
    return namespace[name]


def _import(module_name: str) -> ModuleType:
    # allowed: the operator's registry spec (checked against _SPEC), never a tool name
    top = module_name.partition(".")[0]
    if top not in sys.modules and find_spec(top) is None:
        _load_from_operator_paths(top)
    return import_module(module_name)


def _load_from_operator_paths(top: str) -> None:
    """Load the top-level package (or module) ``top`` from the working directory or PYTHONPATH.

    Nothing is added to ``sys.path``; when none of them has ``top``, nothing
    happens and the import that follows reports it.
    """
    extra = [entry for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry]
    spec = PathFinder.find_spec(top, [str(Path.cwd()), *extra])
    if spec is None:
        return
    module = module_from_spec(spec)
    sys.modules[top] = module
    try:
        if spec.loader is not None:  # None: a namespace package, nothing to run
            spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(top, None)
        raise
