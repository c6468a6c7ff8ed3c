"""Cancelling one call's gateways by its trace id, before, during or after their spawn.

The MCP server cancels a call (``notifications/cancelled``, an SDK read
timeout, the session ending) while the call may be anywhere: still resolving,
about to spawn its gateway, spawning it, running it, or running it while the
gateway asks the broker for a nested call (which is spawned here, in this
process, under the same trace id). A walk of ``/proc`` at the moment of the
cancel misses every gateway that is spawned a moment later, and one that is
between ``fork`` and ``exec`` (its environment is still ours).

So every launch with a trace id goes through :func:`spawn_unless_cancelled`:

- a trace id already cancelled is refused before anything is spawned;
- a spawned leader is registered under its trace id with a pidfd, and if the
  trace id was cancelled while it was being spawned it is killed at once;
- :func:`cancel` marks the trace id and kills every leader registered under
  it, with its descendants found just before (also those that left its group
  and session, see :mod:`._descendants`). The launcher that waits for a
  killed leader then ends the rest of its group and session as it does after
  any exit (``_groups.end_group``).

Leaders are killed through their pidfd (Linux >= 5.3), under this module's
lock, so a leader that has already been reaped (and whose pid may be reused)
is never signalled: the launcher unregisters it (:func:`finished`) and the
pidfd is closed under the same lock. Without pidfds the leader is signalled by
pid only while :class:`subprocess.Popen` has not recorded its exit.

A cancelled trace id stays marked until :func:`forget` (the server calls it
when the call's work has ended), so a late nested spawn is refused too.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections.abc import Callable
from contextlib import suppress
from typing import Final

from boring_dispatch.process._descendants import Descendants

__all__ = ["cancel", "finished", "forget", "spawn_unless_cancelled"]

_LOCK: Final = threading.Lock()
_CANCELLED: Final[set[str]] = set()
#: trace id -> {id(Popen): (Popen, pidfd or None)}
_RUNNING: Final[dict[str, dict[int, tuple[subprocess.Popen[bytes], int | None]]]] = {}


def spawn_unless_cancelled(
    trace_id: str | None, spawn: Callable[[], subprocess.Popen[bytes]]
) -> subprocess.Popen[bytes] | None:
    """Run ``spawn`` unless ``trace_id`` is cancelled; register what it started.

    Returns:
        The started process, or ``None`` when the trace id was cancelled
        before the spawn (nothing was started). A process whose trace id is
        cancelled while it is being spawned is returned already killed.
        Without a trace id nothing is registered.
    """
    if trace_id is None:
        return spawn()
    with _LOCK:
        if trace_id in _CANCELLED:
            return None
    proc = spawn()
    try:
        pidfd: int | None = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # not Linux >= 5.3
        pidfd = None
    with _LOCK:
        _RUNNING.setdefault(trace_id, {})[id(proc)] = (proc, pidfd)
        if trace_id in _CANCELLED:  # cancelled between the check above and now
            _kill(proc, pidfd)
    return proc


def finished(trace_id: str | None, proc: subprocess.Popen[bytes]) -> None:
    """Unregister ``proc`` (its launcher is done with it) and close its pidfd."""
    if trace_id is None:
        return
    with _LOCK:
        entries = _RUNNING.get(trace_id)
        entry = None if entries is None else entries.pop(id(proc), None)
        if entries is not None and not entries:
            del _RUNNING[trace_id]
        if entry is not None and entry[1] is not None:
            os.close(entry[1])


def cancel(trace_id: str) -> int:
    """Mark ``trace_id`` cancelled and kill every leader registered under it.

    Returns:
        How many leaders were signalled. Never raises.
    """
    with _LOCK:
        _CANCELLED.add(trace_id)
        entries = list(_RUNNING.get(trace_id, {}).values())
        for proc, pidfd in entries:
            _kill(proc, pidfd)
    return len(entries)


def forget(trace_id: str) -> None:
    """Drop the cancelled mark of a call whose work has ended."""
    with _LOCK:
        _CANCELLED.discard(trace_id)


def _kill(proc: subprocess.Popen[bytes], pidfd: int | None) -> None:
    """``SIGKILL`` the leader and its descendants (called under the lock).

    The descendants are found while the leader still runs: the runner is a
    child subreaper, so they include what left its group and session, which
    the launcher's group and session clean-up after the leader's death cannot
    reach any more (they are reparented away once it died).
    """
    if pidfd is None:
        with suppress(OSError):
            if proc.returncode is None:
                os.kill(proc.pid, signal.SIGKILL)
        return
    with Descendants(proc.pid, root_fd=pidfd) as tree:
        tree.signal(signal.SIGKILL)
        with suppress(OSError):
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        tree.signal(signal.SIGKILL)  # orphans adopted by the leader meanwhile
