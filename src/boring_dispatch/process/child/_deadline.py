"""The child's own deadline: the runner's process group ends even if the dispatcher is gone.

The parent ends a child's group on timeout, but only while the parent lives.
If the dispatcher is killed with ``SIGKILL`` mid-call, two child-side
mechanisms take over, both armed by the runner before any gateway code runs:

- ``ITIMER_REAL`` fires ``SIGALRM`` at ``timeout + grace`` (later than the
  parent's own timeout, so a living parent always reports the timeout first);
- on Linux, ``prctl(PR_SET_PDEATHSIG, SIGALRM)`` sends the same signal when
  the thread that started the runner ends.

The ``SIGALRM`` handler first ends the runner's children and the groups they
lead (:mod:`._reaper`: with the runner a subreaper, every orphaned descendant
is one, also one that left the group or the session), then sends ``SIGKILL``
to the runner's whole process group (the runner leads it), so grandchildren
in the group end with the gateway.
Both are armed only when the runner leads its own group: a runner started by
hand in the caller's group must never kill the caller.

This is a guardrail, not a boundary: gateway code can replace the handler or
the timer, and a Python handler runs only when the main thread gets back to
the interpreter loop.
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType
from typing import Final

__all__ = ["GRACE_S", "arm"]

#: Seconds past the call's timeout before the child ends itself.
GRACE_S: Final = 5.0
_PR_SET_PDEATHSIG: Final = 1


def _end_own_group(signum: int, frame: FrameType | None) -> None:
    del signum, frame
    from boring_dispatch.process.child import _reaper

    _reaper.end_children()  # what left the group (armed only in the runner)
    os.killpg(0, signal.SIGKILL)


def arm(timeout_s: float, parent_pid: int) -> bool:
    """Arm the timer and (Linux) the parent-death signal; ``False`` when not armed.

    ``parent_pid`` is the parent as first seen by the runner: when the parent
    has already changed after the parent-death signal is set (the dispatcher
    died in between), the group is ended at once.
    """
    if os.getpgid(0) != os.getpid():
        return False
    signal.signal(signal.SIGALRM, _end_own_group)
    signal.setitimer(signal.ITIMER_REAL, timeout_s + GRACE_S)
    if sys.platform.startswith("linux"):
        _set_parent_death_signal()
        if os.getppid() != parent_pid:
            _end_own_group(signal.SIGALRM, None)
    return True


def _set_parent_death_signal() -> None:
    from boring_dispatch.process._reach import libc as c_library  # ctypes, loaded once

    try:
        libc = c_library()
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGALRM), 0, 0, 0)
    except (OSError, AttributeError):
        return  # no prctl: the timer alone bounds the child
