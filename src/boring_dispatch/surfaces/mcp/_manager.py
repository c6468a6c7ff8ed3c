"""MCP calls of the built-in setup manager (``setup-interface-manager._rtx.interface.<route>``).

Every route is security level 2 (``invoke_security_2`` only), version 1, takes
its arguments as options (no positionals, no stdin), and acts for a
discoverable top-level skill like any host call. A dry run describes the call
and runs nothing. The route's result is under ``dispatcher.setup`` (and as
machine stdout); a refusal is an ordinary dispatcher error result.

The routes that launch gateways (``run-python``: the flow's Python step;
``teardown`` and ``teardown-all``: teardown exports) launch them with the
server's limits (``--timeout``, ``--run-as``, the fork server) and the call's
trace id, as any gateway of the session, and a live call of one of them takes
one of the server's call slots (:class:`ManagerLaunch`), as a launch does.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Final

from boring_dispatch.errors import (
    InterfaceVersionMismatch,
    InvalidRouteRequest,
    SecurityLevelMismatch,
)
from boring_dispatch.records import ExecLimits, RouteRequest
from boring_dispatch.repository.gate import MANAGER_MODULE
from boring_dispatch.repository.load.config import load_config
from boring_dispatch.repository.load.exports import require_host_caller
from boring_dispatch.repository.load.lookup import ModuleLoader
from boring_dispatch.repository.projection import Projection
from boring_dispatch.repository.repository import Repository
from boring_dispatch.surfaces.mcp._results import ToolOutcome

__all__ = [
    "MANAGER_PREFIX",
    "ManagerLaunch",
    "is_manager_call",
    "launches_gateways",
    "manager_outcome",
]

MANAGER_PREFIX: Final = MANAGER_MODULE + ".interface."
_LEVEL: Final = 2
_MACHINE: Final = {"stdout": "machine", "stderr": "machine"}
#: The routes that launch gateways: a Python setup step, teardown exports.
_LAUNCHING: Final = frozenset({"run-python", "teardown", "teardown-all"})


def is_manager_call(request: RouteRequest) -> bool:
    """True when the target is exactly a route of the manager module."""
    return (
        request.target.startswith(MANAGER_PREFIX)
        and "." not in request.target[len(MANAGER_PREFIX) :]
    )


def launches_gateways(request: RouteRequest) -> bool:
    """True when the manager route of ``request`` may launch gateways (it needs a slot)."""
    return request.target[len(MANAGER_PREFIX) :] in _LAUNCHING


@dataclass(frozen=True, slots=True)
class ManagerLaunch:
    """A live manager route that launches gateways, to run once the server holds a slot."""

    #: The route's outcome (it raises ``RouteError`` for a refusal).
    answer: Callable[[], ToolOutcome]
    #: The outcome of an exception ``answer`` raised (a refusal, or internal_error).
    refused: Callable[[BaseException], ToolOutcome]

    def run(self) -> ToolOutcome:
        """The route's outcome; never raises."""
        try:
            return self.answer()
        except BaseException as error:  # noqa: BLE001 - a worker thread: never a signal
            return self.refused(error)


def manager_outcome(  # noqa: PLR0913 - each from the call
    repository: Repository,
    projection: Projection,
    raw: object,
    tier: int,
    trace_id: str | None,
    *,
    limits: ExecLimits | None = None,
) -> ToolOutcome:
    """Run (or, dry, describe) one manager route; refusals raise ``RouteError``.

    A live route is a repository call: it leaves one audit record (refusals
    included) and does not run while an audit sink is failing. The gateways it
    launches get ``limits`` (the server's) and ``trace_id``.
    """
    request, dry_run = projection.request, projection.dry_run
    answer = partial(
        _outcome,
        repository,
        request,
        raw,
        tier=tier,
        dry_run=dry_run,
        limits=limits,
        trace_id=trace_id,
    )
    if dry_run:
        return answer()
    return repository.answer_live(request, answer, trace_id=trace_id, security_level=_LEVEL)


def _outcome(  # noqa: PLR0913 - keyword-only, each from the call
    repository: Repository,
    request: RouteRequest,
    raw: object,
    *,
    tier: int,
    dry_run: bool,
    limits: ExecLimits | None,
    trace_id: str | None,
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
        manager = SetupManager(repository, limits=limits, trace_id=trace_id)
        result = manager.call(route, request.caller, options)
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
    traced = None if dry_run else trace_id  # as every non-dry repository call (mcp.md, 6)
    if traced is not None:
        dispatcher["trace_id"] = traced
    structured: dict[str, object] = {
        "result": {"stdout": text, "stderr": "", "exit_code": 0, "dispatcher": dispatcher}
    }
    return ToolOutcome(structured=structured, texts=("",), is_error=False, trace_id=traced)
