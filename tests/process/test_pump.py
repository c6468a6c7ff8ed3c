"""The captured pump: an exit with both pipes at EOF is the usual exit, not a leftover."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from contextlib import suppress

import pytest

from boring_dispatch.process._pump import pump


def _run(code: str) -> tuple[bool, bytes, bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-I", "-c", code],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    pidfd = os.pidfd_open(proc.pid)
    try:
        result = pump(proc, None, 1 << 20, time.monotonic() + 30, exit_fd=pidfd)
    finally:
        os.close(pidfd)
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)  # not reaped yet: the group id is still ours
        proc.wait(30)
    return result.leader_exited, bytes(result.stdout), bytes(result.stderr)


@pytest.mark.parametrize("size", [0, 1, 100, 65_535, 65_536, 300_000])
def test_a_child_that_exits_with_its_pipes_is_not_a_leftover(size: int) -> None:
    code = f"import sys; sys.stdout.write('x' * {size}); sys.stderr.write('e' * ({size} // 3))"
    leader_exited, out, err = _run(code)
    assert not leader_exited
    assert out == b"x" * size
    assert err == b"e" * (size // 3)


def test_a_pipe_held_by_what_the_child_left_is_reported() -> None:
    code = (
        "import subprocess, sys\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'])\n"
        "print('left', flush=True)\n"
    )
    leader_exited, out, _ = _run(code)
    assert leader_exited
    assert out == b"left\n"
