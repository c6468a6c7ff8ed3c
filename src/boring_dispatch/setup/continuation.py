"""Manager requests: the complete ``invoke_security_2`` projections MCP results carry.

A continuation is sent unchanged; it keeps the outer call's caller, interface
and version as ``resume`` (compact, sorted JSON text).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final

from boring_dispatch.errors import SetupRefusal
from boring_dispatch.setup.names import MANAGER_MODULE

__all__ = ["MANAGER_VERSION", "manager_call", "manager_request", "resume_text"]

#: Every manager route is version 1.
MANAGER_VERSION: Final = 1


def resume_text(caller: str, interface: str, version: int | None) -> str:
    """The ``resume`` option: the call to make again once setup is done."""
    return json.dumps(
        {"caller": caller, "interface": interface, "version": version},
        sort_keys=True,
        separators=(",", ":"),
    )


def manager_call(caller: str, route: str, options: Mapping[str, object]) -> dict[str, object]:
    """A complete projection of the manager route ``route`` for ``caller``."""
    return {
        "caller": caller,
        "interface": f"{MANAGER_MODULE}.interface.{route}",
        "version": MANAGER_VERSION,
        "arguments": {"positionals": [], "options": dict(options), "stdin": None},
        "dry_run": False,
    }


def manager_request(
    error: SetupRefusal, caller: str, interface: str, version: int | None
) -> dict[str, object]:
    """The continuation of a ``setup_required`` or ``setup_managed`` refusal."""
    key = f"{error.setup}@{error.version}"
    if error.code == "dispatcher.setup_managed" and error.reason == "teardown":
        return manager_call(caller, "teardown", {"setup": error.setup})
    return manager_call(
        caller, "begin", {"setup": key, "resume": resume_text(caller, interface, version)}
    )
