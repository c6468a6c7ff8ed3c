from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import types

import boring_dispatch
from boring_dispatch import errors


def test_all_lists_the_public_names_sorted() -> None:
    assert boring_dispatch.__all__ == sorted(boring_dispatch.__all__)


def test_all_is_exactly_what_the_package_exports() -> None:
    # httpx-style: nothing is exported by accident, nothing listed is missing.
    for name in boring_dispatch.__all__:
        getattr(boring_dispatch, name)
    exported = {
        name
        for name in dir(boring_dispatch)
        if not name.startswith("_")
        and not isinstance(getattr(boring_dispatch, name), types.ModuleType)
        and name not in {"annotations", "TYPE_CHECKING"}
    }
    assert exported == set(boring_dispatch.__all__)


def test_the_version_is_the_installed_distribution_version() -> None:
    assert boring_dispatch.__version__ == importlib.metadata.version("boring-dispatch")


def test_dir_lists_the_public_names_before_they_are_resolved() -> None:
    code = (
        "import boring_dispatch; print(sorted(set(dir(boring_dispatch)) & {'Registry', 'Route'}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "['Registry', 'Route']"


def test_a_repository_can_be_used_with_top_level_names_only() -> None:
    # What a caller needs to build requests, limits and read results is exported.
    for name in ("Repository", "RouteRequest", "ExecLimits", "ExecutionResult", "Route"):
        assert getattr(boring_dispatch, name).__name__ == name
    assert issubclass(boring_dispatch.RouteError, boring_dispatch.DispatchError)
    assert issubclass(boring_dispatch.TableError, boring_dispatch.DispatchError)


def test_every_public_name_resolves() -> None:
    for name in boring_dispatch.__all__:
        assert getattr(boring_dispatch, name) is not None


def test_an_unknown_attribute_is_an_attribute_error() -> None:
    try:
        boring_dispatch.__getattr__("os")
    except AttributeError:
        return
    raise AssertionError("unknown attributes must not resolve")


def test_every_error_class_has_a_unique_code_and_derives_from_the_root() -> None:
    classes = [getattr(errors, name) for name in errors.__all__]
    assert all(issubclass(cls, errors.DispatchError) for cls in classes)
    assert not any(issubclass(cls, (ValueError, OSError)) for cls in classes)
    codes = [cls.code for cls in classes if cls not in (errors.TableError, errors.RouteError)]
    assert len(codes) == len(set(codes))


def test_the_integration_names_are_exported() -> None:
    # Injected arguments and tool specs are what framework adapters build on.
    assert {"Injected", "ToolSpec"} <= set(boring_dispatch.__all__)
    assert boring_dispatch.Injected.__module__ == "boring_dispatch.registry.injected"
    assert boring_dispatch.ToolSpec.__module__ == "boring_dispatch.registry.tool_specs"
