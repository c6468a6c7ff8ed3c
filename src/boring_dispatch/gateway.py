"""The gateway authoring API: what a blueprint's ``process_binding.entry`` class subclasses.

A gateway module is imported by the child-side runner
(:mod:`boring_dispatch.process.runner`); the class named by the binding's
``entry`` is instantiated with no arguments and run::

    import argparse
    from boring_dispatch.gateway import Interface

    class Greet(Interface):
        def build_parser(self) -> argparse.ArgumentParser:
            parser = argparse.ArgumentParser(prog="greet")
            parser.add_argument("--name", required=True)
            return parser

        def run(self, args: argparse.Namespace) -> int | None:
            print(f"hello {args.name}")
            return 0  # None or True -> 0, False -> 1, an int 0..255 -> that exit code

This module stays light: importing it never imports pydantic, mcp or the
repository pipeline (the pipeline is imported only when a gateway makes a
nested call).
"""

from __future__ import annotations

import abc
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from boring_dispatch._value import value

if TYPE_CHECKING:
    import argparse

__all__ = [
    "ArgvInterface",
    "Interface",
    "NestedResult",
    "RuntimeContext",
    "bind_runtime_context",
    "runtime_context",
]


@value
class RuntimeContext:
    """Who is running: attached by the runner before the gateway class is instantiated."""

    #: Canonical ID of the terminal module of the running route: the caller of nested calls.
    module_id: str
    #: The implementing behavioral source.
    source_id: str
    #: The export ID being served.
    interface_id: str
    repository_root: Path
    config_path: Path
    #: The call's trace id, inherited by nested calls; ``None`` when not traced.
    trace_id: str | None
    #: ``time.monotonic()`` deadline of this call; nested calls never outlive it.
    deadline: float
    #: Per-stream capture cap for nested calls.
    max_output_bytes: int
    #: Stdin cap for nested calls.
    max_stdin_bytes: int
    #: The running route's security level: nested calls may not exceed it (None: unknown).
    level: int | None = None


@value
class NestedResult:
    """The outcome of :meth:`Interface.dispatch`: exit code and captured streams."""

    #: The nested gateway's exit status; negative when a signal ended it.
    exit_code: int | None
    stdout: str
    stderr: str
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        """Exit status 0, nothing truncated, no timeout."""
        return (
            self.exit_code == 0
            and not self.timed_out
            and not (self.stdout_truncated or self.stderr_truncated)
        )


_CONTEXT: list[RuntimeContext] = []


def bind_runtime_context(context: RuntimeContext) -> None:
    """Publish the runtime context of this process (the runner calls this once).

    Raises:
        RuntimeError: a context is already bound; a process serves one route.
    """
    if _CONTEXT:
        raise RuntimeError("runtime context is already bound")
    _CONTEXT.append(context)


def runtime_context() -> RuntimeContext | None:
    """The context the runner bound, or ``None`` outside a gateway process."""
    return _CONTEXT[0] if _CONTEXT else None


class _Gateway:
    """What both gateway kinds share: nested dispatch under the running identity."""

    def dispatch(
        self,
        interface: str,
        version: int = 1,
        positionals: Sequence[str] = (),
        options: Mapping[str, object] | None = None,
        stdin: bytes | str | None = None,
    ) -> NestedResult:
        """Call another exported interface through the same pipeline.

        The caller is always the running module's canonical ID (from the runtime
        context): there is no parameter to claim another identity. The version
        is always pinned, resolution runs in nested mode (no top-level-skill
        requirement), output is captured and capped, and the call cannot
        outlive this one's deadline.

        Args:
            interface: Export ID ``<module>.interface.<name>``.
            version: The pinned interface version.
            positionals: Positional arguments, in order.
            options: ``{flag: value}`` compiled by ``projection_argv``.
            stdin: Bytes (or text, sent as UTF-8) for the nested gateway, sent
                only when its binding accepts stdin; ``None`` for empty stdin.

        Returns:
            The nested call's exit code and captured streams.

        Raises:
            RuntimeMisconfigured: not running inside a gateway process.
            RouteError: the nested request is refused (the ``dispatcher.*`` code).
        """
        from boring_dispatch.errors import RuntimeMisconfigured

        context = runtime_context()
        if context is None:
            raise RuntimeMisconfigured("nested dispatch is available only inside a gateway")
        remaining = context.deadline - time.monotonic()
        if remaining <= 0:
            raise RuntimeMisconfigured("no time left for a nested call")
        # Imported here: a gateway that never dispatches never loads the pipeline.
        from boring_dispatch.blueprints.projection import projection_argv
        from boring_dispatch.blueprints.repository import Repository
        from boring_dispatch.types import ExecLimits, RouteRequest

        data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
        request = RouteRequest(
            caller=context.module_id,
            target=interface,
            version=version,
            argv=projection_argv(positionals, options or {}),
            stdin=data is not None,
            host=False,
            max_level=context.level,
        )
        limits = ExecLimits(
            timeout_s=remaining,
            max_output_bytes=context.max_output_bytes,
            max_stdin_bytes=context.max_stdin_bytes,
        )
        result = Repository.open(context.config_path).invoke(
            request, stdin=data, limits=limits, trace_id=context.trace_id
        )
        return NestedResult(
            exit_code=result.exit_code,
            stdout=result.stdout,
            stderr=result.stderr,
            stdout_truncated=result.stdout_truncated,
            stderr_truncated=result.stderr_truncated,
            timed_out=result.timed_out,
        )


class Interface(_Gateway, abc.ABC):
    """A gateway whose arguments are parsed by the parser it builds."""

    @abc.abstractmethod
    def build_parser(self) -> argparse.ArgumentParser:
        """Return the parser of this interface's argv (argparse exits 2 on bad usage)."""

    @abc.abstractmethod
    def run(self, args: argparse.Namespace) -> int | bool | None:
        """Do the work. ``None``/``True`` -> exit 0, ``False`` -> 1, an int 0..255 -> itself."""


class ArgvInterface(_Gateway, abc.ABC):
    """A gateway that receives the raw argument list (after the runner's ``--``)."""

    @abc.abstractmethod
    def run(self, argv: list[str]) -> int | bool | None:
        """Do the work. ``None``/``True`` -> exit 0, ``False`` -> 1, an int 0..255 -> itself."""
