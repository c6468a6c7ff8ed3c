"""How a call's work reaches a worker thread and comes back (no SDK import).

The event loop never runs a call's work: resolution reads the repository and
a launch waits for its gateway. Every hop to a worker thread and back costs
two thread wake-ups, which on a busy machine are a sizeable part of a warm
call, so a call takes as few as it can:

- a dry run: one plain hop (it launches nothing, so there is nothing to end
  on a cancel; the cancel is delivered once the thread has ended);
- any other repository call, when a slot is free and no call waits for one:
  it takes the slot at once, and resolves and launches in **one**
  cancel-aware hop (:meth:`~._calls.RepositoryCalls.call`); the slot is
  given back when that work has ended, whether it launched or not;
- otherwise (every slot held, or calls waiting for one): it resolves in one
  hop without a slot and, only if it has something to launch, waits for a
  slot and launches in a second hop. Resolutions, refusals and dry runs never
  wait for a slot.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from boring_dispatch.process._cancel import cancel as cancel_launches
from boring_dispatch.surfaces.mcp._children import end_descendant_groups
from boring_dispatch.surfaces.mcp._results import ToolOutcome

if TYPE_CHECKING:
    import anyio

    from boring_dispatch.surfaces.mcp._calls import RepositoryCalls

__all__ = ["asks_dry_run", "in_thread_to_the_end", "repository_call"]

_T = TypeVar("_T")


def asks_dry_run(arguments: object) -> bool:
    """Whether the call's arguments ask for a dry run (``"dry_run": true``, exactly).

    The projection parser then either refuses the call or describes it: its
    preparation never launches a gateway or a setup, whatever else it holds.
    """
    return type(arguments) is dict and arguments.get("dry_run") is True


async def repository_call(
    backend: RepositoryCalls,
    slots: anyio.CapacityLimiter,
    name: str,
    arguments: object,
    trace_id: str,
) -> ToolOutcome:
    """One repository tool call, in as few worker-thread hops as its slot allows."""
    import anyio

    prepare = functools.partial(backend.prepare, name, arguments, trace_id=trace_id)
    if asks_dry_run(arguments):
        step = await anyio.to_thread.run_sync(prepare)
    elif _took_free_slot(slots):
        try:
            whole = functools.partial(backend.call, name, arguments, trace_id=trace_id)
            return await in_thread_to_the_end(whole, trace_id)
        finally:
            slots.release()
    else:
        step = await in_thread_to_the_end(prepare, trace_id)
    if isinstance(step, ToolOutcome):
        return step
    async with slots:
        return await in_thread_to_the_end(step.run, trace_id)


def _took_free_slot(slots: anyio.CapacityLimiter) -> bool:
    """Take a slot for the current task if one is free and no task waits for one (FIFO)."""
    import anyio

    try:
        slots.acquire_nowait()
    except anyio.WouldBlock:
        return False
    return True


async def in_thread_to_the_end(work: Callable[[], _T], trace_id: str | None) -> _T:
    """Run ``work`` in a worker thread and return only once it has ended, even when cancelled.

    A cancel (the client's ``notifications/cancelled``, an SDK timeout, the
    session ending) ends the call's gateways, including any it has not
    spawned yet (see :mod:`boring_dispatch.process._cancel`), then waits for
    the thread, so a slot held around this is freed only when the work is
    really over. A Python-table handler cannot be stopped: its slot stays
    taken until it returns. The cancellation is re-raised after the wait.
    ``work`` never raises (every call turns its exceptions into results).
    """
    import anyio

    results: list[_T] = []
    done = anyio.Event()

    async def worker() -> None:
        with anyio.CancelScope(shield=True):
            try:
                results.append(await anyio.to_thread.run_sync(work))
            finally:
                done.set()

    async with anyio.create_task_group() as group:
        group.start_soon(worker)
        try:
            await done.wait()
        except anyio.get_cancelled_exc_class():
            if trace_id is not None:
                cancel_launches(trace_id)
                end_descendant_groups(trace_id)
            raise
    return results[0]
