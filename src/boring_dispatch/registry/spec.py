"""``--registry pkg.module:NAME``: how an operator names a Python table.

This is operator configuration read once at start-up, never the dispatch
path: a tool name never reaches this module. Even so, the spec is checked
against a strict pattern before anything is imported, and the attribute is
read from the module's own namespace (no ``getattr``, so no module
``__getattr__`` hook runs).
"""

from __future__ import annotations

import re
from importlib import import_module
from types import ModuleType
from typing import Final

from boring_dispatch.errors import RegistryInvalid
from boring_dispatch.registry.registry import Registry

__all__ = ["load_registry"]

_IDENTIFIER: Final = r"[A-Za-z_][A-Za-z0-9_]*"
_SPEC: Final = re.compile(rf"(?P<module>{_IDENTIFIER}(?:\.{_IDENTIFIER})*):(?P<name>{_IDENTIFIER})")
_MAX_SPEC: Final = 256


def load_registry(spec: str) -> Registry:
    """Import ``pkg.module`` and return its module-level ``Registry`` named ``NAME``.

    The module must be importable from ``sys.path`` as it stands (the caller
    decides whether the working directory belongs there).

    Raises:
        RegistryInvalid: the spec does not match ``pkg.module:NAME`` (ASCII
            identifiers only, at most 256 characters); the module cannot be
            imported or raises while importing; it has no such top-level name;
            or the object is not a :class:`Registry`.
    """
    match = _SPEC.fullmatch(spec) if len(spec) <= _MAX_SPEC else None
    if match is None:
        raise RegistryInvalid(f"registry spec {spec[:80]!r} must look like pkg.module:NAME")
    module_name, name = match["module"], match["name"]
    try:
        module = _import(module_name)
    except Exception as error:  # any failure of the operator's module is reported
        raise RegistryInvalid(
            f"cannot import {module_name!r} for the registry: {type(error).__name__}: {error}"
        ) from error
    namespace = vars(module)
    if name not in namespace:
        raise RegistryInvalid(f"module {module_name!r} has no top-level name {name!r}")
    registry = namespace[name]
    if not isinstance(registry, Registry):
        raise RegistryInvalid(
            f"{module_name}:{name} is a {type(registry).__name__}, not a boring_dispatch Registry"
        )
    return registry


def _import(module_name: str) -> ModuleType:
    return import_module(module_name)  # allowed: operator-supplied registry spec, never a tool name
