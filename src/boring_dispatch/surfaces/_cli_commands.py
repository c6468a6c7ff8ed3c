"""The ``dispatcher`` subcommands: ``names``, ``replay``, ``describe`` and ``mcp``.

Each one works on either kind of table: a Python table named by
``--registry pkg.module:NAME`` or a repository named by ``--config /abs/officina.toml``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from boring_dispatch.errors import DispatchError
from boring_dispatch.surfaces.cli import report_error

__all__ = ["run"]


def run(command: str, argv: Sequence[str]) -> int:
    """Run one subcommand and return its exit status."""
    handlers: dict[str, Callable[[argparse.Namespace], int]] = {
        "names": _names,
        "replay": _replay,
        "describe": _describe,
        "mcp": _mcp,
    }
    options = _parser(command).parse_args(list(argv))
    # A registry module in the working directory is found by load_registry, which never
    # puts the working directory on sys.path (a checkout must not shadow dependencies).
    try:
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
    elif command == "replay":
        parser.description = "Push every call of a JSON-lines trace through the same pipeline."
        parser.add_argument("--dry-run", action="store_true", help="repository: do not launch")
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
            "--caller",
            action="append",
            dest="callers",
            metavar="SKILL",
            help="repository: a top-level skill this server may act for (repeatable; "
            "default: any discoverable top-level skill the model names)",
        )
    return parser


def _names(options: argparse.Namespace) -> int:
    if options.registry:
        from boring_dispatch._spec import load_registry

        names = load_registry(options.registry).names()
    else:
        from boring_dispatch.blueprints.repository import Repository

        names = Repository.open(options.config).exported_interfaces()
    if options.golden is None:
        sys.stdout.writelines(f"{name}\n" for name in names)
        return 0
    from boring_dispatch.golden import compare, format_difference

    try:
        difference = compare(names, Path(options.golden))
    except (OSError, UnicodeDecodeError) as error:
        sys.stderr.write(f"error: cannot read the golden file: {_reason(error)}\n")
        return 2
    if difference.ok:
        sys.stdout.writelines(f"{name}\n" for name in names)
        return 0
    sys.stderr.write(format_difference(difference) + "\n")
    return 1


def _replay(options: argparse.Namespace) -> int:
    try:
        lines = Path(options.trace).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        sys.stderr.write(f"error: cannot read the trace file: {_reason(error)}\n")
        return 2
    if options.registry:
        from boring_dispatch._spec import load_registry
        from boring_dispatch.replay import replay_lines

        registry = load_registry(options.registry)
        differs = False
        for entry in replay_lines(registry, lines):
            sys.stdout.write(json.dumps(entry.observation, sort_keys=True) + "\n")
            differs = differs or entry.differs
        return 1 if differs else 0
    from boring_dispatch.blueprints.replay_lines import replay_repository
    from boring_dispatch.blueprints.repository import Repository

    repository = Repository.open(options.config)
    differs = False
    for line in replay_repository(repository, lines, dry_run=options.dry_run):
        sys.stdout.write(json.dumps(line.outcome, sort_keys=True) + "\n")
        differs = differs or line.differs
    return 1 if differs else 0


def _describe(options: argparse.Namespace) -> int:
    if options.registry:
        from boring_dispatch._spec import load_registry

        registry = load_registry(options.registry)
        schemas = registry.tool_schemas("mcp")
        chosen = [s for s in schemas if s.get("name") == options.interface]
        if not chosen:
            from boring_dispatch.errors import UnknownTool

            raise UnknownTool(f"no tool named {options.interface!r}")
        sys.stdout.write(json.dumps(chosen[0], indent=2, sort_keys=True) + "\n")
        return 0
    from boring_dispatch.blueprints.describe import describe, render_description
    from boring_dispatch.blueprints.repository import Repository

    repository = Repository.open(options.config)
    sys.stdout.write(render_description(describe(repository, options.interface)))
    return 0


def _reason(error: OSError | UnicodeDecodeError) -> str:
    if isinstance(error, UnicodeDecodeError):
        return "not UTF-8 text"
    return error.strerror or type(error).__name__


def _mcp(options: argparse.Namespace) -> int:
    from boring_dispatch.surfaces.mcp_server import serve

    return serve(
        config=options.config,
        registry=options.registry,
        timeout_s=options.timeout,
        callers=options.callers,
    )


def _seconds(text: str) -> float:
    """A positive, finite number of seconds (argparse type)."""
    from boring_dispatch.surfaces.cli import positive_seconds

    return positive_seconds(text)
