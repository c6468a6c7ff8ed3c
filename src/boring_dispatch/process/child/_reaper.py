"""The runner as the reaper of what its gateway leaves: no descendant outlives the runner's exit.

A gateway can start processes that leave the runner's process group
(``setpgid``) or its session (``setsid``), then exit: the launcher's group
check and the session scan of a timeout do not reach them. Before any
gateway code runs, :func:`arm` makes the runner a *child subreaper*
(Linux ``prctl(PR_SET_CHILD_SUBREAPER)``): while the runner lives, every
orphaned descendant of the gateway, whatever its group or session, becomes
the runner's child instead of init's. :func:`arm` also registers
:func:`end_children` with ``atexit`` before the gateway is imported, so that
it runs after every exit handler the gateway registers (the handlers run
newest first), spawned and forked alike (the fork server's exit runs the
same handlers, in the same order, see :mod:`._exit`).

:func:`end_children` lists the runner's children
(``/proc/self/task/*/children``), sends ``SIGKILL`` to each child's process
group (never the runner's own, nor one that may be its caller's) and to the
child, reaps them (the waits bounded in all), and starts over while new
orphans arrive, for at most :data:`MAX_ROUNDS` rounds. With nothing left it
costs one directory listing and one small read per thread. Without
``/proc`` (or a kernel without ``CONFIG_PROC_CHILDREN``) it finds nothing.

On a timeout, a cap or a cancel the runner is killed and runs no exit
handler: the launcher then ends its descendants itself
(:mod:`boring_dispatch.process._descendants`, walked from the runner while it
still runs).

The runner's deadline (:mod:`._deadline`) calls it too before ending its
group, so what left the group is ended with it.

Armed only when the runner leads its own process group (as the deadline):
a runner started by hand in the caller's group never kills the caller's
processes. This is a guardrail in the gateway's own process, like the
deadline: gateway code can clear the subreaper flag or the exit handlers,
or end with ``os._exit``; a process killed by ``SIGKILL`` (the launcher's
last resort) runs no exit handler at all.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from contextlib import suppress
from typing import Final

__all__ = ["MAX_ROUNDS", "arm", "end_children", "list_children"]

#: Rounds of kill-and-reap before giving up (each round ends a generation of orphans).
MAX_ROUNDS: Final = 64
#: The longest the whole sweep waits for killed processes to end (a process in ``D`` state).
_REAP_WAIT_S: Final = 2.0
_PR_SET_CHILD_SUBREAPER: Final = 36
#: The process that armed the reaper: a forked copy of it never sweeps as if it were the runner.
_ARMED_BY: list[int] = []


def arm() -> bool:
    """Make this process a child subreaper and register :func:`end_children` (Linux).

    Returns ``False`` (nothing armed) off Linux, when this process does not
    lead its own group, or when the kernel refuses the flag.
    """
    if not sys.platform.startswith("linux") or os.getpgid(0) != os.getpid():
        return False
    from boring_dispatch.process._reach import libc  # ctypes, loaded once

    try:
        if libc().prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):
        return False
    import atexit

    _ARMED_BY[:] = [os.getpid()]
    atexit.register(end_children)
    return True


def list_children() -> list[int]:
    """This process's children (every thread's), zombies included; ``[]`` without ``/proc``."""
    found: list[int] = []
    try:
        tasks = os.listdir("/proc/self/task")  # noqa: PTH208 - names only
    except OSError:
        return found
    for task in tasks:
        try:
            found.extend(int(pid) for pid in _read(f"/proc/self/task/{task}/children").split())
        except (OSError, ValueError):
            continue  # a thread that ended meanwhile
    return found


def _read(path: str) -> bytes:
    """A whole ``/proc`` file, with plain descriptors (the exit path is paid by every call)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = [os.read(fd, 1 << 16)]
        while chunks[-1]:
            chunks.append(os.read(fd, 1 << 16))
    finally:
        os.close(fd)
    return b"".join(chunks)


def end_children() -> None:
    """Kill and reap every child of this process and the groups they lead, round after round.

    A no-op in any process but the one that armed the reaper. Never raises.
    """
    if not _ARMED_BY or _ARMED_BY[0] != os.getpid():
        return
    with suppress(Exception):
        own_group = os.getpgid(0)
        deadline = time.monotonic() + _REAP_WAIT_S
        for _ in range(MAX_ROUNDS):
            children = list_children()
            if not children:
                return
            for pid in children:
                _kill(pid, own_group)
            if not _reap(children, deadline):
                return


def _kill(pid: int, own_group: int) -> None:
    """``SIGKILL`` to the child's group (unless it may hold others' processes) and to the child.

    Never the runner's own group. In a session the runner does not lead (a
    nested runner in its caller's session), a group the child does not lead
    may be the caller's: only the child is signalled then.
    """
    with suppress(OSError):
        group = os.getpgid(pid)
        session = os.getsid(0)
        ours = session == os.getpid() or group == pid or os.getsid(pid) != session
        if group != own_group and ours:
            os.killpg(group, signal.SIGKILL)
    with suppress(OSError):
        os.kill(pid, signal.SIGKILL)


def _reap(pids: list[int], deadline: float) -> bool:
    """Reap the killed children, waiting until ``deadline`` at most; whether all ended in time."""
    import select  # only when something was left

    for pid in pids:
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:
            pidfd = None  # already reaped (SIGCHLD ignored, or another waiter)
        if pidfd is not None:
            try:
                poller = select.poll()
                poller.register(pidfd, select.POLLIN)
                remaining_ms = max(0, int((deadline - time.monotonic()) * 1000) + 1)
                if not poller.poll(remaining_ms):
                    return False  # not ended in time: left to whoever reaps it next
            finally:
                os.close(pidfd)
        with suppress(OSError):
            os.waitpid(pid, os.WNOHANG)
    return True
