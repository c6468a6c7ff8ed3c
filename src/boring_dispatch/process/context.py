"""Whether this process is a gateway, and which route it serves: state owned by ``process``.

The child-side runner binds one :class:`RuntimeContext` before it instantiates
the gateway class; :func:`runtime_context` is ``None`` in every other process
(the dispatcher itself, tests, a Python table). The launcher reads it to know
whether a launch is nested; the gateway API reads it to reach the broker.
"""

from __future__ import annotations

from pathlib import Path

from boring_dispatch._value import value

__all__ = ["RuntimeContext", "bind_runtime_context", "runtime_context"]


@value
class RuntimeContext:
    """Who is running: attached by the runner before the gateway class is instantiated."""

    #: Canonical ID of the terminal module of the running route (the parent makes it the
    #: caller of nested calls; changing this value changes nothing the parent decides).
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
    #: The running route's security level, for information: the parent enforces the ceiling.
    level: int | None = None
    #: The descriptor of the parent's nested-call broker (``None``: no nested calls).
    broker_fd: int | None = None


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
