"""The cancel gate of launches, on real processes: before, during and after the spawn.

The MCP-level tests (``test_hardening_mcpcalls_slots.py``) cannot choose the
moment a cancel lands; these place it exactly: before the spawn (nothing
starts), inside the spawn (the new leader is killed as soon as it is
registered), while it runs (killed through its pidfd) and after it was reaped
(nothing is signalled).
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from boring_dispatch.errors import LaunchFailed
from boring_dispatch.observe.trace import new_trace_id
from boring_dispatch.process import _cancel
from boring_dispatch.process.launch import run_captured
from boring_dispatch.records import ExecLimits
from kits.gateways import make_repo, make_route, process_gone, wait_until


def _sleeper() -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-I", "-c", "import time; time.sleep(60)"], start_new_session=True
    )


@pytest.fixture
def trace_id() -> Iterator[str]:
    trace = new_trace_id()
    yield trace
    _cancel.forget(trace)


def test_a_cancel_before_the_spawn_starts_nothing(trace_id: str) -> None:
    _cancel.cancel(trace_id)
    started: list[int] = []

    def spawn() -> subprocess.Popen[bytes]:
        proc = _sleeper()
        started.append(proc.pid)
        return proc

    assert _cancel.spawn_unless_cancelled(trace_id, spawn) is None
    assert started == []


def test_a_cancel_during_the_spawn_kills_the_new_leader(trace_id: str) -> None:
    def spawn() -> subprocess.Popen[bytes]:
        proc = _sleeper()
        _cancel.cancel(trace_id)  # lands after the check, before the registration
        return proc

    proc = _cancel.spawn_unless_cancelled(trace_id, spawn)
    assert proc is not None
    try:
        assert proc.wait(timeout=10) == -9
    finally:
        _cancel.finished(trace_id, proc)


def test_a_cancel_while_running_kills_every_leader_of_the_call_only(trace_id: str) -> None:
    other = new_trace_id()
    procs = [_cancel.spawn_unless_cancelled(trace_id, _sleeper) for _ in range(3)]
    bystander = _cancel.spawn_unless_cancelled(other, _sleeper)
    assert bystander is not None
    try:
        assert _cancel.cancel(trace_id) == 3
        for proc in procs:
            assert proc is not None
            assert proc.wait(timeout=10) == -9
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait(timeout=10)
        _cancel.finished(other, bystander)
        for proc in procs:
            if proc is not None:
                proc.kill()
                proc.wait(timeout=10)
                _cancel.finished(trace_id, proc)


def test_a_reaped_leader_is_never_signalled(trace_id: str) -> None:
    proc = _cancel.spawn_unless_cancelled(
        trace_id, lambda: subprocess.Popen([sys.executable, "-I", "-c", "pass"])
    )
    assert proc is not None
    proc.wait(timeout=10)
    _cancel.finished(trace_id, proc)
    assert _cancel.cancel(trace_id) == 0  # unregistered: nothing left to signal


def test_a_launch_for_a_cancelled_call_is_refused_without_a_process(
    tmp_path: Path, trace_id: str
) -> None:
    repo = make_repo(tmp_path)
    marker = tmp_path / "ran"
    repo.write(
        "gateway.py",
        f"""
        from pathlib import Path
        from boring_dispatch.gateway import ArgvInterface
        class Echo(ArgvInterface):
            def run(self, argv):
                Path({str(marker)!r}).touch()
                return 0
        """,
    )
    route = make_route(repo)
    _cancel.cancel(trace_id)
    with pytest.raises(LaunchFailed, match="cancelled"):
        run_captured(route, stdin=None, limits=ExecLimits(timeout_s=30.0), trace_id=trace_id)
    assert not marker.exists()
    # Another call's launch is untouched.
    result = run_captured(
        route, stdin=None, limits=ExecLimits(timeout_s=30.0), trace_id=new_trace_id()
    )
    assert result.exit_code == 0
    assert marker.exists()


def test_a_cancel_ends_a_running_launch_promptly(tmp_path: Path, trace_id: str) -> None:
    repo = make_repo(tmp_path)
    pid_file = tmp_path / "pid"
    repo.write(
        "gateway.py",
        f"""
        import os, time
        from pathlib import Path
        from boring_dispatch.gateway import ArgvInterface
        class Echo(ArgvInterface):
            def run(self, argv):
                Path({str(pid_file)!r}).write_text(str(os.getpid()))
                time.sleep(60)
                return 0
        """,
    )
    route = make_route(repo)
    results: list[object] = []
    worker = threading.Thread(
        target=lambda: results.append(
            run_captured(route, stdin=None, limits=ExecLimits(timeout_s=60.0), trace_id=trace_id)
        )
    )
    worker.start()
    assert wait_until(pid_file.exists, timeout_s=30.0)
    _cancel.cancel(trace_id)
    worker.join(timeout=20)  # far below the gateway's 60 s timeout
    assert not worker.is_alive()
    assert process_gone(int(pid_file.read_text()))
    (result,) = results
    assert getattr(result, "exit_code", None) == -9
