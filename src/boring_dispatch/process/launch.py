"""Launch a gateway in a confined child process: argv, streaming (CLI) and capture (MCP, nested).

Every launch is ``sys.executable -I -B -X utf8 -m boring_dispatch.process.child.runner``
with the runner's fixed options, ``--`` and the compiled command; never a
shell, ``close_fds=True``, a new session (so a new process group whose id is
the child's pid), no ``preexec_fn``, cwd = the terminal module root, the
environment from :func:`~boring_dispatch.process.env.child_environment`, and
stdin either the given bytes (then closed) or ``/dev/null``: the child never
inherits the dispatcher's stdin.

On timeout (and, when capturing, when a stream exceeds its cap) the whole
process group is ended: ``SIGTERM``, a short grace, ``SIGKILL``, then a
bounded wait until ``killpg(pgid, 0)`` reports no live member. The leader is
not reaped before the group is signalled, so its pid (the group id) cannot be
reused by an unrelated process in between. Then every process left in the
child's session is killed too: a launch made directly from inside a gateway
process starts its own process group (so that its own timeout can end it)
but stays in the outer session. When the leader exits before the timeout,
whatever it left running in its group is ended as well, on both paths, and
(captured) the pipes are drained for a short grace: that is not a timeout.
A process that starts its own session (``setsid``) escapes all of this; the
session is a tidy-up mechanism, not a container.

Before every launch the dispatcher makes itself non-dumpable, so that a
child of its uid cannot read its environment or open its descriptors through
``/proc`` (:mod:`~boring_dispatch.process._reach`); with
``ExecLimits.run_as_uid``/``run_as_gid`` the child runs as that user and group
with no supplementary groups (the switch happens in the forked child before
``exec``, after ``chdir``).

Every child also gets one end of a :class:`~boring_dispatch.process._broker.Broker`
socket (``pass_fds``, runner option ``--broker-fd``): the gateway's nested
calls (``self.dispatch``) are decided and launched here, in the parent, for
the lifetime of the child.
"""

from __future__ import annotations

import math
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import IO, Final

from boring_dispatch.errors import (
    InvalidRouteRequest,
    LaunchFailed,
    RuntimeMisconfigured,
)
from boring_dispatch.observe.trace import span
from boring_dispatch.process import _fork
from boring_dispatch.process._admission import admit, limits_problem
from boring_dispatch.process._argv import (
    MAX_ARGV_BYTES,
    MAX_ARGV_TOKENS,
    MAX_TOKEN_BYTES,
    check_argv,
    child_argv,
)
from boring_dispatch.process._broker import Broker, NestedCall, NestedInvoke
from boring_dispatch.process._cancel import finished, spawn_unless_cancelled
from boring_dispatch.process._command import FORKED_BROKER_FD, RUNNER_MODULE
from boring_dispatch.process._groups import end_group, end_leftovers
from boring_dispatch.process._pump import Pump, drain, pump
from boring_dispatch.process._reach import ReachError, protect_dispatcher
from boring_dispatch.process.env import child_environment
from boring_dispatch.records import ExecLimits, ExecutionResult, Route

__all__ = [
    "MAX_ARGV_BYTES",
    "MAX_ARGV_TOKENS",
    "MAX_TOKEN_BYTES",
    "RUNNER_MODULE",
    "TIMEOUT_EXIT_CODE",
    "NestedCall",
    "NestedInvoke",
    "check_argv",
    "child_argv",
    "run_captured",
    "run_streaming",
]

#: What :func:`run_streaming` returns when the timeout ended the child (as coreutils ``timeout``).
TIMEOUT_EXIT_CODE: Final = 124
_FEEDER_JOIN_S: Final = 5.0
_POLL_STEP_MS: Final = 86_400_000
#: How long to read what is left in the pipes once the leader's leftovers are ended.
_DRAIN_GRACE_S: Final = 2.0


def _check_limits(route: Route, limits: ExecLimits, stdin: bytes | None) -> None:
    problem = limits_problem(limits)
    if problem is not None:
        raise RuntimeMisconfigured(
            f"execution limits are out of range: {problem}",
            caller_module_id=route.caller_module_id,
            target_module_id=route.target_module_id,
        )
    if stdin is not None and len(stdin) > limits.max_stdin_bytes:
        raise InvalidRouteRequest(
            f"stdin is larger than {limits.max_stdin_bytes} bytes",
            caller_module_id=route.caller_module_id,
            target_module_id=route.target_module_id,
        )


def _in_gateway() -> bool:
    """Whether this process is itself a gateway (a runner bound its runtime context)."""
    from boring_dispatch.process.context import runtime_context

    return runtime_context() is not None


def _spawn(  # noqa: PLR0913 - keyword-only flags; every input is used once
    route: Route,
    limits: ExecLimits,
    trace_id: str | None,
    broker: Broker,
    *,
    stdin: bool,
    capture: bool,
) -> subprocess.Popen[bytes]:
    out = subprocess.PIPE if capture else None
    nested = _in_gateway()
    run_as = limits.run_as_uid is not None
    # The fork server: captured top-level launches that ask for it, never another user.
    forked = capture and not nested and not run_as and limits.fork_server and _fork.AVAILABLE
    argv = child_argv(route, limits, broker_fd=FORKED_BROKER_FD if forked else broker.child_fd)

    def start() -> subprocess.Popen[bytes]:
        # Before every launch: the child must not reach this process through /proc.
        protect_dispatcher()
        if forked:
            env = child_environment(trace_id=trace_id)
            return _fork.start(argv, env=env, cwd=route.cwd, broker_fd=broker.child_fd, stdin=stdin)
        return subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            cwd=route.cwd,
            env=child_environment(trace_id=trace_id),
            close_fds=True,
            pass_fds=(broker.child_fd,),
            # A top-level call gets a new session; a nested one a new group in the outer session.
            start_new_session=not nested,
            process_group=0 if nested else None,
            # Another uid (and only its own gid, no supplementary groups), when configured.
            user=limits.run_as_uid,
            group=limits.run_as_gid,
            extra_groups=() if run_as else None,
            shell=False,
        )

    try:
        proc = spawn_unless_cancelled(trace_id, start)
    except (OSError, ValueError, ReachError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else "error"
        if isinstance(error, ReachError):
            reason = str(error)
        raise LaunchFailed(
            f"cannot start the gateway process: {reason}",
            caller_module_id=route.caller_module_id,
            target_module_id=route.target_module_id,
            interface_id=route.target,
        ) from error
    if proc is None:
        raise LaunchFailed(
            "the call was cancelled before its gateway started",
            caller_module_id=route.caller_module_id,
            target_module_id=route.target_module_id,
            interface_id=route.target,
        )
    broker.start()
    return proc


@contextmanager
def _closing(broker: Broker) -> Iterator[None]:
    try:
        yield
    finally:
        broker.close()


def _span_ids(route: Route) -> dict[str, str]:
    return {
        "interface_id": route.target,
        "module_id": route.target_module_id,
        "caller_module_id": route.caller_module_id,
    }


def _status(code: int | None, *, timed_out: bool = False, truncated: bool = False) -> str:
    if timed_out:
        return "timed_out"
    if truncated:
        return "truncated"
    if code is None or code < 0:
        return "signal"
    return "ok" if code == 0 else "exit_nonzero"


def run_streaming(
    route: Route,
    *,
    stdin: bytes | None,
    limits: ExecLimits,
    trace_id: str | None,
    nested: NestedInvoke | None = None,
) -> int:
    """Run the gateway with its stdout and stderr passed straight through (the CLI).

    Returns:
        The child's exit status; ``128 + N`` when signal ``N`` ended it; and
        :data:`TIMEOUT_EXIT_CODE` (124) when the timeout ended the group.

    Raises:
        ResolutionFailed: :func:`check_argv` refused the child command.
        InvalidRouteRequest: ``stdin`` is larger than ``limits.max_stdin_bytes``.
        LaunchFailed: the OS could not start the child.
    """
    _check_limits(route, limits, stdin)
    child_argv(route, limits)  # refuse a bad command before anything is opened
    chain = admit(route, limits)
    broker = Broker(nested, limits, time.monotonic() + limits.timeout_s, chain)
    with span("dispatcher.process", trace_id, **_span_ids(route)) as timer, _closing(broker):
        proc = _spawn(route, limits, trace_id, broker, stdin=stdin is not None, capture=False)
        feeder = _feed_in_background(proc.stdin, stdin)
        try:
            code = _wait(proc, limits.timeout_s)
        except subprocess.TimeoutExpired:
            end_group(proc)
            timer.status = "timed_out"
            # The exit status alone cannot tell a timeout from a gateway that exits 124.
            sys.stderr.write(
                f"error: the gateway timed out after {limits.timeout_s:g} s;"
                " its process group was killed\n"
            )
            return TIMEOUT_EXIT_CODE
        else:
            end_leftovers(proc)
        finally:
            if proc.returncode is None:
                end_group(proc)  # an exception (KeyboardInterrupt) left the wait
            finished(trace_id, proc)
            if feeder is not None:
                feeder.join(_FEEDER_JOIN_S)
        timer.status = _status(code)
        return code if code >= 0 else 128 - code


def _capture(
    proc: subprocess.Popen[bytes], stdin: bytes | None, limits: ExecLimits, deadline: float
) -> Pump:
    """Drain, wait and end the group; the leader's exit is never mistaken for a timeout."""
    cap = limits.max_output_bytes
    exit_fd = _pidfd(proc)
    try:
        captured = pump(proc, stdin, cap, deadline, exit_fd=exit_fd)
    finally:
        if exit_fd is not None:
            os.close(exit_fd)
    if captured.timed_out or captured.stdout_truncated or captured.stderr_truncated:
        end_group(proc)
    elif captured.leader_exited:
        # Something the gateway left running holds a pipe: end it, then take what is left.
        end_group(proc)
        drain(proc, captured, cap, time.monotonic() + _DRAIN_GRACE_S)
    else:
        try:
            _wait(proc, deadline - time.monotonic())
        except subprocess.TimeoutExpired:
            captured.timed_out = True
            end_group(proc)
        else:
            end_leftovers(proc)
    return captured


def _pidfd(proc: subprocess.Popen[bytes]) -> int | None:
    try:
        return os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # not Linux >= 5.3: EOF and the timeout only
        return None


def _wait(proc: subprocess.Popen[bytes], timeout_s: float) -> int:
    """``proc.wait(timeout_s)``, woken by the child's exit instead of by polling.

    ``Popen.wait`` with a timeout sleeps in growing steps of up to 50 ms, so a
    short gateway is reaped up to 50 ms late. A pidfd becomes readable when the
    child exits (before it is reaped, so the group-kill rule above still holds).

    Raises:
        subprocess.TimeoutExpired: the child is still running after ``timeout_s``.
    """
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # not Linux >= 5.3: the polling wait
        return proc.wait(timeout=max(0.0, timeout_s))
    deadline = time.monotonic() + timeout_s
    remaining = timeout_s
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        # poll() takes a C int of milliseconds: wait in steps of at most a day.
        while not poller.poll(min(_POLL_STEP_MS, max(0, math.ceil(remaining * 1000)))):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise subprocess.TimeoutExpired(proc.args, timeout_s)
    finally:
        os.close(pidfd)
    return proc.wait()


def _feed_in_background(pipe: IO[bytes] | None, data: bytes | None) -> threading.Thread | None:
    if pipe is None:
        return None

    def feed() -> None:
        with suppress(OSError), pipe:
            pipe.write(data or b"")

    thread = threading.Thread(target=feed, name="gateway-stdin", daemon=True)
    thread.start()
    return thread


def run_captured(
    route: Route,
    *,
    stdin: bytes | None,
    limits: ExecLimits,
    trace_id: str | None,
    nested: NestedInvoke | None = None,
) -> ExecutionResult:
    """Run the gateway capturing both streams (MCP, programmatic and nested calls).

    ``nested`` decides the gateway's own nested calls (see
    :class:`~boring_dispatch.process._broker.Broker`); it is supplied by the
    table. Without it, every nested call the gateway makes is refused.

    Both pipes are drained concurrently (one selector loop, which also feeds
    stdin), each is capped at ``limits.max_output_bytes``; exceeding a cap or
    the timeout ends the whole process group. Output is decoded as UTF-8 with
    replacement.

    Raises:
        ResolutionFailed: :func:`check_argv` refused the child command.
        InvalidRouteRequest: ``stdin`` is larger than ``limits.max_stdin_bytes``.
        LaunchFailed: the OS could not start the child.
    """
    _check_limits(route, limits, stdin)
    child_argv(route, limits)  # refuse a bad command before anything is opened
    chain = admit(route, limits)
    began = time.monotonic()
    broker = Broker(nested, limits, began + limits.timeout_s, chain)
    with span("dispatcher.process", trace_id, **_span_ids(route)) as timer, _closing(broker):
        proc = _spawn(route, limits, trace_id, broker, stdin=stdin is not None, capture=True)
        try:
            captured = _capture(proc, stdin, limits, began + limits.timeout_s)
        finally:
            if proc.returncode is None:
                end_group(proc)
            finished(trace_id, proc)
            if isinstance(proc, _fork.Forked):
                proc.release()  # the server may reap the leader now
            for pipe in (proc.stdin, proc.stdout, proc.stderr):
                if pipe is not None:
                    with suppress(OSError):
                        pipe.close()
        truncated = captured.stdout_truncated or captured.stderr_truncated
        timer.status = _status(proc.returncode, timed_out=captured.timed_out, truncated=truncated)
        return ExecutionResult(
            exit_code=proc.returncode,
            stdout=captured.stdout.decode("utf-8", "replace"),
            stderr=captured.stderr.decode("utf-8", "replace"),
            stdout_truncated=captured.stdout_truncated,
            stderr_truncated=captured.stderr_truncated,
            timed_out=captured.timed_out,
            duration_ms=(time.monotonic() - began) * 1000.0,
        )
