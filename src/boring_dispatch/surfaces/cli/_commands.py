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
from boring_dispatch.surfaces.cli._common import report_error

if TYPE_CHECKING:
    from boring_dispatch._files import FileRefused

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
    parser = argparse.ArgumentParser(prog=f"dispatcher {command}", allow_abbrev=False)
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
        parser.add_argument("--dry-run", action="store_true", help="repository: do not launch")
        parser.add_argument("--fixtures", metavar="FILE", help="replay against a fixture world")
        parser.add_argument("--allow-missing-fixtures", action="store_true")
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


def _names(options: argparse.Namespace) -> int:
    status = 0
    if options.registry:
        from boring_dispatch.registry.spec import load_registry
        from boring_dispatch.surfaces.cli import _fixtures

        registry = load_registry(options.registry)
        names = registry.names()
        if options.require_fixtures or options.fixtures:
            found = _fixtures.read_file_fixtures(
                registry, options.fixtures, _file_reporter(options)
            )
            if found is None:
                return 2
            registry.fixture_world(found, allow_missing=True)  # the file must fit the table
            if options.require_fixtures:
                status = _fixtures.missing_fixtures(registry, found)
    else:
        from boring_dispatch.repository.repository import Repository

        names = Repository.open(options.config).exported_interfaces()
    if options.golden is None:
        sys.stdout.writelines(f"{name}\n" for name in names)
        return status
    from boring_dispatch.golden import FileRefused, compare, format_difference

    try:
        difference = compare(names, Path(options.golden))
    except (OSError, FileRefused) as error:
        _file_error("golden", error, options.error_format)
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
        _file_error("trace", error, options.error_format)
        return 2
    if read.torn_tail is not None:
        sys.stderr.write(
            f"warning: line {read.torn_tail}: a torn last record (its writer was "
            "interrupted) was skipped\n"
        )
    lines = [line.text or "" for line in read.lines]
    if options.registry:
        from boring_dispatch.registry.replay import replay_lines
        from boring_dispatch.registry.spec import load_registry

        registry = load_registry(options.registry)
        if options.fixtures is not None:
            from boring_dispatch.surfaces.cli import _fixtures

            found = _fixtures.read_file_fixtures(
                registry, options.fixtures, _file_reporter(options)
            )
            if found is None:
                return 2
            return _fixtures.replay_world(
                registry, found, lines, allow_missing=options.allow_missing_fixtures
            )
        differs = False
        for entry in replay_lines(registry, lines):
            sys.stdout.write(json.dumps(entry.observation, sort_keys=True) + "\n")
            differs = differs or entry.differs
        return 1 if differs else 0
    from boring_dispatch.repository.offline.replay_lines import replay_repository
    from boring_dispatch.repository.repository import Repository

    repository = Repository.open(options.config)
    differs = False
    for line in replay_repository(repository, lines, dry_run=options.dry_run):
        sys.stdout.write(json.dumps(line.outcome, sort_keys=True) + "\n")
        differs = differs or line.differs
    return 1 if differs else 0


def _describe(options: argparse.Namespace) -> int:
    if options.registry:
        from boring_dispatch.registry.spec import load_registry

        registry = load_registry(options.registry)
        schemas = registry.tool_schemas("mcp")
        chosen = [s for s in schemas if s.get("name") == options.interface]
        if not chosen:
            from boring_dispatch.errors import UnknownTool

            raise UnknownTool(f"no tool named {options.interface!r}")
        sys.stdout.write(json.dumps(chosen[0], indent=2, sort_keys=True) + "\n")
        return 0
    from boring_dispatch.repository.offline.describe import describe, render_description
    from boring_dispatch.repository.repository import Repository

    repository = Repository.open(options.config)
    sys.stdout.write(render_description(describe(repository, options.interface)))
    return 0


def _file_reporter(options: argparse.Namespace) -> Callable[[str, OSError | FileRefused], None]:
    return lambda kind, error: _file_error(kind, error, options.error_format)


def _file_error(kind: str, error: OSError | FileRefused, error_format: str) -> None:
    """``error: cannot read the <kind> file: <reason>``, or its JSON line (``unreadable_file``)."""
    from boring_dispatch._files import FileRefused

    reason: str
    if isinstance(error, FileRefused):
        reason, message, line = error.reason, str(error), error.line
    else:
        reason, message, line = "io", error.strerror or type(error).__name__, None
    if error_format != "json":
        sys.stderr.write(f"error: cannot read the {kind} file: {message}\n")
        return
    payload = {
        "schema_version": 1,
        "code": "unreadable_file",
        "message": f"cannot read the {kind} file: {message}",
        "file": kind,
        "reason": reason,
        "line": line,
    }
    sys.stderr.write(json.dumps(payload) + "\n")


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
