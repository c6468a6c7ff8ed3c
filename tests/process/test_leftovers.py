"""What a gateway leaves running when it exits: a family over how it left it.

A timeout, a cap or a cancel ends the gateway's group *and* every process left
in its session (``_groups.end_group``). When the leader exits by itself, the
launcher only checks the leader's group (``_groups.end_leftovers``: one
``killpg(pid, 0)``); what left the group (``setpgid``), the session
(``setsid``), or was started by an exit handler is ended by the runner itself
on its way out (``child._reaper``: the runner is a child subreaper, so every
orphan becomes its child), forked and spawned alike, captured and streamed
alike. The same processes are ended when the call times out or is cancelled:
the runner is killed then and runs no exit handler, so the launcher ends its
descendants, found while it still runs (``_descendants``), also one that
ignores ``SIGTERM`` after the runner died of it.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

import pytest

from boring_dispatch._value import replace
from boring_dispatch.process import _cancel, _fork
from boring_dispatch.process.launch import TIMEOUT_EXIT_CODE, run_captured, run_streaming
from boring_dispatch.records import ExecLimits
from kits.gateways import (
    Repo,
    make_repo,
    make_route,
    process_gone,
    process_running,
    wait_until,
    written,
)

LIMITS = ExecLimits(timeout_s=30.0)
spawn_captured = getattr(run_captured, "__wrapped__", run_captured)

LEAVES = """
import atexit, os, subprocess
from pathlib import Path
from boring_dispatch.gateway import ArgvInterface

QUIET = dict(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def start(record, deaf=False, **how):
    # Deaf: SIGTERM ignored (kept across exec), so only the SIGKILL after the grace ends it.
    argv = ["sh", "-c", "trap '' TERM; exec sleep 300"] if deaf else ["sleep", "300"]
    child = subprocess.Popen(argv, **QUIET, **how)
    record.write_text(str(child.pid))


def chain(record, **how):
    # A child in a group of its own starts one elsewhere, then exits.
    middle = os.fork()
    if middle == 0:
        try:
            os.setpgid(0, 0)
            start(record, **how)
        finally:
            os._exit(0)
    os.waitpid(middle, 0)


class Echo(ArgvInterface):
    def run(self, argv):
        where, record, ending = argv[0], Path(argv[1]), argv[2]
        if where == "its-group":
            start(record)
        elif where == "own-group":
            start(record, process_group=0)
        elif where == "own-session":
            start(record, start_new_session=True)
        elif where == "deaf-session":
            start(record, deaf=True, start_new_session=True)
        elif where == "chain":
            chain(record, process_group=0)
        elif where == "chain-to-session":
            chain(record, start_new_session=True)
        elif where == "at-exit":
            atexit.register(start, record, process_group=0)
        if ending == "killed":
            os.kill(os.getpid(), 9)  # no exit handler runs
        if ending == "hang":
            record.with_suffix(".ready").write_text("ready")
            subprocess.run(["sleep", "300"], **QUIET)
        return 0
"""

WHERE = [
    "its-group",
    "own-group",
    "own-session",
    "deaf-session",
    "chain",
    "chain-to-session",
    "at-exit",
]


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Repo]:
    made = make_repo(tmp_path)
    made.write("gateway.py", LEAVES)
    try:
        yield made
    finally:
        _fork.stop()


def _launch(repo: Repo, how: str, where: str, record: Path, limits: ExecLimits) -> None:
    route = make_route(repo, (where, str(record), "return"))
    if how == "streamed":
        assert run_streaming(route, stdin=None, limits=limits, trace_id=None) == 0
        return
    launch = run_captured if how == "forked" else spawn_captured
    result = launch(
        route, stdin=None, limits=replace(limits, fork_server=how == "forked"), trace_id=None
    )
    assert result.exit_code == 0, result.stderr


@pytest.mark.parametrize("how", ["forked", "spawned", "streamed"])
@pytest.mark.parametrize("where", WHERE)
def test_what_a_gateway_leaves_in_its_session_ends_with_the_call(
    repo: Repo, tmp_path: Path, how: str, where: str
) -> None:
    record = tmp_path / "grandchild.pid"
    _launch(repo, how, where, record, LIMITS)
    _ends(int(record.read_text()))


def _ends(pid: int) -> None:
    try:
        # The launcher returns once what it ends has ended: a short bound suffices.
        assert wait_until(lambda: not process_running(pid), timeout_s=2)
    finally:
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        wait_until(lambda: process_gone(pid) or not process_running(pid))


@pytest.mark.parametrize("how", ["forked", "spawned", "streamed"])
@pytest.mark.parametrize("where", [where for where in WHERE if where != "at-exit"])
def test_what_a_gateway_leaves_ends_when_the_call_times_out(
    repo: Repo, tmp_path: Path, how: str, where: str
) -> None:
    record = tmp_path / "grandchild.pid"
    route = make_route(repo, (where, str(record), "hang"))
    limits = ExecLimits(timeout_s=2.0)
    if how == "streamed":
        assert run_streaming(route, stdin=None, limits=limits, trace_id=None) == TIMEOUT_EXIT_CODE
    else:
        launch = run_captured if how == "forked" else spawn_captured
        limits = replace(limits, fork_server=how == "forked")
        assert launch(route, stdin=None, limits=limits, trace_id=None).timed_out
    assert record.with_suffix(".ready").exists()
    _ends(int(record.read_text()))


@pytest.mark.parametrize("how", ["forked", "spawned", "streamed"])
@pytest.mark.parametrize("where", [where for where in WHERE if where != "at-exit"])
def test_what_a_gateway_leaves_ends_when_the_call_is_cancelled(
    repo: Repo, tmp_path: Path, how: str, where: str
) -> None:
    record = tmp_path / "grandchild.pid"
    route = make_route(repo, (where, str(record), "hang"))
    trace_id = os.urandom(16).hex()
    codes: list[int | None] = []

    def call() -> None:
        if how == "streamed":
            codes.append(run_streaming(route, stdin=None, limits=LIMITS, trace_id=trace_id))
            return
        launch = run_captured if how == "forked" else spawn_captured
        limits = replace(LIMITS, fork_server=how == "forked")
        codes.append(launch(route, stdin=None, limits=limits, trace_id=trace_id).exit_code)

    thread = threading.Thread(target=call)
    thread.start()
    try:
        assert wait_until(lambda: written(record.with_suffix(".ready")) or not thread.is_alive())
        _cancel.cancel(trace_id)
        thread.join(15.0)
    finally:
        _cancel.forget(trace_id)
    assert codes in ([-signal.SIGKILL], [128 + signal.SIGKILL])
    _ends(int(record.read_text()))


@pytest.mark.parametrize("how", ["forked", "spawned", "streamed"])
@pytest.mark.parametrize("where", ["its-group", "own-group", "chain"])
def test_what_a_gateway_leaves_in_its_session_ends_when_it_is_killed(
    repo: Repo, tmp_path: Path, how: str, where: str
) -> None:
    # Killed by a signal, the runner sweeps nothing: the launcher ends its group and
    # session. (What left the session then is out of reach: docs/security.md.)
    record = tmp_path / "grandchild.pid"
    route = make_route(repo, (where, str(record), "killed"))
    code: int | None
    if how == "streamed":
        code = run_streaming(route, stdin=None, limits=LIMITS, trace_id=None)
    else:
        launch = run_captured if how == "forked" else spawn_captured
        limits = replace(LIMITS, fork_server=how == "forked")
        code = launch(route, stdin=None, limits=limits, trace_id=None).exit_code
    assert code in {-signal.SIGKILL, 128 + signal.SIGKILL}
    _ends(int(record.read_text()))
