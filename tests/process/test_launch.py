"""Launching the child: the argv, argument checks, streaming and bounded capture."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from boring_dispatch._value import replace
from boring_dispatch.errors import (
    InvalidRouteRequest,
    LaunchFailed,
    ResolutionFailed,
    RuntimeMisconfigured,
)
from boring_dispatch.observe.trace import new_trace_id
from boring_dispatch.process import launch as launch_module
from boring_dispatch.process.child.runner import OPTIONS, SEPARATOR, parse_spec
from boring_dispatch.process.launch import (
    MAX_ARGV_BYTES,
    MAX_ARGV_TOKENS,
    MAX_TOKEN_BYTES,
    RUNNER_MODULE,
    TIMEOUT_EXIT_CODE,
    check_argv,
    child_argv,
    run_captured,
    run_streaming,
)
from boring_dispatch.records import CompiledBinding, ExecLimits
from kits.gateways import (
    ECHO_GATEWAY,
    Repo,
    make_repo,
    make_route,
    process_gone,
    process_running,
    report,
    run_driver,
    wait_until,
)
from kits.strategies import argv_vectors

LIMITS = ExecLimits(timeout_s=30.0)
PREFIX = (sys.executable, "-I", "-B", "-X", "utf8", "-m", RUNNER_MODULE)


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    made = make_repo(tmp_path)
    made.write("gateway.py", ECHO_GATEWAY)
    return made


def _gateway(repo: Repo, body: str, *, imports: str = "import sys") -> None:
    """Replace the gateway with an ArgvInterface whose ``run`` body is ``body``."""
    indented = "\n".join("        " + line for line in body.strip().splitlines())
    repo.write(
        "gateway.py",
        f"{imports}\nfrom boring_dispatch.gateway import ArgvInterface\n"
        f"class Echo(ArgvInterface):\n    def run(self, argv):\n{indented}\n",
    )


# --------------------------------------------------------------------------- #
# check_argv


def test_ordinary_arguments_pass_the_check() -> None:
    check_argv(["a", "", "--x=1", "line\nbreak", "\u00e9", "x" * MAX_TOKEN_BYTES])


@pytest.mark.parametrize(
    "tokens",
    [
        ["ok", "nul\x00byte"],
        ["x" * (MAX_TOKEN_BYTES + 1)],
        ["\u00e9" * (MAX_TOKEN_BYTES // 2 + 1)],
        ["lone \ud800 surrogate"],
        ["x" * 60_000] * (MAX_ARGV_BYTES // 60_000 + 1),
        ["a"] * (MAX_ARGV_TOKENS + 1),
        [b"bytes"],
    ],
)
def test_arguments_that_cannot_reach_a_child_intact_are_refused(tokens: list[str]) -> None:
    with pytest.raises(ResolutionFailed) as caught:
        check_argv(tokens)
    assert caught.value.code == "dispatcher.resolution_failed"


# --------------------------------------------------------------------------- #
# child_argv


def test_the_child_argv_is_our_interpreter_isolated_then_options_then_the_command(
    repo: Repo,
) -> None:
    argv = child_argv(make_route(repo, ["--x", "y"]))
    assert argv[: len(PREFIX)] == PREFIX
    options = argv[len(PREFIX) : len(PREFIX) + len(OPTIONS)]
    assert [token.partition("=")[0] for token in options] == [f"--{name}" for name in OPTIONS]
    assert argv[len(PREFIX) + len(OPTIONS)] == SEPARATOR
    assert argv[len(PREFIX) + len(OPTIONS) + 1 :] == ("--x", "y")


@given(command=argv_vectors())
def test_no_command_token_is_ever_read_as_a_runner_option(
    tmp_path_factory: pytest.TempPathFactory, command: list[str]
) -> None:
    repo = make_repo(tmp_path_factory.mktemp("r"))
    argv = child_argv(make_route(repo, command))
    spec = parse_spec(argv[len(PREFIX) :])
    assert spec.command == tuple(command)
    assert spec.module_id == repo.module_id
    assert spec.entry == "Echo"


def test_a_nul_in_the_command_is_refused_before_launch(repo: Repo) -> None:
    with pytest.raises(ResolutionFailed) as caught:
        child_argv(make_route(repo, ["a\x00b"]))
    assert caught.value.target_module_id == repo.module_id
    assert caught.value.caller_module_id == "host-skill"


def test_a_binding_entry_that_differs_from_the_target_entry_is_refused(repo: Repo) -> None:
    route = make_route(repo)
    binding = CompiledBinding(command=(), pattern="", takes_stdin=False, entry="Other")
    mismatched = replace(route, binding=binding)
    with pytest.raises(ResolutionFailed):
        child_argv(mismatched)


# --------------------------------------------------------------------------- #
# run_captured


def test_captured_streams_and_the_exit_status_come_back_separately(repo: Repo) -> None:
    _gateway(repo, "print('out'); print('err', file=sys.stderr); return 5")
    result = run_captured(make_route(repo), stdin=None, limits=LIMITS, trace_id=None)
    assert (result.exit_code, result.stdout, result.stderr) == (5, "out\n", "err\n")
    assert not result.timed_out
    assert not result.stdout_truncated
    assert not result.stderr_truncated
    assert result.duration_ms > 0


def test_stdin_is_empty_unless_bytes_are_given(repo: Repo) -> None:
    route = make_route(repo)
    assert report(run_captured(route, stdin=None, limits=LIMITS, trace_id=None))["stdin"] == ""
    given_bytes = b"secret\x00\xff line\n"
    seen = report(run_captured(route, stdin=given_bytes, limits=LIMITS, trace_id=None))
    assert bytes.fromhex(str(seen["stdin"])) == given_bytes


def test_large_stdin_and_large_output_flow_at_once_without_deadlock(repo: Repo) -> None:
    _gateway(repo, "sys.stdout.buffer.write(sys.stdin.buffer.read()); return 0")
    data = os.urandom(1 << 20).hex().encode()  # 2 MiB, far above any pipe buffer
    limits = ExecLimits(timeout_s=60.0, max_output_bytes=4 << 20, max_stdin_bytes=4 << 20)
    result = run_captured(make_route(repo), stdin=data, limits=limits, trace_id=None)
    assert result.exit_code == 0
    assert result.stdout.encode() == data


def test_a_child_that_never_reads_stdin_does_not_block_the_call(repo: Repo) -> None:
    _gateway(repo, "return 0")
    limits = ExecLimits(timeout_s=30.0, max_stdin_bytes=4 << 20)
    result = run_captured(make_route(repo), stdin=b"x" * (2 << 20), limits=limits, trace_id=None)
    assert (result.exit_code, result.timed_out) == (0, False)


def test_stdin_larger_than_the_limit_is_refused_before_launch(repo: Repo) -> None:
    marker = repo.root / "launched"
    _gateway(repo, f"open({str(marker)!r}, 'w').close()")
    limits = ExecLimits(timeout_s=30.0, max_stdin_bytes=10)
    with pytest.raises(InvalidRouteRequest):
        run_captured(make_route(repo), stdin=b"x" * 11, limits=limits, trace_id=None)
    assert not marker.exists()


def test_invalid_utf8_output_is_decoded_with_replacement(repo: Repo) -> None:
    _gateway(repo, "sys.stdout.buffer.write(b'ok \\xff\\xfe end'); return 0")
    result = run_captured(make_route(repo), stdin=None, limits=LIMITS, trace_id=None)
    assert result.stdout == "ok \ufffd\ufffd end"


def test_a_timeout_ends_the_child_and_says_so(repo: Repo) -> None:
    _gateway(repo, "import time\nprint('started', flush=True)\ntime.sleep(120)")
    limits = ExecLimits(timeout_s=1.0)
    result = run_captured(make_route(repo), stdin=None, limits=limits, trace_id=None)
    assert result.timed_out
    assert result.exit_code is not None
    assert result.exit_code < 0
    assert result.stdout == "started\n"


def test_a_child_that_closes_its_streams_and_lingers_still_times_out(repo: Repo) -> None:
    _gateway(repo, "import os, time\nos.close(1)\nos.close(2)\ntime.sleep(120)")
    result = run_captured(
        make_route(repo), stdin=None, limits=ExecLimits(timeout_s=1.0), trace_id=None
    )
    assert result.timed_out
    assert result.exit_code is not None
    assert result.exit_code < 0


def test_a_stream_over_its_cap_is_truncated_at_the_cap_and_the_child_ended(repo: Repo) -> None:
    _gateway(repo, "while True:\n    sys.stdout.write('y\\n' * 4096)")
    limits = ExecLimits(timeout_s=30.0, max_output_bytes=100_000)
    result = run_captured(make_route(repo), stdin=None, limits=limits, trace_id=None)
    assert result.stdout_truncated
    assert not result.timed_out
    assert len(result.stdout) == 100_000
    assert result.exit_code is not None
    assert result.exit_code < 0


def test_output_exactly_at_the_cap_is_not_truncated(repo: Repo) -> None:
    _gateway(repo, "sys.stdout.write('z' * 1000); return 0")
    limits = ExecLimits(timeout_s=30.0, max_output_bytes=1000)
    result = run_captured(make_route(repo), stdin=None, limits=limits, trace_id=None)
    assert (result.exit_code, result.stdout_truncated, len(result.stdout)) == (0, False, 1000)


def test_an_os_failure_to_start_is_launch_failed(repo: Repo, tmp_path: Path) -> None:
    route = make_route(repo)
    gone = replace(route, cwd=tmp_path / "missing")
    with pytest.raises(LaunchFailed) as caught:
        run_captured(gone, stdin=None, limits=LIMITS, trace_id=None)
    assert caught.value.code == "dispatcher.launch_failed"
    assert caught.value.interface_id == route.target


@pytest.mark.parametrize(
    "limits",
    [
        ExecLimits(timeout_s=0),
        ExecLimits(timeout_s=-1),
        ExecLimits(timeout_s=float("inf")),
        ExecLimits(max_output_bytes=-1),
        ExecLimits(max_open_files=-5),
    ],
)
def test_limits_out_of_range_are_refused(repo: Repo, limits: ExecLimits) -> None:
    with pytest.raises(RuntimeMisconfigured):
        run_captured(make_route(repo), stdin=None, limits=limits, trace_id=None)


def test_the_process_span_records_a_timeout_status(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    logs = tmp_path / "logs"
    monkeypatch.setenv("ASSISTANT_LOGS", str(logs))
    _gateway(repo, "import time\ntime.sleep(120)")
    trace_id = new_trace_id()
    run_captured(make_route(repo), stdin=None, limits=ExecLimits(timeout_s=1.0), trace_id=trace_id)
    lines = [json.loads(x) for p in (logs / "dispatch").iterdir() for x in p.read_text().split()]
    statuses = {line["name"]: line["status"] for line in lines}
    assert statuses["dispatcher.process"] == "timed_out"


@settings(max_examples=20, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=argv_vectors())
def test_arguments_reach_the_child_byte_for_byte(repo: Repo, command: list[str]) -> None:
    seen = report(run_captured(make_route(repo, command), stdin=None, limits=LIMITS, trace_id=None))
    assert seen["argv"] == command
    assert seen["sys_argv"][1:] == command  # type: ignore[index]


# --------------------------------------------------------------------------- #
# run_streaming


@contextmanager
def _stdin_with(data: bytes) -> Iterator[None]:
    """Make our own fd 0 a pipe holding ``data`` for the duration."""
    saved = os.dup(0)
    read_end, write_end = os.pipe()
    os.write(write_end, data)
    os.close(write_end)
    os.dup2(read_end, 0)
    os.close(read_end)
    try:
        yield
    finally:
        os.dup2(saved, 0)
        os.close(saved)


def test_streaming_passes_the_exit_status_and_streams_through(
    repo: Repo, capfd: pytest.CaptureFixture[str]
) -> None:
    _gateway(repo, "print('to stdout'); print('to stderr', file=sys.stderr); return 3")
    assert run_streaming(make_route(repo), stdin=None, limits=LIMITS, trace_id=None) == 3
    out, err = capfd.readouterr()
    assert (out, err) == ("to stdout\n", "to stderr\n")


def test_streaming_never_hands_the_dispatchers_stdin_to_the_child(
    repo: Repo, capfd: pytest.CaptureFixture[str]
) -> None:
    _gateway(repo, "sys.stdout.write(repr(sys.stdin.buffer.read())); return 0")
    with _stdin_with(b"the dispatcher's own stdin"):
        code = run_streaming(make_route(repo), stdin=None, limits=LIMITS, trace_id=None)
    assert code == 0
    assert capfd.readouterr().out == "b''"


def test_streaming_feeds_given_stdin_and_closes_it(
    repo: Repo, capfd: pytest.CaptureFixture[str]
) -> None:
    _gateway(repo, "sys.stdout.write(repr(sys.stdin.buffer.read())); return 0")
    with _stdin_with(b"not this"):
        code = run_streaming(make_route(repo), stdin=b"given", limits=LIMITS, trace_id=None)
    assert code == 0
    assert capfd.readouterr().out == "b'given'"


def test_streaming_timeout_ends_the_group_and_returns_124(
    repo: Repo, capfd: pytest.CaptureFixture[str]
) -> None:
    _gateway(
        repo,
        "import subprocess, time\n"
        "child = subprocess.Popen(['sleep', '120'])\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(120)",
    )
    limits = ExecLimits(timeout_s=1.0)
    assert run_streaming(make_route(repo), stdin=None, limits=limits, trace_id=None) == (
        TIMEOUT_EXIT_CODE
    )
    grandchild = int(capfd.readouterr().out.split()[0])
    assert wait_until(lambda: process_gone(grandchild))


BACKGROUND_CHILD = (
    "import subprocess\n"
    "child = subprocess.Popen(['sleep', '30'])\n"
    "print(child.pid, flush=True)\n"
    "return 0"
)


def test_a_background_child_left_by_the_gateway_ends_with_it_on_both_paths(
    repo: Repo, capfd: pytest.CaptureFixture[str]
) -> None:
    _gateway(repo, BACKGROUND_CHILD)
    limits = ExecLimits(timeout_s=30.0)
    captured = run_captured(make_route(repo), stdin=None, limits=limits, trace_id=None)
    streamed = run_streaming(make_route(repo), stdin=None, limits=limits, trace_id=None)
    streamed_out = capfd.readouterr().out
    # Same exit status, and the captured run is not a timeout (it used to wait the 30 s out).
    assert (captured.exit_code, streamed) == (0, 0)
    assert not captured.timed_out
    assert not captured.stdout_truncated
    assert not captured.stderr_truncated
    sleepers = [int(captured.stdout.split()[0]), int(streamed_out.split()[0])]
    assert wait_until(lambda: not any(process_running(pid) for pid in sleepers), timeout_s=10)


def test_output_written_just_before_exit_is_kept_when_a_background_child_holds_the_pipe(
    repo: Repo,
) -> None:
    _gateway(
        repo,
        "import subprocess\n"
        "child = subprocess.Popen(['sleep', '30'])\n"
        "sys.stdout.write('x' * 200_000)\n"
        "return 5",
    )
    result = run_captured(make_route(repo), stdin=None, limits=LIMITS, trace_id=None)
    assert result.exit_code == 5
    assert result.stdout == "x" * 200_000
    assert not result.timed_out


def test_streaming_reports_death_by_signal_as_128_plus_the_signal(repo: Repo) -> None:
    _gateway(repo, "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)")
    code = run_streaming(make_route(repo), stdin=None, limits=LIMITS, trace_id=None)
    assert code == 128 + signal.SIGKILL


def test_streaming_output_appears_before_the_child_exits(repo: Repo, tmp_path: Path) -> None:
    go = tmp_path / "go"
    _gateway(
        repo,
        "import os, time\n"
        "print('ready', file=sys.stderr, flush=True)\n"
        "deadline = time.monotonic() + 30\n"
        f"while not os.path.exists({str(go)!r}) and time.monotonic() < deadline:\n"
        "    time.sleep(0.01)\n"
        f"return 0 if os.path.exists({str(go)!r}) else 9",
    )
    code = """
        from boring_dispatch.process.launch import run_streaming
        from boring_dispatch.records import ExecLimits
        limits = ExecLimits(timeout_s=60)
        raise SystemExit(run_streaming(ROUTE, stdin=None, limits=limits, trace_id=None))
    """
    driver = run_driver(make_route(repo), code, stderr=subprocess.PIPE)
    try:
        assert driver.stderr is not None
        assert driver.stderr.readline() == b"ready\n"  # the child is still waiting for `go`
        go.touch()
        assert driver.wait(timeout=60) == 0
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait(timeout=10)
        if driver.stderr is not None:
            driver.stderr.close()


def test_the_exit_wait_returns_the_status_of_a_child_that_has_exited() -> None:
    child = subprocess.Popen([sys.executable, "-I", "-c", "raise SystemExit(3)"])
    assert launch_module._wait(child, 60.0) == 3
    assert child.returncode == 3


def test_the_exit_wait_times_out_on_a_running_child_and_leaves_it_unreaped() -> None:
    child = subprocess.Popen([sys.executable, "-I", "-c", "import time; time.sleep(60)"])
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            launch_module._wait(child, 0.2)
        assert child.returncode is None  # not reaped: its pid still names its group
    finally:
        child.kill()
        child.wait(timeout=10)


def test_the_exit_wait_accepts_a_timeout_longer_than_poll_can_take_at_once() -> None:
    child = subprocess.Popen([sys.executable, "-I", "-c", "raise SystemExit(0)"])
    assert launch_module._wait(child, 1e9) == 0
