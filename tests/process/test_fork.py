"""The fork server as the launcher uses it: what a forked gateway inherits, and what it must not.

Every test launches real gateways through :func:`run_captured` with the fork
server enabled, and most compare against the same gateway spawned the usual
way: what a child sees must not depend on how it was started, except for its
parent (the server) and the server's hash seed (see docs/_fragments/perf-fork.md).
"""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest

from boring_dispatch._value import replace
from boring_dispatch.errors import LaunchFailed
from boring_dispatch.process import _cancel, _fork
from boring_dispatch.process.launch import run_captured, run_streaming
from boring_dispatch.records import ExecLimits, ExecutionResult, Route
from kits.gateways import (
    Repo,
    make_repo,
    make_route,
    process_gone,
    process_running,
    wait_until,
    written,
)

LIMITS = ExecLimits(timeout_s=30.0, fork_server=True)
#: The same call spawned (a fork-mode session forces fork_server on run_captured: not here).
SPAWN = replace(LIMITS, fork_server=False)
spawn_captured = getattr(run_captured, "__wrapped__", run_captured)

#: Reports what the process looks like from the inside (no gateway-specific state).
PROBE = """
import ctypes, json, os, random, resource, signal, sys, threading
from boring_dispatch.gateway import ArgvInterface

def _fds():
    found = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue  # the listing's own descriptor, closed by now
        found[name] = target.split(":")[0] if ":" in target else target
    return found

class Echo(ArgvInterface):
    def run(self, argv):
        libc = ctypes.CDLL(None)
        limits = {name: resource.getrlimit(getattr(resource, name))
                  for name in ("RLIMIT_CORE", "RLIMIT_CPU", "RLIMIT_NOFILE", "RLIMIT_FSIZE",
                               "RLIMIT_AS")}
        print(json.dumps({
            "pid": os.getpid(), "ppid": os.getppid(), "sid": os.getsid(0),
            "pgid": os.getpgid(0), "uid": os.getuid(), "gid": os.getgid(),
            "groups": os.getgroups(), "cwd": os.getcwd(), "env": dict(os.environ),
            "fds": _fds(), "tasks": len(os.listdir("/proc/self/task")),
            "threads": threading.active_count(), "dumpable": libc.prctl(3, 0, 0, 0, 0),
            "rlimits": limits, "random": random.getrandbits(64), "path": sys.path,
            "isolated": sys.flags.isolated, "bytecode": sys.dont_write_bytecode,
            "utf8": sys.flags.utf8_mode, "umask": os.umask(0o022),
            "stdin": sys.stdin.read(), "argv": argv, "sys_argv": sys.argv,
            "mask": sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])),
            "sigint": str(signal.getsignal(signal.SIGINT)),
            "sigpipe": str(signal.getsignal(signal.SIGPIPE)),
            "modules": sorted(m for m in sys.modules if m.startswith("_officina_module_")),
            "encoding": [sys.stdout.encoding, sys.stdout.errors, sys.stdin.encoding],
        }))
        return 0
"""


@pytest.fixture
def forking() -> Iterator[None]:
    """The launches of the test ask for the fork server (``LIMITS``); it is stopped after."""
    try:
        yield
    finally:
        _fork.stop()


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    made = make_repo(tmp_path)
    made.write("gateway.py", PROBE)
    return made


def _probe(
    route: Route, *, limits: ExecLimits = LIMITS, stdin: bytes | None = None, fork: bool = True
) -> dict[str, Any]:
    launch = run_captured if fork else spawn_captured
    result = launch(route, stdin=stdin, limits=replace(limits, fork_server=fork), trace_id=None)
    assert result.exit_code == 0, result.stderr
    seen = json.loads(result.stdout)
    assert isinstance(seen, dict)
    return seen


def _spawned(route: Route, **kwargs: object) -> dict[str, Any]:
    return _probe(route, fork=False, **kwargs)  # type: ignore[arg-type]


SAME = (
    "uid", "gid", "groups", "cwd", "env", "rlimits", "path", "isolated", "bytecode", "utf8",
    "umask", "stdin", "argv", "sys_argv", "mask", "sigint", "sigpipe", "modules", "encoding",
    "tasks", "threads", "dumpable",
)  # fmt: skip


@pytest.mark.parametrize(
    ("limits", "stdin", "command"),
    [
        (LIMITS, None, ()),
        (ExecLimits(timeout_s=20.0, max_open_files=64), b"some input\n", ("a", "--b=c")),
        (ExecLimits(timeout_s=9.5, max_cpu_seconds=7, max_file_bytes=1 << 20), b"", ("x",)),
        (ExecLimits(timeout_s=30.0, max_memory_bytes=1 << 31, max_open_files=32), b"\0" * 999, ()),
    ],
)
def test_a_forked_gateway_sees_what_a_spawned_one_sees(
    forking: None, repo: Repo, limits: ExecLimits, stdin: bytes | None, command: tuple[str, ...]
) -> None:
    route = make_route(repo, command, stdin=stdin is not None)
    forked = _probe(route, limits=limits, stdin=stdin)
    spawned = _spawned(route, limits=limits, stdin=stdin)
    for key in SAME:
        assert forked[key] == spawned[key], key
    # Its own session and group; only its parent differs: the fork server, not us.
    assert forked["sid"] == forked["pgid"] == forked["pid"]
    assert forked["ppid"] == _fork.server_pid() != os.getpid()
    assert spawned["ppid"] == os.getpid()


def test_a_forked_gateway_holds_only_its_own_descriptors(forking: None, repo: Repo) -> None:
    route = make_route(repo, stdin=True)
    # An inheritable descriptor of ours, and the other calls' descriptors of the server.
    leaked = os.open(os.devnull, os.O_RDONLY)
    os.set_inheritable(leaked, True)  # noqa: FBT003
    try:
        seen = _probe(route, stdin=b"x")
    finally:
        os.close(leaked)
    assert set(seen["fds"]) == {"0", "1", "2", "4"}
    assert seen["fds"]["0"] == seen["fds"]["1"] == seen["fds"]["2"] == "pipe"
    assert seen["fds"]["4"] == "socket"  # the broker, as --broker-fd says


def test_a_forked_gateway_is_single_threaded_and_dumpable_as_after_exec(
    forking: None, repo: Repo
) -> None:
    seen = _probe(make_route(repo))
    assert seen["tasks"] == 1
    assert seen["threads"] == 1
    assert seen["dumpable"] == 1


def test_random_state_differs_between_forked_children(forking: None, repo: Repo) -> None:
    route = make_route(repo)
    values = [_probe(route)["random"] for _ in range(6)]
    assert len(set(values)) == len(values)


CANARY_SCAN = """
import os, sys
from boring_dispatch.gateway import ArgvInterface

class Echo(ArgvInterface):
    def run(self, argv):
        # The needles arrive reversed, so only the reversed text is in memory from argv.
        needles = [bytearray(word[::-1].encode()) for word in argv]
        # The last needle is the control: one more copy of it, elsewhere, must be found.
        keep = bytes(needles[-1]) + b""
        buffer = bytearray(1 << 20)
        import ctypes
        ranges = [(ctypes.addressof((ctypes.c_char * len(n)).from_buffer(n)), len(n))
                  for n in needles]
        start_buf = ctypes.addressof((ctypes.c_char * len(buffer)).from_buffer(buffer))
        found = []
        with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb", 0) as mem:
            regions = [line.split() for line in maps.read().splitlines()]
            for fields in regions:
                low, high = (int(x, 16) for x in fields[0].split("-"))
                if not fields[1].startswith("r") or (len(fields) > 5 and fields[5] == "[vvar]"):
                    continue
                offset = low
                while offset < high:
                    size = min(len(buffer), high - offset)
                    try:
                        mem.seek(offset)
                        got = mem.readinto(memoryview(buffer)[:size])
                    except OSError:
                        break
                    for needle, (address, length) in zip(needles, ranges):
                        at = buffer.find(needle, 0, got or 0)
                        while at >= 0:
                            hit = offset + at
                            inside_scan = start_buf <= hit < start_buf + len(buffer)
                            if hit != address and not inside_scan:
                                found.append(needle.decode())
                            at = buffer.find(needle, at + 1, got or 0)
                    offset += size
        print(sorted(set(found)))
        return 0 if keep else 1
"""


def test_no_memory_of_the_dispatcher_or_of_an_earlier_call_reaches_a_forked_child(
    forking: None, repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "dispatcher-secret-" + os.urandom(8).hex()
    earlier = "earlier-argument-" + os.urandom(8).hex()
    earlier_stdin = "earlier-stdin-" + os.urandom(8).hex()
    monkeypatch.setenv("SOME_API_TOKEN", secret)  # in our memory before the server starts
    _fork.stop()
    try:
        repo.write("gateway.py", PROBE)
        route = make_route(repo, (earlier,), stdin=True)
        _probe(route, stdin=earlier_stdin.encode())  # the server forked for this call
        repo.write("gateway.py", CANARY_SCAN)
        # The scan itself must work: a copy the gateway makes of the last needle is found.
        control = "control-" + os.urandom(8).hex()
        words = [w[::-1] for w in (secret, earlier, earlier_stdin, control)]
        result = run_captured(make_route(repo, words), stdin=None, limits=LIMITS, trace_id=None)
    finally:
        _fork.stop()
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout.replace("'", '"')) == [control]


def test_a_forked_gateway_cannot_read_the_fork_server_through_proc(
    forking: None, repo: Repo
) -> None:
    repo.write(
        "gateway.py",
        """
        import json, os
        from boring_dispatch.gateway import ArgvInterface
        class Echo(ArgvInterface):
            def run(self, argv):
                seen = {}
                for name in ("environ", "mem", "fd/0", "cmdline"):
                    try:
                        with open(f"/proc/{os.getppid()}/{name}", "rb") as handle:
                            handle.read(1)
                        seen[name] = "read"
                    except OSError as error:
                        seen[name] = type(error).__name__
                print(json.dumps(seen))
        """,
    )
    result = run_captured(make_route(repo), stdin=None, limits=LIMITS, trace_id=None)
    seen = json.loads(result.stdout)
    # Its environment, memory and descriptors (the other calls' pipes while it holds them).
    assert seen["environ"] == seen["mem"] == seen["fd/0"] == "PermissionError"


def test_run_as_and_the_cli_never_use_the_fork_server(
    forking: None, repo: Repo, capfd: pytest.CaptureFixture[str]
) -> None:
    route = make_route(repo)
    same_user = ExecLimits(timeout_s=30.0, run_as_uid=os.getuid(), run_as_gid=os.getgid())
    assert _probe(route, limits=same_user)["ppid"] == os.getpid()
    assert run_streaming(route, stdin=None, limits=LIMITS, trace_id=None) == 0
    assert json.loads(capfd.readouterr().out)["ppid"] == os.getpid()


SLEEPER = """
import os, time
from boring_dispatch.gateway import ArgvInterface
class Echo(ArgvInterface):
    def run(self, argv):
        print(os.getpid(), flush=True)
        time.sleep(60)
"""


def _in_thread(
    route: Route, limits: ExecLimits, trace_id: str | None
) -> tuple[list[ExecutionResult], threading.Thread]:
    results: list[ExecutionResult] = []

    def call() -> None:
        forked = replace(limits, fork_server=True)
        results.append(run_captured(route, stdin=None, limits=forked, trace_id=trace_id))

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    return results, thread


def _running_children(pid: int | None) -> list[int]:
    if pid is None:
        return []
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(x) for x in path.read_text().split()] if path.exists() else []


def test_a_killed_fork_server_ends_its_running_call_and_is_started_again(
    forking: None, repo: Repo, tmp_path: Path
) -> None:
    # The server is killed once the gateway runs (its pid file written), not while it forks:
    # a server killed before it reports the child's pid fails the launch (LaunchFailed).
    marker = tmp_path / "gateway.pid"
    repo.write(
        "gateway.py",
        SLEEPER.replace(
            "print(os.getpid(), flush=True)",
            f"open({str(marker)!r}, 'w').write(str(os.getpid()))",
        ),
    )
    route = make_route(repo)
    results, thread = _in_thread(route, ExecLimits(timeout_s=30.0), None)
    assert wait_until(lambda: written(marker))
    server = _fork.server_pid()
    assert server is not None
    gateway = int(marker.read_text())
    assert gateway in _running_children(server)
    os.kill(server, signal.SIGKILL)
    thread.join(15.0)
    assert results, "the call must end, not hang"
    assert results[0].exit_code is not None
    assert results[0].exit_code < 0
    assert wait_until(lambda: not process_running(gateway))  # ended (a zombie of init counts)
    # The next call starts a new server transparently.
    repo.write("gateway.py", PROBE)
    assert _probe(route)["ppid"] not in {server, os.getpid()}


def test_a_fork_server_that_does_not_answer_fails_the_launch_closed(
    forking: None, repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    route = make_route(repo)
    _probe(route)
    server = _fork.server_pid()
    assert server is not None
    monkeypatch.setattr(_fork, "START_TIMEOUT_S", 0.5)
    os.kill(server, signal.SIGSTOP)
    try:
        with pytest.raises(LaunchFailed):
            run_captured(route, stdin=None, limits=LIMITS, trace_id=None)
    finally:
        with suppress(ProcessLookupError):
            os.kill(server, signal.SIGCONT)
    assert wait_until(lambda: process_gone(server))  # not trusted again
    assert _probe(route)["ppid"] != server


def test_a_cancel_by_trace_id_ends_a_forked_gateway(forking: None, repo: Repo) -> None:
    repo.write("gateway.py", SLEEPER)
    trace_id = os.urandom(16).hex()
    results, thread = _in_thread(make_route(repo), ExecLimits(timeout_s=30.0), trace_id)
    assert wait_until(lambda: bool(_running_children(_fork.server_pid())))
    gateway = _running_children(_fork.server_pid())[0]
    try:
        _cancel.cancel(trace_id)  # registered already, or refused at its registration
        thread.join(15.0)
    finally:
        _cancel.forget(trace_id)
    assert results
    assert results[0].exit_code == -signal.SIGKILL
    assert wait_until(lambda: not process_running(gateway))  # ended (a zombie of init counts)


def test_a_missing_working_directory_fails_the_launch_as_a_spawn_does(
    forking: None, repo: Repo, tmp_path: Path
) -> None:
    route = make_route(repo)
    gone = replace(route, cwd=tmp_path / "missing")
    with pytest.raises(LaunchFailed):
        run_captured(gone, stdin=None, limits=LIMITS, trace_id=None)


MODULES = """
import json, sys
from boring_dispatch.gateway import ArgvInterface
class Echo(ArgvInterface):
    def run(self, argv):
        print(json.dumps(sorted(sys.modules)))
"""


def test_a_forked_gateway_loads_what_a_spawned_one_does_plus_the_servers_own(
    forking: None, repo: Repo
) -> None:
    repo.write("gateway.py", MODULES)
    route = make_route(repo)
    forked = set(json.loads(run_captured(route, stdin=None, limits=LIMITS, trace_id=None).stdout))
    spawned = set(json.loads(spawn_captured(route, stdin=None, limits=SPAWN, trace_id=None).stdout))
    ours = {m for m in forked - spawned if m.startswith("boring_dispatch")}
    # The server's own: the forked set-up and exit (its inertness and type-layout checks),
    # the runner by its name (not __main__), the spec wire, the span writer's file appender.
    assert ours == {
        "boring_dispatch._files",
        "boring_dispatch.process.child._exit",
        "boring_dispatch.process.child._forked",
        "boring_dispatch.process.child._inertness",
        "boring_dispatch.process.child._typelayout",
        "boring_dispatch.process.child.runner",
        "boring_dispatch.process.wire",
    }
    # The server's stdlib (its sockets and poll) and what parsed gateways need anyway.
    assert {m.split(".")[0] for m in forked - spawned - ours} <= {
        "argparse", "fcntl", "gettext", "locale", "_locale", "io", "copyreg", "weakref",
        "socket", "_socket", "select", "selectors", "array", "gc",
    }  # fmt: skip
    heavy = {"pydantic", "mcp", "yaml", "opentelemetry", "anyio", "subprocess", "threading"}
    assert not {m.split(".")[0] for m in forked} & heavy
    assert not {
        m
        for m in forked
        if m.startswith(("boring_dispatch.repository", "boring_dispatch.registry"))
    }


TIMEZONE = """
import json, os, time
from boring_dispatch.gateway import ArgvInterface
class Echo(ArgvInterface):
    def run(self, argv):
        print(json.dumps([os.environ.get("TZ"), list(time.tzname), time.timezone]))
"""


@pytest.mark.parametrize("zone", ["UTC", "Europe/Rome", "America/New_York", "Asia/Tokyo"])
def test_a_time_zone_set_after_the_server_started_reaches_a_forked_gateway(
    forking: None, repo: Repo, monkeypatch: pytest.MonkeyPatch, zone: str
) -> None:
    repo.write("gateway.py", TIMEZONE)
    route = make_route(repo)
    run_captured(route, stdin=None, limits=LIMITS, trace_id=None)  # the server runs now
    monkeypatch.setenv("TZ", zone)
    forked = json.loads(run_captured(route, stdin=None, limits=LIMITS, trace_id=None).stdout)
    spawned = json.loads(spawn_captured(route, stdin=None, limits=SPAWN, trace_id=None).stdout)
    assert forked == spawned
    assert forked[0] == zone


LOCALE = """
import json, locale, os, sys
from boring_dispatch.gateway import ArgvInterface
class Echo(ArgvInterface):
    def run(self, argv):
        print(json.dumps([dict(os.environ), locale.setlocale(locale.LC_CTYPE),
                          sys.getfilesystemencoding(), sys.stdout.encoding]))
"""


@pytest.mark.parametrize(
    "variables",
    [
        {"LANG": "C"},
        {"LANG": "POSIX"},
        {"LC_ALL": "C"},
        {"LC_ALL": "C.UTF-8"},
        {"LANG": "de_DE.UTF-8"},  # not installed here: the legacy locale, coerced
        {"LC_CTYPE": "xx_YY.UTF-8", "LANG": "C.UTF-8"},
        {"LANG": "C.UTF-8"},
        {},
    ],
)
def test_the_locale_of_a_forked_gateway_is_set_as_the_interpreter_sets_it(
    forking: None, repo: Repo, monkeypatch: pytest.MonkeyPatch, variables: dict[str, str]
) -> None:
    repo.write("gateway.py", LOCALE)
    route = make_route(repo)
    run_captured(route, stdin=None, limits=LIMITS, trace_id=None)  # the server runs now
    for name in ("LANG", "LC_ALL", "LC_CTYPE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    forked = json.loads(run_captured(route, stdin=None, limits=LIMITS, trace_id=None).stdout)
    spawned = json.loads(spawn_captured(route, stdin=None, limits=SPAWN, trace_id=None).stdout)
    assert forked == spawned


STOPS_ITS_SERVER = """
import os, signal, sys
from boring_dispatch.gateway import ArgvInterface
class Echo(ArgvInterface):
    def run(self, argv):
        os.kill(os.getppid(), signal.SIGSTOP)  # the fork server, which reports our exit
        print("stopped it", flush=True)
        if argv == ["raise"]:
            raise RuntimeError("and fail")
        if argv == ["exit"]:
            os._exit(5)
        if argv == ["sleep"]:  # past its timeout: the launcher ends the group
            import time
            time.sleep(60)
        return int(argv[0]) if argv else 0
"""


@pytest.mark.parametrize("command", [(), ("3",), ("raise",), ("exit",), ("sleep",)])
def test_a_gateway_that_stops_the_fork_server_cannot_hang_its_call(
    forking: None, repo: Repo, monkeypatch: pytest.MonkeyPatch, command: tuple[str, ...]
) -> None:
    """The exit of a forked leader is reported by the server: a stopped server never reports.

    The call must still end within its bounds (the server's answer is awaited a
    bounded time once the leader has exited), never read as a success, and the
    server that did not answer is not trusted again.
    """
    monkeypatch.setattr(_fork, "START_TIMEOUT_S", 0.5)
    repo.write("gateway.py", STOPS_ITS_SERVER)
    route = make_route(repo, command)
    results, thread = _in_thread(route, ExecLimits(timeout_s=2.0), None)
    assert wait_until(lambda: _fork.server_pid() is not None)
    server = _fork.server_pid()
    assert server is not None
    try:
        thread.join(20.0)
        assert results, "the call hung on a stopped fork server"
    finally:
        with suppress(ProcessLookupError):
            os.kill(server, signal.SIGCONT)
    assert results[0].exit_code == -signal.SIGKILL  # unknown: never an ok
    assert results[0].stdout == "stopped it\n"
    assert wait_until(lambda: process_gone(server))  # not trusted again
    repo.write("gateway.py", PROBE)
    assert _probe(make_route(repo))["ppid"] not in {server, os.getpid()}


ENDS = """
import os, sys, tempfile
from boring_dispatch.gateway import ArgvInterface
KEPT = []

class Closer:
    def __init__(self, path):
        self.path = path
    def __del__(self):
        with open(self.path, "w") as handle:
            handle.write("finalized")

class Echo(ArgvInterface):
    def run(self, argv):
        kind, place = argv[0], argv[1]
        if kind == "buffered":
            handle = open(os.path.join(place, "out.txt"), "w")
            handle.write("written but never closed")
            KEPT.append(handle)
        elif kind == "temporary":
            handle = tempfile.NamedTemporaryFile(dir=place, prefix="secret-", delete=True)
            handle.write(b"a secret the gateway meant to be removed")
            KEPT.append(handle)
        elif kind == "finalizer":
            KEPT.append(Closer(os.path.join(place, "out.txt")))
        if argv[2:] == ["exit"]:
            sys.exit(3)
        return 0
"""


def _left_behind(place: Path) -> dict[str, str]:
    found = {path.name: path.read_text(errors="replace") for path in place.iterdir()}
    return {
        ("secret-*" if name.startswith("secret-") else name): text for name, text in found.items()
    }


@pytest.mark.parametrize("kind", ["buffered", "temporary", "finalizer"])
@pytest.mark.parametrize("ending", [(), ("exit",)])
def test_a_forked_gateway_ends_as_a_spawned_one_does(
    forking: None, repo: Repo, tmp_path: Path, kind: str, ending: tuple[str, ...]
) -> None:
    """The interpreter's own exit: buffers flushed, temporary files removed, finalizers run."""
    repo.write("gateway.py", ENDS)
    seen = {}
    for mode in ("forked", "spawned"):
        place = tmp_path / mode
        place.mkdir()
        route = make_route(repo, (kind, str(place), *ending))
        launch = spawn_captured if mode == "spawned" else run_captured
        limits = SPAWN if mode == "spawned" else LIMITS
        result = launch(route, stdin=None, limits=limits, trace_id=None)
        seen[mode] = (result.exit_code, _left_behind(place))
    assert seen["forked"] == seen["spawned"]
    assert "secret-*" not in seen["forked"][1]
