"""Keeping a gateway away from the dispatcher process (Linux; both sides, stdlib only).

A gateway is a child of the dispatcher, usually with the same uid. Through
``/proc/<ppid>`` such a child could read the dispatcher's environment (the
operator's credentials), its memory, and open its descriptors, among them
the MCP server's stdio pipes (and so write forged JSON-RPC to the client).
The kernel refuses all of that to a process of the same uid when the target
is not *dumpable* and the caller lacks the capabilities that override it:

- parent side, :func:`protect_dispatcher`: ``prctl(PR_SET_DUMPABLE, 0)`` in
  the dispatcher before every launch. ``/proc/<pid>`` of the dispatcher then
  belongs to root and needs ptrace access (no core dumps either). Children
  are dumpable again after ``execve``;
- child side, :func:`drop_reach_capabilities`: before any gateway code the
  runner removes the capabilities that override that check
  (``CAP_SYS_PTRACE``; ``CAP_SYS_ADMIN`` and ``CAP_PERFMON``, which
  current kernels accept for read access; ``CAP_CHECKPOINT_RESTORE``) from
  its bounding, permitted, effective and inheritable sets, so neither the
  gateway nor any program it runs has them again. This matters when the
  gateway runs as root; a process without capabilities loses nothing.

What stays possible, and why: a gateway of the same uid can still signal
the dispatcher (``kill`` needs no capability between processes of one uid),
and a root gateway keeps its other capabilities (loading kernel modules, raw
I/O, ...), each of which reaches everything. Running gateways as another
user (``ExecLimits.run_as_uid``, ``--run-as``) closes both: the kernel then
refuses signals and ``/proc`` access across uids. Without capabilities to
drop the bounding set cannot be lowered: a non-root gateway that runs a
program carrying file capabilities gets what that program carries.
"""

from __future__ import annotations

import sys
from typing import Any, Final

__all__ = [
    "REACH_CAPABILITIES",
    "ReachError",
    "drop_reach_capabilities",
    "libc",
    "protect_dispatcher",
]

#: ``CAP_SYS_PTRACE``, ``CAP_SYS_ADMIN``, ``CAP_PERFMON``, ``CAP_CHECKPOINT_RESTORE``.
REACH_CAPABILITIES: Final = (19, 21, 38, 40)
_PR_SET_DUMPABLE: Final = 4
_PR_CAPBSET_READ: Final = 23
_PR_CAPBSET_DROP: Final = 24
_CAPABILITY_VERSION_3: Final = 0x20080522
_EPERM: Final = 1
_EINVAL: Final = 22

_LIBC: list[Any] = []
_CAPABILITY_TYPES: list[Any] = []


class ReachError(Exception):
    """The kernel refused a protection that should have applied (the launch fails closed)."""


def libc() -> Any:  # noqa: ANN401 - a ctypes library handle
    """The C library (``ctypes``), loaded once per process."""
    if not _LIBC:
        import ctypes  # only here: a dry run never needs it

        _LIBC.append(ctypes.CDLL(None, use_errno=True))
    return _LIBC[0]


def protect_dispatcher() -> None:
    """Make this process not dumpable (Linux); a no-op elsewhere.

    Raises:
        ReachError: ``prctl`` failed.
    """
    if not sys.platform.startswith("linux"):
        return
    if libc().prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise ReachError("cannot make the dispatcher process non-dumpable")


def drop_reach_capabilities() -> None:
    """Remove :data:`REACH_CAPABILITIES` from every capability set of this process (Linux).

    Raises:
        ReachError: a capability is held and the kernel refused to drop it.
    """
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    c_library = libc()
    held = _capabilities(c_library)
    for number in REACH_CAPABILITIES:
        if c_library.prctl(_PR_CAPBSET_READ, number, 0, 0, 0) != 1:
            continue  # not in the bounding set, or unknown to this kernel
        if c_library.prctl(_PR_CAPBSET_DROP, number, 0, 0, 0) != 0:
            error = ctypes.get_errno()
            # Without CAP_SETPCAP (any process without capabilities) the bounding set
            # cannot be lowered; such a process holds none of these to lose.
            if error not in {_EPERM, _EINVAL} or held.any_of(REACH_CAPABILITIES):
                raise ReachError("cannot drop a capability from the bounding set")
    if held.any_of(REACH_CAPABILITIES):
        held.clear(REACH_CAPABILITIES)
        if c_library.capset(ctypes.byref(held.header), held.data) != 0:
            raise ReachError("cannot drop a capability")


class _Capabilities:
    """The ``capget`` view of this process: a header and two 32-bit words per set."""

    def __init__(self, header: Any, data: Any) -> None:  # noqa: ANN401 - ctypes objects
        self.header = header
        self.data = data

    def any_of(self, numbers: tuple[int, ...]) -> bool:
        return any(
            (word.effective | word.permitted | word.inheritable) & (1 << (number % 32))
            for number in numbers
            for word in (self.data[number // 32],)
        )

    def clear(self, numbers: tuple[int, ...]) -> None:
        for number in numbers:
            word = self.data[number // 32]
            mask = ~(1 << (number % 32)) & 0xFFFFFFFF
            word.effective &= mask
            word.permitted &= mask
            word.inheritable &= mask


def capability_types() -> tuple[Any, Any]:
    """The ``capget`` header and data structures (ctypes), made once per process."""
    if not _CAPABILITY_TYPES:
        import ctypes

        class Header(ctypes.Structure):
            _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))

        class Data(ctypes.Structure):
            _fields_ = (
                ("effective", ctypes.c_uint32),
                ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32),
            )

        _CAPABILITY_TYPES.extend((Header, Data))
    return _CAPABILITY_TYPES[0], _CAPABILITY_TYPES[1]


def _capabilities(libc: Any) -> _Capabilities:  # noqa: ANN401 - a ctypes library handle
    import ctypes

    header_type, data_type = capability_types()
    header = header_type(_CAPABILITY_VERSION_3, 0)
    data = (data_type * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        raise ReachError("cannot read this process's capabilities")
    return _Capabilities(header, data)
