"""Ending a child's process group, session and descendants (Linux), without racing pid reuse.

The leader is signalled before it is reaped, so its pid (the group and session
id) cannot be reused by an unrelated process in between. Zombies that wait for
their reaper count as ended. ``/proc`` is read to tell zombies from running
members and to find what is left in the session (the groups of nested calls).

The leader's descendants are ended too, wherever they moved (another session
included): the runner is a child subreaper (:mod:`.child._reaper`), so while
it runs every orphan of its gateway is its child. They are found by walking
``/proc/<pid>/task/*/children`` from the leader before the first signal and
held by pidfd, so the later signals reach them even after the leader died
(and they were reparented away) without racing pid reuse.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from contextlib import suppress
from pathlib import Path
from typing import Final

from boring_dispatch.process._descendants import Descendants

__all__ = ["end_group", "end_leftovers"]

_TERM_GRACE_S: Final = 1.0
_KILL_WAIT_S: Final = 5.0
_POLL_S: Final = 0.01


def end_group(proc: subprocess.Popen[bytes]) -> None:
    """End the child's group and what is left in its session: SIGTERM, grace, SIGKILL.

    Every wait is bounded; returns when nothing runs any more (zombies awaiting
    their reaper do not count) or when the bounded waits are over.
    """
    pgid = proc.pid  # the leader's pid is the group id (and the session id at top level)
    # Walked from the leader only while it is not reaped (its pid still its own).
    with Descendants(pgid, walk_root=proc.returncode is None) as tree:
        _signal_all(pgid, signal.SIGTERM, tree)
        deadline = time.monotonic() + _TERM_GRACE_S
        while time.monotonic() < deadline:
            if proc.poll() is not None and not _alive(pgid, tree):
                return
            time.sleep(_POLL_S)
        _signal_all(pgid, signal.SIGKILL, tree)
        with suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=_KILL_WAIT_S)
        deadline = time.monotonic() + _KILL_WAIT_S
        while _alive(pgid, tree) and time.monotonic() < deadline:
            _signal_all(pgid, signal.SIGKILL, tree)  # members forked after the last signal
            time.sleep(_POLL_S)


def end_leftovers(proc: subprocess.Popen[bytes]) -> None:
    """After the leader exited: end what it left in its group (nothing, usually: one syscall).

    What left the group is the runner's to end at its exit (``child._reaper``).
    A leader killed by a signal (a cancel, its CPU limit, the OOM killer) ran no
    exit handler: the group and the session are ended then.
    """
    if proc.returncode is not None and proc.returncode < 0:
        end_group(proc)
        return
    try:
        os.killpg(proc.pid, 0)
    except ProcessLookupError:
        return
    except PermissionError:
        pass
    end_group(proc)


def _signal_all(pgid: int, signum: signal.Signals, tree: Descendants) -> None:
    """Signal the leader's descendants, the group, then every process still in the session."""
    tree.signal(signum)
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)
    try:
        members = _running_members(session=pgid)
    except OSError:
        return  # no /proc: the group signal is all there is
    for pid in members:
        with suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)


def _alive(pgid: int, tree: Descendants) -> bool:
    """Whether a descendant, a member of the group or of the session is still running."""
    if tree.running():
        return True
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        group_exists = False
    except PermissionError:
        return True
    else:
        group_exists = True
    try:
        return bool(_running_members(group=pgid if group_exists else None, session=pgid))
    except OSError:
        return group_exists  # no /proc: trust killpg


def _running_members(*, group: int | None = None, session: int | None = None) -> list[int]:
    """Pids of non-zombie processes in ``group`` or ``session`` (Linux ``/proc``).

    Raises:
        OSError: ``/proc`` cannot be listed.
    """
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat_line = (entry / "stat").read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        # After the parenthesised command: state ppid pgrp session ...
        fields = stat_line.rpartition(")")[2].split()
        if len(fields) < 4 or fields[0] in {"Z", "X"}:
            continue
        if (group is not None and fields[2] == str(group)) or (
            session is not None and fields[3] == str(session)
        ):
            found.append(int(entry.name))
    return found
