"""Ending the gateways an MCP server started when their call or the session goes away.

Every gateway runs in its own session (so its own process group, whose id is
the leader's pid). A nested call is brokered by the dispatcher, which starts the
nested gateway in yet another session as its own child. A group kill of the top
gateway therefore misses nested gateways, and nothing kills anything when the
client disappears mid-call. This module
finds the groups to end by walking this process's descendants in ``/proc``:

- :func:`end_descendant_groups` with no trace id ends every group below this
  process (the session ended: stdin EOF, ``SIGTERM``);
- with a trace id it ends the groups of descendants whose environment carries
  that trace id (one cancelled call: the launcher passes the call's trace id
  to the gateway, and nested calls inherit it).

The walk takes a snapshot, stops every group found (a stopped process cannot
start new ones), takes another snapshot to catch groups born in between, then
kills them all. Without ``/proc`` (not Linux) nothing is found and gateways
end at their own timeout. A process that deliberately leaves its session and
reparents away escapes; process groups are a tidy-up mechanism, not a container.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path
from typing import Final

from boring_dispatch.observe.trace import TRACE_ID_ENV, valid_trace_id

__all__ = ["end_descendant_groups"]

_PROC: Final = Path("/proc")
_MAX_ROUNDS: Final = 4
_MAX_ENVIRON: Final = 1 << 20


def end_descendant_groups(trace_id: str | None = None) -> int:
    """Kill (``SIGKILL``) the process groups of this process's descendants.

    Args:
        trace_id: when given, only descendants started for this trace id.

    Returns:
        How many groups were signalled. Never raises.
    """
    if trace_id is not None and not valid_trace_id(trace_id):
        return 0
    try:
        ended: set[int] = set()
        for _ in range(_MAX_ROUNDS):
            found = _descendant_groups(trace_id) - ended
            if not found:
                break
            _signal_groups(found, signal.SIGSTOP)
            ended |= found
        _signal_groups(ended, signal.SIGKILL)
        return len(ended)
    except Exception:  # noqa: BLE001 - a clean-up failure must not end the server
        return 0


def _signal_groups(groups: Iterable[int], signum: signal.Signals) -> None:
    for pgid in groups:
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signum)


def _descendant_groups(trace_id: str | None) -> set[int]:
    table = _process_table()
    own_group = os.getpgrp()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    groups: set[int] = set()
    pending = list(children.get(os.getpid(), ()))
    while pending:
        pid = pending.pop()
        pending.extend(children.get(pid, ()))
        pgid = table[pid][1]
        if pgid not in (own_group, 0) and (trace_id is None or _carries(pid, trace_id)):
            groups.add(pgid)
    return groups


def _process_table() -> dict[int, tuple[int, int]]:
    """``{pid: (ppid, pgid)}`` of every process visible in ``/proc``; empty without it."""
    table: dict[int, tuple[int, int]] = {}
    try:
        entries = [entry for entry in _PROC.iterdir() if entry.name.isdigit()]
    except OSError:
        return table
    for entry in entries:
        try:
            with (entry / "stat").open("rb") as handle:
                line = handle.read(4096)
        except OSError:
            continue
        # After the parenthesised command: state ppid pgrp ...
        fields = line.rpartition(b")")[2].split()
        if len(fields) > 2 and fields[1].isdigit() and fields[2].isdigit():
            table[int(entry.name)] = (int(fields[1]), int(fields[2]))
    return table


def _carries(pid: int, trace_id: str) -> bool:
    """Whether the process started with ``BORING_DISPATCH_TRACE_ID=<trace_id>``."""
    wanted = f"{TRACE_ID_ENV}={trace_id}".encode("ascii")
    try:
        with (_PROC / str(pid) / "environ").open("rb") as handle:
            environ = handle.read(_MAX_ENVIRON)
    except OSError:
        return False
    return wanted in environ.split(b"\0")
