"""The ``dispatcher`` command.

Invocation (options before the target; everything after the target goes to the
gateway unchanged)::

    dispatcher --config /abs/officina.toml --caller-skill SKILL [--dry-run]
               [--error-format text|json] [--stdin] [--timeout SECONDS]
               [--run-as USER[:GROUP]] [--audit PATH] TARGET[@N] [ARG ...]

Subcommands (the first word): ``names``, ``replay``, ``describe``, ``mcp``, ``deploy``,
``serve``.
Heavy modules (pydantic, mcp) are imported only by the subcommands that need
them, so that a dry run starts fast; for the same reason argparse is imported
only for help and for invocations of an unusual shape (:func:`_quick_invocation`).
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Sequence

from boring_dispatch._value import value
from boring_dispatch.errors import RouteError, RuntimeMisconfigured
from boring_dispatch.surfaces.cli._common import (
    argument_parser,
    positive_seconds,
    report_error,
    seconds_or_reason,
)
from boring_dispatch.surfaces.cli._streams import (
    BROKEN_PIPE,
    INTERRUPTED,
    drop_broken_streams,
    escape_unencodable,
)

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    import argparse
    from typing import Final

    from boring_dispatch.records import ExecLimits, RouteRequest
    from boring_dispatch.repository.repository import Repository

__all__ = ["main"]

_SUBCOMMANDS = ("names", "replay", "describe", "mcp", "deploy", "serve")
_TARGET_SHAPE = "error: target must be a fully qualified `<module>.interface.<name>` export"
_NO_CONFIG = "dispatcher requires the exact repository configuration path"
#: Options of an invocation, by exact spelling, and the field each one sets.
_VALUED: Final = {
    "--config": "config",
    "--repository-config": "config",
    "--caller-skill": "caller_skill",
    "--error-format": "error_format",
    "--timeout": "timeout",
    "--run-as": "run_as",
    "--audit": "audit",
}
_FLAGS: Final = {"--dry-run": "dry_run", "--stdin": "stdin"}
_ERROR_FORMATS: Final = ("text", "json")


@value
class _Invocation:
    """The parsed options of an invocation (what argparse's namespace holds)."""

    target: str
    caller_skill: str
    config: str | None = None
    dry_run: bool = False
    error_format: str = "text"
    stdin: bool = False
    timeout: float | None = None
    run_as: str | None = None
    audit: str | None = None
    args: tuple[str, ...] = ()


def main(argv: Sequence[str] | None = None, *, collector_paused: bool = False) -> int:
    """Run the CLI and return its exit status.

    ``collector_paused`` is for the process entry point (:mod:`boring_dispatch._entry`),
    which turns the garbage collector off before its first import: the command turns
    it back on once its own imports are done (:func:`_imports_done`).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    escape_unencodable()
    try:
        return _command(args, collector_paused)
    except BrokenPipeError:
        # The reader of stdout or stderr is gone (``dispatcher names | head -1``): what
        # is left to write is dropped, silently, as a tool killed by SIGPIPE would be.
        drop_broken_streams()
        return BROKEN_PIPE
    except KeyboardInterrupt:
        # ^C: a live call's gateway group has been ended on the way out (process.launch).
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write("error: interrupted\n")
            sys.stderr.flush()
        return INTERRUPTED


def _command(args: list[str], collector_paused: bool) -> int:
    if args and args[0] in (*_SUBCOMMANDS, "timeline", "setup"):
        _imports_done(collector_paused)
    if args and args[0] == "timeline":
        from boring_dispatch.surfaces.cli._timeline import run as timeline

        return timeline(args[1:])
    if args and args[0] == "setup":
        from boring_dispatch.surfaces.cli._setup import run as run_setup

        return run_setup(args[1:])
    if args and args[0] in _SUBCOMMANDS:
        from boring_dispatch.surfaces.cli import _commands as _cli_commands

        return _cli_commands.run(args[0], args[1:])
    return _invoke(args, collector_paused)


def _imports_done(collector_paused: bool) -> None:
    """Turn the garbage collector back on, if the entry point paused it for the imports.

    Everything alive at this point was imported for the command and lives until
    the process exits. It goes to the collector's permanent generation
    (``gc.freeze``), so that neither later collections nor the one at exit walk
    it again; what the command allocates from here on is collected as usual.
    A fresh dry run saves about 14 M instructions (``docs/performance.md``).
    """
    if collector_paused:
        import gc  # built into the interpreter

        gc.freeze()
        gc.enable()


def _invocation_parser() -> argparse.ArgumentParser:
    import argparse

    parser = argument_parser(
        prog="dispatcher",
        description="Resolve, authorize and run one exported interface of a blueprint repository.",
        epilog=(
            "subcommands: dispatcher {names,replay,describe,mcp,deploy,serve,setup,timeline} --help"
        ),
    )
    once = _once_action()
    parser.add_argument(
        "--config",
        "--repository-config",
        dest="config",
        metavar="PATH",
        action=once,
        help="exact absolute path of officina.toml",
    )
    parser.add_argument("--caller-skill", required=True, metavar="SKILL", action=once)
    parser.add_argument("--dry-run", action="store_true", help="authorize and compile only")
    parser.add_argument("--error-format", choices=_ERROR_FORMATS, default="text", action=once)
    parser.add_argument("--stdin", action="store_true", help="forward standard input")
    parser.add_argument(
        "--timeout",
        type=positive_seconds,
        default=None,
        metavar="SECONDS",
        action=once,
        help="wall-clock limit of the gateway run; its process group is killed (default 60)",
    )
    parser.add_argument(
        "--run-as",
        metavar="USER[:GROUP]",
        action=once,
        help="run the gateway (and its nested calls) as this user; needs root",
    )
    parser.add_argument(
        "--audit",
        metavar="PATH",
        action=once,
        help="append one JSON-lines audit record per live call (not on a dry run)",
    )
    parser.add_argument("target", metavar="TARGET[@N]")
    parser.add_argument("args", nargs=argparse.REMAINDER, metavar="ARG")
    return parser


def _once_action() -> type[argparse.Action]:
    """An argparse action that refuses an option given twice (under any of its spellings).

    argparse keeps the last value by default, so ``--caller-skill a ... --caller-skill b``
    would silently change who is calling: a launcher that appends a model-chosen
    target could be steered that way.
    """
    import argparse

    class Once(argparse.Action):
        def __call__(
            self,
            parser: argparse.ArgumentParser,
            namespace: argparse.Namespace,
            values: object,
            option_string: str | None = None,
        ) -> None:
            seen: set[str] = namespace.__dict__.setdefault("_given_once", set())
            if self.dest in seen:
                parser.error(f"{option_string} is given more than once")
            seen.add(self.dest)
            setattr(namespace, self.dest, values)

    return Once


def _invoke(argv: list[str], collector_paused: bool = False) -> int:
    options = _quick_invocation(argv) or _parsed_invocation(argv)
    if ".interface." not in options.target:
        sys.stderr.write(_TARGET_SHAPE + "\n")
        return 2
    try:
        return _run_invocation(options, collector_paused)
    except RouteError as error:
        report_error(error, options.error_format, sys.stderr)
        return error.exit_code


def _quick_invocation(argv: list[str]) -> _Invocation | None:
    """Parse the usual shapes of an invocation without argparse; ``None`` lets argparse decide.

    Importing and building an argparse parser is a sizeable part of a dry run's
    start-up. This accepts only exact option names, each followed by ``=VALUE``
    or by ``VALUE`` where the value does not start with ``-``, then a target
    that does not start with ``-``, then the gateway's arguments unless they
    start with ``--``.
    Everything else (help, mistakes, ``--``, unusual values) goes to argparse,
    which parses or reports it. A differential test holds this function to
    argparse's result on every input it accepts.
    """
    strings: dict[str, str] = {}
    flags: set[str] = set()
    index = 0
    while index < len(argv) and argv[index].startswith("-"):
        name, equals, inline = argv[index].partition("=")
        if name in _FLAGS and not equals:
            flags.add(_FLAGS[name])
            index += 1
            continue
        if equals:
            given, index = inline, index + 1
        elif index + 1 < len(argv):
            given, index = argv[index + 1], index + 2
        else:
            return None
        # argparse checks every occurrence of an option, not only the last one.
        if name not in _VALUED or given.startswith("-") or not _valid(_VALUED[name], given):
            return None
        if _VALUED[name] in strings:
            return None  # given twice: argparse refuses it with a usage error
        strings[_VALUED[name]] = given
    caller = strings.get("caller_skill")
    rest = argv[index + 1 :]
    if index == len(argv) or caller is None or rest[:1] == ["--"]:
        return None
    timeout = strings.get("timeout")
    return _Invocation(
        target=argv[index],
        caller_skill=caller,
        config=strings.get("config"),
        dry_run="dry_run" in flags,
        error_format=strings.get("error_format", "text"),
        stdin="stdin" in flags,
        timeout=None if timeout is None else float(timeout),
        run_as=strings.get("run_as"),
        audit=strings.get("audit"),
        args=tuple(rest),
    )


def _valid(field: str, text: str) -> bool:
    if field == "error_format":
        return text in _ERROR_FORMATS
    if field == "timeout":
        return not isinstance(seconds_or_reason(text), str)
    return True


def _parsed_invocation(argv: list[str]) -> _Invocation:
    """Parse with argparse, which exits with status 2 and a usage message on a mistake."""
    namespace = _invocation_parser().parse_args(argv)
    return _Invocation(
        target=namespace.target,
        caller_skill=namespace.caller_skill,
        config=namespace.config,
        dry_run=namespace.dry_run,
        error_format=namespace.error_format,
        stdin=namespace.stdin,
        timeout=namespace.timeout,
        run_as=namespace.run_as,
        audit=namespace.audit,
        args=tuple(namespace.args),
    )


def _run_invocation(options: _Invocation, collector_paused: bool = False) -> int:
    from pathlib import Path

    from boring_dispatch.records import ExecLimits, RouteRequest
    from boring_dispatch.repository.ids import parse_pin
    from boring_dispatch.repository.repository import Repository, dry_run_payload

    _imports_done(collector_paused)
    if not options.config:
        raise RuntimeMisconfigured(_NO_CONFIG, caller_module_id=options.caller_skill)
    target, version = parse_pin(options.target)
    request = RouteRequest(
        caller=options.caller_skill,
        target=target,
        version=version,
        argv=options.args,
        sends_stdin=options.stdin,
    )
    # Not Repository.open: resolve() reads and validates the configuration for the
    # request anyway, so validating it first as well would read it twice.
    repository = Repository(Path(options.config))
    # Before the dry-run branch: a dry run shows (and refuses) what the live call would.
    limits = ExecLimits() if options.timeout is None else ExecLimits(timeout_s=options.timeout)
    if options.run_as is not None:
        from boring_dispatch.process.run_as import with_run_as

        limits = with_run_as(limits, options.run_as)
    if options.dry_run:
        # A dry run never reads stdin.
        payload = dry_run_payload(repository.resolve(request), limits)
        sys.stdout.write(json.dumps(payload, indent=2, sort_keys=True) + "\n")
        return 0
    from boring_dispatch.observe.trace import new_trace_id

    if options.audit is not None:
        from boring_dispatch.repository._audit import open_audit_file

        with open_audit_file(options.audit) as sink:
            repository = Repository(Path(options.config), audit=(sink,))
            return _run_live(repository, request, limits, options.stdin, new_trace_id())
    return _run_live(repository, request, limits, options.stdin, new_trace_id())


def _run_live(
    repository: Repository, request: RouteRequest, limits: ExecLimits, stdin: bool, trace_id: str
) -> int:
    data = _read_stdin(limits.max_stdin_bytes) if stdin else None
    route = repository.resolve_live(request, trace_id=trace_id)
    for warning in route.warnings:
        subject = f" [{warning.subject}]" if warning.subject else ""
        sys.stderr.write(f"warning: {warning.code}: {warning.message}{subject}\n")
    return repository.run_streaming(route, stdin=data, limits=limits, trace_id=trace_id)


def _read_stdin(cap: int) -> bytes:
    """At most ``cap + 1`` bytes of stdin: one byte too many is enough for the launch to
    refuse the call (``dispatcher.invalid_request``), where the refusal is audited."""
    return sys.stdin.buffer.read(cap + 1)
