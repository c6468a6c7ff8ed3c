"""The ``dispatcher`` subcommands: ``names``, ``replay``, ``describe`` and ``mcp``.

``deploy`` and ``serve`` have parsers of their own (``_deploy.py``, ``_serve.py``);
``--fixtures`` and ``--require-fixtures`` live in ``_fixtures.py``.

Each one works on either kind of table: a Python table named by
``--registry pkg.module:NAME`` or a repository named by ``--config /abs/officina.toml``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from boring_dispatch.errors import DispatchError, RegistryInvalid
from boring_dispatch.surfaces.cli._common import argument_parser, report_error, report_file_error

if TYPE_CHECKING:
    from boring_dispatch._files import FileRefused
    from boring_dispatch.observe.audit import JsonLinesAuditSink
    from boring_dispatch.surfaces._backend import Backend

__all__ = ["run"]


def run(command: str, argv: Sequence[str]) -> int:
    """Run one subcommand and return its exit status."""
    handlers: dict[str, Callable[[argparse.Namespace], int]] = {
        "names": _names,
        "replay": _replay,
        "describe": _describe,
        "mcp": _mcp,
    }
    if command == "deploy":
        from boring_dispatch.surfaces.cli import _deploy

        return _deploy.run(argv)
    if command == "serve":
        from boring_dispatch.surfaces.cli import _serve

        return _serve.run(argv)
    options = _parser(command).parse_args(list(argv))
    try:
        if options.config and (
            vars(options).get("fixtures") or vars(options).get("require_fixtures")
        ):
            raise RegistryInvalid("--fixtures and --require-fixtures need --registry")
        return handlers[command](options)
    except DispatchError as error:
        report_error(error, getattr(options, "error_format", "text"), sys.stderr)
        return error.exit_code


def _parser(command: str) -> argparse.ArgumentParser:
    parser = argument_parser(prog=f"dispatcher {command}")
    table = parser.add_mutually_exclusive_group(required=True)
    table.add_argument("--registry", metavar="pkg.module:NAME", help="a Python table")
    table.add_argument(
        "--config", "--repository-config", dest="config", metavar="PATH", help="officina.toml"
    )
    parser.add_argument("--error-format", choices=("text", "json"), default="text")
    if command == "names":
        parser.description = "Print the allowlist (bound names or exported interfaces), sorted."
        parser.add_argument("--golden", metavar="FILE", help="fail on surprise or missing names")
        parser.add_argument(
            "--require-fixtures", action="store_true", help="fail on a tool without a fixture"
        )
        parser.add_argument("--fixtures", metavar="FILE", help="a fixture file (JSON lines)")
    elif command == "replay":
        parser.description = "Push every call of a JSON-lines trace through the same pipeline."
        run = parser.add_mutually_exclusive_group()
        run.add_argument(
            "--dry-run", action="store_true", help="repository: resolve only (the default)"
        )
        run.add_argument(
            "--live",
            action="store_true",
            help="run the calls for real (repository: launch; Python table: call the handlers)",
        )
        parser.add_argument("--fixtures", metavar="FILE", help="replay against a fixture world")
        parser.add_argument("--allow-missing-fixtures", action="store_true")
        parser.add_argument(
            "--audit",
            metavar="PATH",
            help="repository: one JSON-lines audit record per live call (with --live)",
        )
        parser.add_argument("trace", metavar="TRACE.jsonl")
    elif command == "describe":
        parser.description = "Print what an assistant needs to call one interface."
        parser.add_argument("interface", metavar="INTERFACE")
    else:
        parser.description = "Serve the table over MCP (stdio)."
        parser.add_argument(
            "--timeout",
            type=_seconds,
            metavar="SECONDS",
            help="wall-clock limit of each gateway run (default 60)",
        )
        parser.add_argument(
            "--run-as",
            metavar="USER[:GROUP]",
            help="run every gateway as this user (repository tables; needs root)",
        )
        parser.add_argument(
            "--spawn-gateways",
            action="store_true",
            help="repository: start a fresh interpreter per gateway instead of forking it "
            "from the clean fork server (slower; new memory layout for every call)",
        )
        parser.add_argument(
            "--ledger",
            metavar="URL|PATH",
            help="repository: the setup ledger (postgresql://... or a SQLite file; "
            "default $BORING_DISPATCH_LEDGER, else a file under $XDG_STATE_HOME)",
        )
        parser.add_argument(
            "--caller",
            action="append",
            dest="callers",
            metavar="SKILL",
            help="repository: a top-level skill this server may act for (repeatable; "
            "default: any discoverable top-level skill the model names)",
        )
        parser.add_argument(
            "--audit",
            metavar="PATH",
            help="repository: append one JSON-lines audit record per live call",
        )
        parser.add_argument("--database", metavar="URL", help="with --surface: the deployed table")
        parser.add_argument("--surface", metavar="NAME")
        parser.add_argument(
            "--context",
            metavar="pkg.module:NAME",
            help="registry: a function returning the injected arguments of each call",
        )
    return parser


def _backend(options: argparse.Namespace) -> Backend:
    """The table the options name, as a backend: the one place that tells the two apart."""
    audit = vars(options).get("audit")  # replay only: what a live replay launches
    if options.registry:
        if audit is not None:
            raise RegistryInvalid("--audit records a repository (--config) only")
        from boring_dispatch.registry.spec import load_registry
        from boring_dispatch.surfaces._table_backend import TableBackend

        return TableBackend(load_registry(options.registry))
    from boring_dispatch.repository.repository import Repository
    from boring_dispatch.surfaces._repository_backend import RepositoryBackend

    sinks: tuple[JsonLinesAuditSink, ...] = ()
    if audit is not None and options.live:  # a dry run is never recorded: no file
        from boring_dispatch.repository._audit import open_audit_file

        sinks = (open_audit_file(audit),)  # closed when the process ends (one write per record)
    return RepositoryBackend(Repository.open(options.config, audit=sinks))


def _names(options: argparse.Namespace) -> int:
    status = 0
    backend = _backend(options)
    names = backend.names()
    table = backend.fixture_table()  # --fixtures and --require-fixtures need a Python table
    if table is not None and (options.require_fixtures or options.fixtures):
        from boring_dispatch.surfaces.cli import _fixtures

        found = _fixtures.read_file_fixtures(table, options.fixtures, _file_reporter(options))
        if found is None:
            return 2
        table.fixture_world(found, allow_missing=True)  # the file must fit the table
        if options.require_fixtures:
            status = _fixtures.missing_fixtures(table, found)
    if options.golden is None:
        sys.stdout.writelines(f"{name}\n" for name in names)
        return status
    from boring_dispatch.golden import FileRefused, compare, format_difference

    try:
        difference = compare(names, Path(options.golden))
    except (OSError, FileRefused) as error:
        report_file_error("golden", error, options.error_format)
        return 2
    if difference.ok:
        sys.stdout.writelines(f"{name}\n" for name in names)
        return status
    sys.stderr.write(format_difference(difference) + "\n")
    return 1


def _replay(options: argparse.Namespace) -> int:
    from boring_dispatch._files import FileRefused, read_json_lines

    try:
        read = read_json_lines(Path(options.trace))
    except (OSError, FileRefused) as error:
        report_file_error("trace", error, options.error_format)
        return 2
    if read.torn_tail is not None:
        sys.stderr.write(
            f"warning: line {read.torn_tail}: a torn last record (its writer was "
            "interrupted) was skipped\n"
        )
    lines = [line.text or "" for line in read.lines]
    if options.live and options.fixtures is not None:
        raise RegistryInvalid("--live and --fixtures: a fixture world runs no real handler")
    backend = _backend(options)  # (a table refuses --audit first)
    if options.audit is not None and not options.live:
        raise RegistryInvalid("--audit records live calls only: add --live")
    table = backend.fixture_table()  # --fixtures needs a Python table
    if table is not None and options.fixtures is None and not options.live:
        # SECURITY.md F8: replay never runs a real tool unless asked to.
        raise RegistryInvalid(
            "replaying a Python table needs --fixtures FILE (a fixture world) or --live "
            "(the real handlers)"
        )
    if table is not None and options.fixtures is not None:
        from boring_dispatch.surfaces.cli import _fixtures

        found = _fixtures.read_file_fixtures(table, options.fixtures, _file_reporter(options))
        if found is None:
            return 2
        return _fixtures.replay_world(
            table, found, lines, allow_missing=options.allow_missing_fixtures
        )
    differs = False
    for replayed in backend.replay(lines, dry_run=not options.live):
        sys.stdout.write(json.dumps(replayed.record, sort_keys=True) + "\n")
        differs = differs or replayed.differs
    return 1 if differs else 0


def _describe(options: argparse.Namespace) -> int:
    sys.stdout.write(_backend(options).describe(options.interface))
    return 0


def _file_reporter(options: argparse.Namespace) -> Callable[[str, OSError | FileRefused], None]:
    return lambda kind, error: report_file_error(kind, error, options.error_format)


def _mcp(options: argparse.Namespace) -> int:
    from boring_dispatch.surfaces.mcp.server import serve

    return serve(
        config=options.config,
        registry=options.registry,
        timeout_s=options.timeout,
        run_as=options.run_as,
        spawn=options.spawn_gateways,
        callers=options.callers,
        deployed=_deployed(options),
        context=options.context,
        ledger=options.ledger,
        audit=options.audit,
    )


def _deployed(options: argparse.Namespace) -> tuple[str, str] | None:
    if (options.database is None) != (options.surface is None):
        raise RegistryInvalid("--database and --surface go together")
    return None if options.surface is None else (options.surface, options.database)


def _seconds(text: str) -> float:
    """A positive, finite number of seconds (argparse type)."""
    from boring_dispatch.surfaces.cli._common import positive_seconds

    return positive_seconds(text)
