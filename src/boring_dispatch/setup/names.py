"""The reserved names of managed setup: the manager module and the setup/teardown exports."""

from __future__ import annotations

from typing import Final

__all__ = [
    "MANAGER_MODULE",
    "SETUP_NAME",
    "TEARDOWN_NAME",
    "is_manager_module",
    "setup_export_id",
    "teardown_export_id",
]

#: The reserved module ID of the built-in setup manager.
MANAGER_MODULE: Final = "setup-interface-manager._rtx"
SETUP_NAME: Final = "setup"
TEARDOWN_NAME: Final = "teardown"


def is_manager_module(module_id: object) -> bool:
    """True for exactly the manager's module ID (a look-alike is not the manager)."""
    return type(module_id) is str and module_id == MANAGER_MODULE


def setup_export_id(module_id: str) -> str:
    """``<module>.interface.setup``."""
    return f"{module_id}.interface.{SETUP_NAME}"


def teardown_export_id(module_id: str) -> str:
    """``<module>.interface.teardown``."""
    return f"{module_id}.interface.{TEARDOWN_NAME}"
