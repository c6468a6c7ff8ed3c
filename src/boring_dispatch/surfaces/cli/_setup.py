"""``dispatcher setup ROUTE``: the human front end of the setup manager.

Every route of the manager (``status``, ``begin``, ``run-python``,
``run-markdown``, ``settle``, ``recover``, ``recover-busy``, ``teardown``,
``teardown-all``, ``invalidate``, ``authorize``, ``authorize-markdown-call``)
with its options as flags; the result is printed as JSON. A refusal is the
usual error line (``--error-format json``), exit 2. The same implementation
serves MCP and the Python API.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from boring_dispatch.errors import DispatchError
from boring_dispatch.surfaces.cli._common import argument_parser, report_error

if TYPE_CHECKING:
    from boring_dispatch.observe.audit import JsonLinesAuditSink
    from boring_dispatch.repository.repository import Repository
    from boring_dispatch.setup.manager.routes import SetupManager

__all__ = ["run"]

#: Every route of the manager is security level 2 (as over MCP, ``invoke_security_2``).
_MANAGER_LEVEL = 2

#: flag -> option name of the manager.
_OPTIONS = {
    "interface": "interface",
    "version": "version",
    "setup": "setup",
    "resume": "resume",
    "flow": "flow",
    "outcome": "outcome",
}


def run(argv: Sequence[str]) -> int:
    """Run one manager route from the command line; return the exit status."""
    from boring_dispatch.setup.manager.options import ROUTE_OPTIONS

    parser = argument_parser(
        prog="dispatcher setup",
        description="Managed setup: the setup manager's routes (docs/setup.md).",
    )
    parser.add_argument("route", choices=sorted(ROUTE_OPTIONS))
    parser.add_argument("--config", "--repository-config", dest="config", required=True)
    parser.add_argument("--ledger", metavar="URL|PATH", help="postgresql://... or a SQLite file")
    parser.add_argument("--caller", default="", help="the top-level skill continuations act for")
    parser.add_argument("--error-format", choices=("text", "json"), default="text")
    parser.add_argument("--cascade", action="store_true", help="teardown: dependents too")
    parser.add_argument(
        "--audit", metavar="PATH", help="append the route's JSON-lines audit record"
    )
    for flag in _OPTIONS:
        parser.add_argument(f"--{flag}")
    options = parser.parse_args(list(argv))
    try:
        from boring_dispatch.repository.repository import Repository
        from boring_dispatch.setup.manager.routes import SetupManager

        sinks: tuple[JsonLinesAuditSink, ...] = ()
        if options.audit is not None:
            from boring_dispatch.repository._audit import open_audit_file

            sinks = (open_audit_file(options.audit),)  # closed when the process ends
        repository = Repository.open(options.config, ledger=options.ledger, audit=sinks)
        manager = SetupManager(repository)
        parsed = vars(options)  # the fixed flags of _OPTIONS only
        given: dict[str, object] = {
            name: parsed[flag] if flag != "version" else int(parsed[flag])
            for flag, name in _OPTIONS.items()
            if parsed[flag] is not None
        }
        if options.cascade:
            given["cascade"] = True
        result = _audited(repository, manager, options.route, options.caller, given)
    except DispatchError as error:
        report_error(error, options.error_format, sys.stderr)
        return error.exit_code
    except ValueError:
        parser.error("--version must be an integer")
    sys.stdout.write(json.dumps(result, indent=2, sort_keys=True) + "\n")
    return 0


def _audited(
    repository: Repository,
    manager: SetupManager,
    route: str,
    caller: str,
    given: dict[str, object],
) -> dict[str, object]:
    """Run the route as one live repository call: one audit record (its options never in it)."""
    from functools import partial

    from boring_dispatch.observe.trace import new_trace_id
    from boring_dispatch.records import RouteRequest
    from boring_dispatch.repository.gate import MANAGER_MODULE

    request = RouteRequest(caller=caller, target=f"{MANAGER_MODULE}.interface.{route}")
    answer = partial(manager.call, route, caller, given)
    return repository.answer_live(
        request, answer, trace_id=new_trace_id(), security_level=_MANAGER_LEVEL
    )
