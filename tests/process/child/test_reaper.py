"""The runner as the reaper of what its gateway leaves (``child._reaper``), on real process trees.

The gateway-level families (forked, spawned, streamed, exit handlers) are in
``tests/process/test_leftovers.py``; here the sweep itself, over chains of
processes that leave their group or session, orphaned or not.
"""

from __future__ import annotations

import subprocess
import sys

from hypothesis import HealthCheck, given, settings

from kits.gateways import process_gone
from kits.trees import Chain, chains, end_tree, expected_alive, read_line, start_tree


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chain=chains())
def test_the_sweep_ends_every_descendant_wherever_it_went(chain: Chain) -> None:
    proc = start_tree(chain, arm=True)
    pids: list[int] = []
    try:
        pids = read_line(proc)
        assert len(pids) == expected_alive(chain)
        assert proc.stdin is not None
        proc.stdin.write("end\n")
        proc.stdin.flush()
        assert read_line(proc) == []
        assert proc.wait(timeout=15) == 0
        assert all(process_gone(pid) for pid in pids)  # reaped by the root, not left as zombies
    finally:
        end_tree(proc, pids)


def test_only_a_group_leader_arms_the_reaper() -> None:
    script = "from boring_dispatch.process.child import _reaper\nprint(_reaper.arm())"
    for new_session, armed in ((False, "False"), (True, "True")):
        done = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            timeout=15,
            start_new_session=new_session,
            check=True,
        )
        assert done.stdout.strip() == armed


def test_a_forked_copy_of_the_runner_never_sweeps() -> None:
    script = """
import os, subprocess, sys
from boring_dispatch.process.child import _reaper
assert _reaper.arm()
pid = os.fork()
if pid == 0:
    child = subprocess.Popen(["sleep", "300"])
    _reaper.end_children()  # not the process that armed it: a no-op
    alive = child.poll() is None
    child.kill()
    child.wait()
    os._exit(0 if alive else 1)
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status))
"""
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=15,
        start_new_session=True,
        check=True,
    )
    assert done.stdout.strip() == "0"


def test_a_nested_runner_never_kills_a_group_of_its_callers_session() -> None:
    # The caller leads the session and has a bystander in a group of its own; the
    # runner leads its own group in that session, and its child joins the bystander's.
    script = """
import os, signal, sys
from boring_dispatch.process.child import _reaper
hold, _never = os.pipe()
bystander = os.fork()
if bystander == 0:
    os.setpgid(0, 0)
    os.read(hold, 1)
    os._exit(0)
os.setpgid(bystander, bystander)
ready_r, ready_w = os.pipe()
runner = os.fork()
if runner == 0:
    os.setpgid(0, 0)
    assert _reaper.arm()
    child = os.fork()
    if child == 0:
        os.setpgid(0, bystander)
        os.write(ready_w, b"x")
        os.read(hold, 1)
        os._exit(0)
    os.read(ready_r, 1)
    _reaper.end_children()
    os._exit(0 if _reaper.list_children() == [] else 3)
_, status = os.waitpid(runner, 0)
alive = os.waitpid(bystander, os.WNOHANG) == (0, 0)
os.kill(bystander, signal.SIGKILL)
os.waitpid(bystander, 0)
print(os.waitstatus_to_exitcode(status), alive)
"""
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=15,
        start_new_session=True,
        check=True,
    )
    assert done.stdout.split() == ["0", "True"]
