"""MCP calls of the built-in setup manager (``setup-interface-manager._rtx.interface.<route>``).

Every route is security level 2 (``invoke_security_2`` only), version 1, takes
its arguments as options (no positionals, no stdin), and acts for a
discoverable top-level skill like any host call. A dry run describes the call
and runs nothing. The route's result is under ``dispatcher.setup`` (and as
machine stdout); a refusal is an ordinary dispatcher error result.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import partial
from typing import Final

from boring_dispatch.errors import (
    InterfaceVersionMismatch,
    InvalidRouteRequest,
    SecurityLevelMismatch,
)
from boring_dispatch.records import RouteRequest
from boring_dispatch.repository.gate import MANAGER_MODULE
from boring_dispatch.repository.load.config import load_config
from boring_dispatch.repository.load.exports import require_host_caller
from boring_dispatch.repository.load.lookup import ModuleLoader
from boring_dispatch.repository.projection import Projection
from boring_dispatch.repository.repository import Repository
from boring_dispatch.surfaces.mcp._results import ToolOutcome

__all__ = ["MANAGER_PREFIX", "is_manager_call", "manager_outcome"]

MANAGER_PREFIX: Final = MANAGER_MODULE + ".interface."
_LEVEL: Final = 2
_MACHINE: Final = {"stdout": "machine", "stderr": "machine"}


def is_manager_call(request: RouteRequest) -> bool:
    """True when the target is exactly a route of the manager module."""
    return (
        request.target.startswith(MANAGER_PREFIX)
        and "." not in request.target[len(MANAGER_PREFIX) :]
    )


def manager_outcome(
    repository: Repository, projection: Projection, raw: object, tier: int, trace_id: str | None
) -> ToolOutcome:
    """Run (or, dry, describe) one manager route; refusals raise ``RouteError``.

    A live route is a repository call: it leaves one audit record (refusals
    included) and does not run while an audit sink is failing.
    """
    request, dry_run = projection.request, projection.dry_run
    answer = partial(_outcome, repository, request, raw, tier=tier, dry_run=dry_run)
    if dry_run:
        return answer()
    return repository.answer_live(request, answer, trace_id=trace_id, security_level=_LEVEL)


def _outcome(
    repository: Repository,
    request: RouteRequest,
    raw: object,
    *,
    tier: int,
    dry_run: bool,
) -> ToolOutcome:
    from boring_dispatch.setup.manager.routes import SetupManager

    route = request.target[len(MANAGER_PREFIX) :]
    if tier != _LEVEL:
        raise SecurityLevelMismatch(
            f"{request.target} is security level {_LEVEL}, not {tier}: call invoke_security_2",
            target_module_id=MANAGER_MODULE,
            interface_id=request.target,
        )
    if request.version not in (None, 1):
        raise InterfaceVersionMismatch(
            f"version mismatch for {request.target}: available 1",
            target_module_id=MANAGER_MODULE,
            interface_id=request.target,
        )
    arguments = raw.get("arguments", {}) if isinstance(raw, Mapping) else None
    options = arguments.get("options", {}) if isinstance(arguments, Mapping) else {}
    positionals = arguments.get("positionals", []) if isinstance(arguments, Mapping) else []
    stdin = arguments.get("stdin") if isinstance(arguments, Mapping) else None
    if arguments is None or positionals or stdin is not None or not isinstance(options, Mapping):
        raise InvalidRouteRequest("setup manager routes take options only")
    caller = ModuleLoader(load_config(repository.config_path)).load_ancestry(request.caller)
    require_host_caller(caller[-1])
    if dry_run:
        result: dict[str, object] = {"route": route, "dry_run": True}
    else:
        result = SetupManager(repository).call(route, request.caller, options)
    text = json.dumps(result, sort_keys=True)
    dispatcher: dict[str, object] = {
        "caller_module_id": request.caller,
        "target": request.target,
        "target_module_id": MANAGER_MODULE,
        "security_level": _LEVEL,
        "output_audiences": dict(_MACHINE),
        "warnings": [],
        "setup": result,
    }
    structured: dict[str, object] = {
        "result": {"stdout": text, "stderr": "", "exit_code": 0, "dispatcher": dispatcher}
    }
    return ToolOutcome(structured=structured, texts=("",), is_error=False)
