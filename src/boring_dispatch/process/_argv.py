"""The child command line, built by the parent.

It lives apart from :mod:`~boring_dispatch.process.launch` so that a dry run,
which only prints the command, imports neither ``subprocess`` and threads nor
the runner's importer machinery (the CLI's import budget, STYLE.md rule 9).
``launch`` re-exports the public names.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from boring_dispatch._limits import (
    MAX_ARGV_BYTES,
    MAX_ARGV_TOKENS,
    MAX_TOKEN_BYTES,
    argv_problem,
    token_problem,
)
from boring_dispatch.errors import ResolutionFailed
from boring_dispatch.process._command import (
    CHILD_FLAGS,
    LIMIT_KEYS,
    OPTIONS,
    RUNNER_MODULE,
    SEPARATOR,
)
from boring_dispatch.records import ExecLimits, Route

__all__ = ["MAX_ARGV_BYTES", "MAX_ARGV_TOKENS", "MAX_TOKEN_BYTES", "check_argv", "child_argv"]


def check_argv(tokens: Sequence[str]) -> None:
    """Refuse an argument vector that cannot reach a child byte for byte, or is over the caps.

    The caps are the binding stage's (:mod:`boring_dispatch._limits`); here
    they are a backstop on the compiled command.

    Raises:
        ResolutionFailed: an element is not a string, contains NUL, is not
            encodable as UTF-8 (a lone surrogate), is longer than
            :data:`MAX_TOKEN_BYTES`, or the vector has more than
            :data:`MAX_ARGV_TOKENS` elements or :data:`MAX_ARGV_BYTES` bytes.
    """
    problem = argv_problem(tokens, "the argv")
    if problem is not None:
        raise ResolutionFailed(problem)


def _check_prefix(prefix: Sequence[str]) -> None:
    for position, token in enumerate(prefix):
        problem = token_problem(token, position, "the runner command")
        if problem is not None:
            raise ResolutionFailed(problem)


def child_argv(
    route: Route, limits: ExecLimits | None = None, *, broker_fd: int | None = None
) -> tuple[str, ...]:
    """The complete child command for ``route``; the compiled command follows ``--``.

    ``broker_fd`` is the descriptor number of the child's end of the nested-call
    broker (``--broker-fd=-`` without one, as in a dry run).

    Raises:
        ResolutionFailed: the route's Python target disagrees with its binding,
            or :func:`check_argv` refuses the result.
    """
    limits = ExecLimits() if limits is None else limits
    target = route.python_target
    if target.process_entry != route.binding.entry:
        raise ResolutionFailed(
            "process entry differs between binding and target",
            caller_module_id=route.caller_module_id,
            target_module_id=route.target_module_id,
        )
    options = (
        route.target_module_id,
        route.implementing_source_id,
        route.target,
        str(route.cwd),
        str(route.repository_root),
        str(route.config_path),
        json.dumps([str(root) for root in route.module_roots]),
        target.logical_package,
        target.logical_entrypoint,
        _limits_token(limits),
        target.gateway_path,
        target.process_entry,
        "-" if route.security_level is None else str(route.security_level),
        "-" if broker_fd is None else str(int(broker_fd)),
        _owners(),
    )
    prefix = (
        sys.executable,
        *CHILD_FLAGS,
        "-m",
        RUNNER_MODULE,
        *(f"--{name}={value}" for name, value in zip(OPTIONS, options, strict=True)),
        SEPARATOR,
    )
    try:
        _check_prefix(prefix)  # our own tokens: each must reach the child intact
        check_argv(route.binding.command)  # the caller's: the binding's caps, again
    except ResolutionFailed as error:
        raise ResolutionFailed(
            error.message,
            caller_module_id=route.caller_module_id,
            target_module_id=route.target_module_id,
            reason=error.reason,
        ) from None
    return (*prefix, *route.binding.command)


def _owners() -> str:
    """The uids whose files the confined importer trusts: root and the dispatcher's user."""
    import os

    return ",".join(str(uid) for uid in sorted({0, os.geteuid()}))


def _limits_token(limits: ExecLimits) -> str:
    def opt(value: int | None) -> str:
        return "-" if value is None else str(int(value))

    values = (
        repr(limits.timeout_s),
        str(int(limits.max_output_bytes)),
        str(int(limits.max_stdin_bytes)),
        opt(limits.max_cpu_seconds),
        opt(limits.max_open_files),
        opt(limits.max_file_bytes),
        opt(limits.max_memory_bytes),
    )
    return ",".join(f"{key}={value}" for key, value in zip(LIMIT_KEYS, values, strict=True))
