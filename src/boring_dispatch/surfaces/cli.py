"""The ``dispatcher`` command.

Invocation (options before the target; everything after the target goes to the
gateway unchanged)::

    dispatcher --config /abs/officina.toml --caller-skill SKILL [--dry-run]
               [--error-format text|json] [--stdin] TARGET[@N] [ARG ...]

Subcommands (the first word): ``names``, ``replay``, ``describe``, ``mcp``.
Heavy modules (pydantic, mcp) are imported only by the subcommands that need
them, so that a dry run starts fast.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TextIO

from boring_dispatch.errors import DispatchError, RouteError, RuntimeMisconfigured

__all__ = ["main"]

_SUBCOMMANDS = ("names", "replay", "describe", "mcp")
_TARGET_SHAPE = "error: target must be a fully qualified `<module>.interface.<name>` export"
_NO_CONFIG = "dispatcher requires the exact repository configuration path"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in _SUBCOMMANDS:
        from boring_dispatch.surfaces import _cli_commands

        return _cli_commands.run(args[0], args[1:])
    return _invoke(args)


def _invocation_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dispatcher",
        allow_abbrev=False,
        description="Resolve, authorize and run one exported interface of a blueprint repository.",
        epilog="subcommands: dispatcher {names,replay,describe,mcp} --help",
    )
    parser.add_argument(
        "--config",
        "--repository-config",
        dest="config",
        metavar="PATH",
        help="exact absolute path of officina.toml",
    )
    parser.add_argument("--caller-skill", required=True, metavar="SKILL")
    parser.add_argument("--dry-run", action="store_true", help="authorize and compile only")
    parser.add_argument("--error-format", choices=("text", "json"), default="text")
    parser.add_argument("--stdin", action="store_true", help="forward standard input")
    parser.add_argument(
        "--timeout",
        type=positive_seconds,
        default=None,
        metavar="SECONDS",
        help="wall-clock limit of the gateway run; its process group is killed (default 60)",
    )
    parser.add_argument("target", metavar="TARGET[@N]")
    parser.add_argument("args", nargs=argparse.REMAINDER, metavar="ARG")
    return parser


def _invoke(argv: list[str]) -> int:
    options = _invocation_parser().parse_args(argv)
    if ".interface." not in options.target:
        sys.stderr.write(_TARGET_SHAPE + "\n")
        return 2
    try:
        return _run_invocation(options)
    except RouteError as error:
        report_error(error, options.error_format, sys.stderr)
        return error.exit_code


def _run_invocation(options: argparse.Namespace) -> int:
    from boring_dispatch.blueprints.ids import parse_pin
    from boring_dispatch.blueprints.repository import Repository, dry_run_payload
    from boring_dispatch.types import ExecLimits, RouteRequest

    if not options.config:
        raise RuntimeMisconfigured(_NO_CONFIG, caller_module_id=options.caller_skill)
    target, version = parse_pin(options.target)
    request = RouteRequest(
        caller=options.caller_skill,
        target=target,
        version=version,
        argv=tuple(options.args),
        stdin=options.stdin,
    )
    repository = Repository.open(options.config)
    if options.dry_run:
        # A dry run never reads stdin.
        payload = dry_run_payload(repository.resolve(request))
        sys.stdout.write(json.dumps(payload, indent=2, sort_keys=True) + "\n")
        return 0
    limits = ExecLimits() if options.timeout is None else ExecLimits(timeout_s=options.timeout)
    data = _read_stdin(limits.max_stdin_bytes) if options.stdin else None
    route = repository.resolve(request)
    for warning in route.warnings:
        subject = f" [{warning.subject}]" if warning.subject else ""
        sys.stderr.write(f"warning: {warning.code}: {warning.message}{subject}\n")
    from boring_dispatch.observe.trace import new_trace_id

    return repository.run_streaming(route, stdin=data, limits=limits, trace_id=new_trace_id())


def positive_seconds(text: str) -> float:
    """Parse a positive, finite number of seconds (an argparse ``type``)."""
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("expected a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError("expected a positive number of seconds")
    return value


def _read_stdin(cap: int) -> bytes:
    from boring_dispatch.errors import InvalidRouteRequest

    data = sys.stdin.buffer.read(cap + 1)
    if len(data) > cap:
        raise InvalidRouteRequest(f"stdin is larger than {cap} bytes")
    return data


def report_error(error: DispatchError, error_format: str, stream: TextIO) -> None:
    """Write one error: ``error: <message>`` or the JSON line of schema version 1."""
    if error_format == "json" and isinstance(error, RouteError):
        stream.write(json.dumps(error.to_json()) + "\n")
    else:
        stream.write(f"error: {error.message}\n")
