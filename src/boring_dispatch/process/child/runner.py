"""The child side of a gateway call: ``python -I -m boring_dispatch.process.child.runner``.

Command line (built only by :func:`boring_dispatch.process.launch.child_argv`)::

    --module-id=ID --source-id=ID --interface-id=ID --module-root=ABS --repo-root=ABS
    --config=ABS --module-roots=JSON --logical-package=PKG --logical-entrypoint=PKG.X
    --limits=timeout=S,output=N,stdin=N,cpu=N|-,nofile=N|-,fsize=N|-,as=N|-
    --gateway=REL.py --entry=Class --level=0|1|2|- --broker-fd=N|- --owners=UID,...
    -- COMMAND...

Every option sits at a fixed position with its exact name; the token after
them must be ``--``, and everything after it is the gateway's argv, never
looked at by the runner. So no token of a caller's command can be read as a
runner option.

In order, the runner: checks it runs isolated (``-I``) in the module root;
drops the capabilities that reach other processes of its uid
(:mod:`~boring_dispatch.process._reach`); arms its own deadline
(:mod:`~boring_dispatch.process.child._deadline`: the group ends at ``timeout``
plus a grace, or when the dispatcher dies); makes itself the reaper of what
the gateway leaves running (:mod:`~boring_dispatch.process.child._reaper`:
every orphaned descendant becomes its child, ended at its exit); makes the
broker descriptor non-inheritable; lowers rlimits (``RLIMIT_CORE`` to 0,
plus the limits given); removes from ``sys.path`` every entry that equals,
contains or lies inside the module root or a configured module root;
installs the confined importer; imports the logical entrypoint; takes the
class named ``--entry`` from the module's ``__dict__``; checks it subclasses
:class:`~boring_dispatch.gateway.Interface` or
:class:`~boring_dispatch.gateway.ArgvInterface`; binds the runtime context;
instantiates the class with no arguments and runs it.

Exit status: the return value of ``run`` (``None``/``True`` -> 0, ``False``
-> 1, an int in 0..255 -> itself; anything else is a ``TypeError`` or
``ValueError`` with a traceback and status 1). Runner misuse, a refused or
missing gateway module, or a missing or wrong entry class: ``error: ...`` on
stderr and status 2. An uncaught gateway exception: the usual traceback on
the child's stderr and status 1.
"""

from __future__ import annotations

import io
import os
import resource
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from boring_dispatch.observe.trace import TRACE_ID_ENV, span, valid_trace_id
from boring_dispatch.process import _reach, context
from boring_dispatch.process._command import LIMIT_KEYS, OPTIONS, SEPARATOR
from boring_dispatch.process.child import _confined, _deadline, _reaper
from boring_dispatch.process.child import interface as gateway
from boring_dispatch.process.child._spec import RLIMIT_NAMES, RunnerError, Spec, parse_spec

if TYPE_CHECKING:
    import argparse

__all__ = [
    "LIMIT_KEYS",
    "OPTIONS",
    "SEPARATOR",
    "RunnerError",
    "Spec",
    "apply_rlimits",
    "exit_code",
    "main",
    "parse_spec",
    "scrub_sys_path",
]

#: The parent as first seen: the parent-death check compares against it.
_PARENT_PID: Final = os.getppid()
_RLIMITS: Final = dict(
    zip(
        RLIMIT_NAMES,
        (resource.RLIMIT_CPU, resource.RLIMIT_NOFILE, resource.RLIMIT_FSIZE, resource.RLIMIT_AS),
        strict=True,
    )
)


def apply_rlimits(rlimits: Sequence[tuple[str, int]]) -> None:
    """Lower ``RLIMIT_CORE`` to 0 and each given limit; never raise a limit.

    Raises:
        RunnerError: the kernel refused a limit.
    """
    for resource_id, limit in ((resource.RLIMIT_CORE, 0), *_named(rlimits)):
        _, hard = resource.getrlimit(resource_id)
        target = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
        try:
            resource.setrlimit(resource_id, (target, target))
        except (OSError, ValueError) as error:
            raise RunnerError("cannot set a resource limit") from error


def _named(rlimits: Sequence[tuple[str, int]]) -> list[tuple[int, int]]:
    return [(_RLIMITS[name], limit) for name, limit in rlimits]


def scrub_sys_path(entries: Sequence[str], roots: Sequence[str]) -> list[str]:
    """Drop entries that are empty or equal, contain or lie inside any of ``roots``.

    Both sides are compared after resolving symlinks.
    """
    real_roots = [os.path.realpath(root) for root in roots]
    kept: list[str] = []
    for entry in entries:
        if not entry:
            continue
        real = os.path.realpath(entry)
        if any(os.path.commonpath([real, root]) in {real, root} for root in real_roots):
            continue
        kept.append(entry)
    return kept


def exit_code(value: object) -> int:
    """Map a ``run`` return value to an exit status.

    Raises:
        TypeError: the value is not ``None``, a bool or an int.
        ValueError: an int outside 0..255 (the OS would truncate 256 to 0).
    """
    if value is None or value is True:
        return 0
    if value is False:
        return 1
    if isinstance(value, int):
        if 0 <= value <= 255:
            return int(value)
        raise ValueError("run() returned an exit status outside 0..255")
    raise TypeError(f"run() returned {type(value).__name__}, expected int, bool or None")


def _prepare(spec: Spec, parent_pid: int) -> _confined.ConfinedFinder:
    """Everything that must hold before any gateway code runs."""
    if not sys.flags.isolated:
        raise RunnerError("the runner must run isolated (python -I)")
    if os.path.realpath(spec.module_root) != os.path.realpath(os.getcwd()):  # noqa: PTH109
        raise RunnerError("module root must equal the working directory")
    try:
        # Nothing this process runs may override the dispatcher's protection (see _reach).
        _reach.drop_reach_capabilities()
    except _reach.ReachError as error:
        raise RunnerError(str(error)) from None
    # The child's own deadline, before any gateway code: it holds if the dispatcher dies.
    _deadline.arm(spec.timeout_s, parent_pid)
    # What the gateway orphans becomes this process's child, ended when it exits: its exit
    # handler is registered before any gateway code, so it runs after the gateway's own.
    _reaper.arm()
    if spec.broker_fd is not None:
        try:
            # Processes the gateway starts never inherit the broker.
            os.set_inheritable(spec.broker_fd, False)  # noqa: FBT003
        except OSError as error:
            raise RunnerError("--broker-fd is not an open descriptor") from error
    apply_rlimits(spec.rlimits)
    sys.dont_write_bytecode = True
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(encoding="utf-8", errors="strict")
    # Without configured roots (an incomplete route), fall back to the whole repository.
    roots = (spec.module_root, *(spec.module_roots or (spec.repo_root,)))
    sys.path[:] = scrub_sys_path(sys.path, roots)
    return _confined.install(spec.package, spec.module_root, spec.owners)


def _load_entry(
    spec: Spec, finder: _confined.ConfinedFinder
) -> type[gateway.Interface | gateway.ArgvInterface]:
    import importlib

    try:
        # The name is derived from the blueprint's gateway path, never from the caller.
        entrypoint = spec.entrypoint
        module = importlib.import_module(entrypoint)  # allowed: blueprint-derived entrypoint
    except ImportError as error:
        # Only the finder refusing the entrypoint (or a parent) is a refused gateway;
        # an ImportError raised by gateway code is the gateway's own failure.
        name = error.name or ""
        on_path = spec.entrypoint == name or spec.entrypoint.startswith(name + ".")
        if name in finder.refused and on_path:
            raise RunnerError(f"gateway module refused: {error.msg}") from None
        raise
    candidate = vars(module).get(spec.entry)
    if not isinstance(candidate, type):
        raise RunnerError(f"class `{spec.entry}` not found in the gateway module")
    is_parsed = issubclass(candidate, gateway.Interface)
    is_raw = issubclass(candidate, gateway.ArgvInterface)
    if is_parsed == is_raw:
        raise RunnerError(
            f"class `{spec.entry}` must subclass exactly one of Interface and ArgvInterface"
        )
    return candidate


def _run(instance: gateway.Interface | gateway.ArgvInterface, command: Sequence[str]) -> int:
    if isinstance(instance, gateway.Interface):
        import argparse  # only parsed gateways need it

        parser = instance.build_parser()
        if not isinstance(parser, argparse.ArgumentParser):
            raise TypeError("build_parser() must return an argparse.ArgumentParser")
        _without_abbreviations(parser)
        return exit_code(instance.run(parser.parse_args(list(command))))
    return exit_code(instance.run(list(command)))


def _without_abbreviations(parser: argparse.ArgumentParser) -> None:
    """Make ``parser`` and every subparser accept exact option names only.

    argparse expands an unambiguous prefix by default (``--toke`` -> ``--token``),
    so a flag the dispatcher checked by its exact spelling (secret, forbidden,
    allowed) could reach the gateway under another one. ``allow_abbrev`` is read
    at parse time, so setting it here is enough.
    """
    import argparse

    pending, seen = [parser], set()
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        current.allow_abbrev = False
        for action in current._actions:  # noqa: SLF001 - argparse keeps subparsers only here
            if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
                pending.extend(action.choices.values())


def main(argv: Sequence[str] | None = None, *, parent_pid: int | None = None) -> int:
    """Run one gateway as described in the module docstring; returns the exit status.

    ``parent_pid`` is the process whose death ends the gateway's group: the
    parent as first seen (a fork server passes its own pid, taken before the fork).
    """
    try:
        spec = parse_spec(sys.argv[1:] if argv is None else argv)
        finder = _prepare(spec, _PARENT_PID if parent_pid is None else parent_pid)
    except RunnerError as error:
        print(f"error: {error}", file=sys.stderr)  # noqa: T201 - the runner's own diagnostic
        return 2
    trace_id = os.environ.get(TRACE_ID_ENV)
    trace_id = trace_id if valid_trace_id(trace_id) else None
    context.bind_runtime_context(
        context.RuntimeContext(
            module_id=spec.module_id,
            source_id=spec.source_id,
            interface_id=spec.interface_id,
            repository_root=Path(spec.repo_root),
            config_path=Path(spec.config),
            trace_id=trace_id,
            deadline=time.monotonic() + spec.timeout_s,
            max_output_bytes=spec.max_output_bytes,
            max_stdin_bytes=spec.max_stdin_bytes,
            level=spec.level,
            broker_fd=spec.broker_fd,
        )
    )
    with span(
        "gateway.interface", trace_id, interface_id=spec.interface_id, module_id=spec.module_id
    ) as timer:
        try:
            entry_class = _load_entry(spec, finder)
        except RunnerError as error:
            timer.status = "runner_error"
            print(f"error: {error}", file=sys.stderr)  # noqa: T201
            return 2
        sys.argv = [str(Path(spec.module_root, spec.gateway_path)), *spec.command]
        code = _run(entry_class(), spec.command)
        timer.status = "ok" if code == 0 else "exit_nonzero"
        return code


if __name__ == "__main__":
    raise SystemExit(main())
