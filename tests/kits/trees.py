"""Real process trees that leave their group or session: a builder script and its family.

A tree is a chain of generations below a root process: each generation is
``(how, leaves)``, where ``how`` is where the new process goes (``stay`` in its
parent's group, its own ``group``, its own ``session``) and ``leaves`` whether
its parent exits once it is started (so it becomes an orphan). The root is
started by :func:`start_tree`; every process that stays alive reports its pid
to the root over a pipe, and the root prints them as one JSON line.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from contextlib import suppress
from typing import Final

from hypothesis import strategies as st

#: ``(how, leaves)`` per generation below the root.
Chain = list[tuple[str, bool]]

HOWS: Final = ("stay", "group", "session")

#: argv: the chain (JSON), then ``arm`` (the root is the runner's reaper) or ``plain``.
#: The root prints the pids that stay alive, then waits for a line on stdin: ``end``
#: calls the reaper's sweep and prints the pids still there; anything else just exits.
_SCRIPT: Final = r"""
import json, os, sys
chain, mode = json.loads(sys.argv[1]), sys.argv[2]
if mode == "arm":
    from boring_dispatch.process.child import _reaper
    assert _reaper.arm()
read_end, write_end = os.pipe()
hold, _never_written = os.pipe()

def build(index):
    if index < len(chain):
        how, leaves = chain[index]
        if os.fork() == 0:
            if how == "group":
                os.setpgid(0, 0)
            elif how == "session":
                os.setsid()
            build(index + 1)
            os._exit(0)
        if leaves and index > 0:
            os._exit(0)
    if index > 0:
        os.write(write_end, b"%d\n" % os.getpid())
        os.read(hold, 1)  # never written: blocks until killed
        os._exit(0)

build(0)
pids = []
buffer = b""
while True:
    chunk = os.read(read_end, 4096)
    if not chunk:
        break
    buffer += chunk
    pids = [int(line) for line in buffer.split()]
    if len(pids) == EXPECTED:
        break
print(json.dumps(pids), flush=True)
if sys.stdin.readline().strip() == "end":
    _reaper.end_children()
    left = []
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        left.append(pid)
    print(json.dumps(left), flush=True)
"""


def expected_alive(chain: Chain) -> int:
    """How many processes below the root stay alive: every one whose child does not leave it."""
    last = len(chain) - 1
    return sum(1 for index in range(len(chain)) if index == last or not chain[index + 1][1])


def chains() -> st.SearchStrategy[Chain]:
    """One to four generations, each somewhere and orphaned or not."""
    return st.lists(st.tuples(st.sampled_from(HOWS), st.booleans()), min_size=1, max_size=4)


def start_tree(chain: Chain, *, arm: bool) -> subprocess.Popen[str]:
    """Start the root in a session of its own (as a runner is started)."""
    script = _SCRIPT.replace("EXPECTED", str(expected_alive(chain)))
    return subprocess.Popen(
        [sys.executable, "-c", script, json.dumps(chain), "arm" if arm else "plain"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def read_line(proc: subprocess.Popen[str], timeout_s: float = 15.0) -> list[int]:
    """The root's next JSON line, waited for at most ``timeout_s``."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout_s)
    assert ready, "the tree's root did not answer in time"
    value = json.loads(proc.stdout.readline())
    assert isinstance(value, list)
    return [int(pid) for pid in value]


def end_tree(proc: subprocess.Popen[str], pids: list[int]) -> None:
    """Whatever a failed test left: the root, its pipes and the pids it reported."""
    with proc:
        with suppress(ProcessLookupError):
            proc.kill()
        proc.wait(timeout=15)
    for pid in pids:
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
