"""A process's descendants held by pidfd (``_descendants``), on real trees that left their group.

The root is the runner's reaper (a child subreaper), as a runner is: every
process below it stays its descendant, also once its parent exited. What is
found before the root dies is still reached after it died.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from hypothesis import HealthCheck, given, settings

from boring_dispatch.process._descendants import MAX_HELD, Descendants
from kits.gateways import process_running, wait_until
from kits.trees import Chain, chains, end_tree, read_line, start_tree


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chain=chains())
def test_what_is_found_below_the_root_is_ended_after_the_root_died(chain: Chain) -> None:
    proc = start_tree(chain, arm=True)
    pids: list[int] = []
    try:
        pids = read_line(proc)
        with Descendants(proc.pid) as tree:
            assert set(pids) <= tree.held
            assert tree.running()
            proc.kill()  # no exit handler: what it adopted is reparented away
            proc.wait(timeout=15)
            tree.signal(signal.SIGKILL)
            assert wait_until(lambda: not tree.running(), timeout_s=5)
        assert not any(process_running(pid) for pid in pids)
    finally:
        end_tree(proc, pids)


def test_a_reaped_root_is_never_walked() -> None:
    proc = start_tree([("session", False)], arm=True)
    pids: list[int] = []
    try:
        pids = read_line(proc)
        with Descendants(proc.pid, walk_root=False) as tree:
            assert tree.held == frozenset()
            assert not tree.running()
    finally:
        end_tree(proc, pids)


def test_the_descriptors_held_are_bounded() -> None:
    # More children in sessions of their own than the bound: only the bound is held (walked
    # from this test's own process, never signalled).
    extra = [
        subprocess.Popen(
            [sys.executable, "-c", "import os; os.read(0, 1)"],
            stdin=subprocess.PIPE,
            start_new_session=True,
        )
        for _ in range(MAX_HELD + 6)
    ]
    try:
        with Descendants(os.getpid()) as tree:
            assert len(tree.held) == MAX_HELD
            assert tree.running()
    finally:
        for child in extra:
            with child:
                child.kill()
                child.wait(timeout=15)
