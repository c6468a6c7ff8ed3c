"""What the dispatcher admits before it launches a gateway: limits in range, depth, budget.

Every launch (:func:`~boring_dispatch.process.launch.run_captured` and
``run_streaming``) asks :func:`admit` first. A launch made from a broker
thread (a gateway's nested call, see :mod:`~boring_dispatch.process._broker`)
is one level deeper than the gateway that asked for it and belongs to the same
:class:`CallTree`; any other launch starts a new tree at depth 0. The depth and
the tree live in this process (a context variable that each broker thread
sets for itself), so nothing a gateway sends or holds can change them: a
gateway that calls its own export, or fans out, is refused with
``dispatcher.nested_limit_exceeded`` once the chain is
``ExecLimits.max_nested_depth`` deep or the call has started
``ExecLimits.max_gateway_processes`` gateways in all.

Not counted: processes a gateway starts itself (``subprocess``, or the
library called directly inside the gateway process), which only its
rlimits, its timeout and its process group bound.
"""

from __future__ import annotations

import threading
from contextvars import ContextVar
from typing import Final

from boring_dispatch._limits import (
    MAX_NESTED_DEPTH,
    count_problem,
    seconds_problem,
)
from boring_dispatch.errors import NestedLimitExceeded
from boring_dispatch.records import ExecLimits, Route

__all__ = ["CallTree", "admit", "enter_nested", "limits_problem"]

#: Largest uid or gid accepted for ``run_as`` (``(uid_t) -1`` means "unchanged" to the kernel).
_MAX_ID: Final = (1 << 32) - 2


class CallTree:
    """The gateway processes one top-level call has started, its nested calls included."""

    __slots__ = ("_lock", "_started", "limit")

    def __init__(self, limit: int) -> None:
        self.limit: Final = limit
        self._started = 0
        self._lock = threading.Lock()

    def take(self) -> bool:
        """Count one more launch; ``False`` (and nothing counted) when the budget is spent."""
        with self._lock:
            if self._started >= self.limit:
                return False
            self._started += 1
            return True


#: ``(depth, tree)`` of launches made from this context: set only in broker threads.
_CHAIN: ContextVar[tuple[int, CallTree] | None] = ContextVar("boring_dispatch_chain", default=None)


def admit(route: Route, limits: ExecLimits) -> tuple[int, CallTree]:
    """Admit one gateway launch: its nesting depth and the call tree it counts against.

    Raises:
        NestedLimitExceeded: the launch would be deeper than
            ``limits.max_nested_depth`` or over ``limits.max_gateway_processes``.
    """
    chain = _CHAIN.get()
    depth, tree = (0, CallTree(limits.max_gateway_processes)) if chain is None else chain
    ids = {
        "caller_module_id": route.caller_module_id,
        "target_module_id": route.target_module_id,
        "interface_id": route.target,
    }
    if depth > limits.max_nested_depth:
        raise NestedLimitExceeded(
            f"nested calls may be at most {limits.max_nested_depth} deep", **ids
        )
    if not tree.take():
        raise NestedLimitExceeded(
            f"one call may start at most {tree.limit} gateway processes", **ids
        )
    return depth, tree


def enter_nested(depth: int, tree: CallTree) -> None:
    """Make launches from the current context (a broker thread) nested calls below ``depth``."""
    _CHAIN.set((depth + 1, tree))


def limits_problem(limits: object) -> str | None:
    """Why ``limits`` cannot be used for a launch, or ``None``; names the field, never a value."""
    if not isinstance(limits, ExecLimits):
        return "expected ExecLimits"
    optional = (
        ("max_cpu_seconds", limits.max_cpu_seconds),
        ("max_open_files", limits.max_open_files),
        ("max_file_bytes", limits.max_file_bytes),
        ("max_memory_bytes", limits.max_memory_bytes),
    )
    checks = (
        ("timeout_s", seconds_problem(limits.timeout_s)),
        ("max_output_bytes", count_problem(limits.max_output_bytes)),
        ("max_stdin_bytes", count_problem(limits.max_stdin_bytes)),
        *((name, None if given is None else count_problem(given)) for name, given in optional),
        ("max_nested_depth", count_problem(limits.max_nested_depth, high=MAX_NESTED_DEPTH)),
        ("max_gateway_processes", count_problem(limits.max_gateway_processes, low=1)),
        ("run_as", _run_as_problem(limits.run_as_uid, limits.run_as_gid)),
        ("fork_server", None if isinstance(limits.fork_server, bool) else "expected a bool"),
    )
    for name, problem in checks:
        if problem is not None:
            return f"{name}: {problem}"
    return None


def _run_as_problem(uid: object, gid: object) -> str | None:
    if uid is None and gid is None:
        return None
    if uid is None or gid is None:
        return "give both run_as_uid and run_as_gid, or neither"
    return count_problem(uid, high=_MAX_ID) or count_problem(gid, high=_MAX_ID)
