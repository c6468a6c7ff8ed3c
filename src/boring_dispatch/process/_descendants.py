"""A process's descendants, found through ``/proc`` and held by pidfd (Linux; empty elsewhere).

Used by :func:`~boring_dispatch.process._groups.end_group` to reach what left
the gateway's group and session: the runner is a child subreaper
(:mod:`~boring_dispatch.process.child._reaper`), so while it runs every
orphan of its gateway is its child, and every process the gateway started
is somewhere below it.

The walk reads ``/proc/<pid>/task/*/children`` from the root down. A pid read
there is opened as a pidfd and kept only if, after the opening, it is still
the child of the parent it was read from and that parent (held by pidfd, or
the root) has not exited meanwhile: a pid reused by an unrelated process is
never held. Once held, a process is signalled through its pidfd, also after
it was reparented away (its parent killed first), and never once reaped.
"""

from __future__ import annotations

import os
import select
import signal
from contextlib import suppress
from types import TracebackType
from typing import Final, Self

__all__ = ["MAX_HELD", "Descendants"]

#: A bound on the processes held: each is a descriptor of the dispatcher (whose
#: ``RLIMIT_NOFILE`` several calls share). Past it, the group and session
#: clean-up is all there is; a fork bomb is the rlimits' business.
MAX_HELD: Final = 64


class Descendants:
    """The root's descendants as found so far; a context manager that closes its pidfds."""

    def __init__(self, root: int, *, walk_root: bool = True, root_fd: int | None = None) -> None:
        """``walk_root``: the root is not reaped yet (its pid is still its own).

        ``root_fd``: a pidfd of the root held by the caller (copied, never closed
        here), for a root that may have been reaped already: it is walked only
        while that pidfd shows it running.
        """
        self._held: dict[int, int] = {}
        self._root = root
        self._root_fd: int | None = None
        with suppress(AttributeError, OSError):
            if root_fd is not None:
                self._root_fd = os.dup(root_fd)
            elif walk_root:
                self._root_fd = os.pidfd_open(root)

    def __enter__(self) -> Self:
        self.refresh()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        for fd in (*self._held.values(), self._root_fd):
            if fd is not None:
                with suppress(OSError):
                    os.close(fd)
        self._held.clear()
        self._root_fd = None

    @property
    def held(self) -> frozenset[int]:
        """The pids held so far."""
        return frozenset(self._held)

    def refresh(self) -> None:
        """Add what was started or reparented below the root or a held process since."""
        parents: list[tuple[int, int | None]] = [(self._root, self._root_fd)]
        parents += self._held.items()
        done: set[int] = set()
        while parents:
            parent, parent_fd = parents.pop()
            if parent in done or parent_fd is None or _exited(parent_fd):
                continue
            done.add(parent)
            children = _children(parent)
            if _exited(parent_fd):
                continue  # the list may be another process's (a reused pid)
            for child in children:
                if child not in self._held and len(self._held) < MAX_HELD:
                    child_fd = _open_child(child, parent, parent_fd)
                    if child_fd is None:
                        continue
                    self._held[child] = child_fd
                parents.append((child, self._held.get(child)))

    def signal(self, signum: signal.Signals) -> None:
        """Send ``signum`` to every held process still running (after a :meth:`refresh`)."""
        self.refresh()
        for fd in self._held.values():
            with suppress(OSError):
                signal.pidfd_send_signal(fd, signum)

    def running(self) -> bool:
        """Whether a held process has not exited (a zombie has)."""
        return any(not _exited(fd) for fd in self._held.values())


def _exited(pidfd: int) -> bool:
    """Whether the process of ``pidfd`` has exited (a pidfd is readable from then on)."""
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    return bool(poller.poll(0))


def _children(pid: int) -> list[int]:
    """The children of ``pid``, every thread's; ``[]`` without ``/proc``."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")  # noqa: PTH208 - names only
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", "rb") as handle:  # noqa: PTH123
                found.extend(int(child) for child in handle.read().split())
        except (OSError, ValueError):
            continue
    return found


def _open_child(pid: int, parent: int, parent_fd: int) -> int | None:
    """A pidfd of ``pid`` if it is (still) the child of the running ``parent``; else ``None``."""
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:  # noqa: PTH123
            fields = handle.read(4096).rpartition(b")")[2].split()
        if len(fields) > 1 and fields[1] == str(parent).encode() and not _exited(parent_fd):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None
