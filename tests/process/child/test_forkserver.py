"""The fork server's own protocol, driven by hand: refusals, the child's spec, and its ends.

A real server process is started as the launcher starts it; the tests speak
its protocol directly (one request byte with six descriptors) to reach the
cases the launcher never produces.
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boring_dispatch.process._fork import FORKSERVER_MODULE
from boring_dispatch.process._forked_popen import recv_exact
from boring_dispatch.process.child.forkserver import REAP, REAPED, REQUEST
from boring_dispatch.process.env import child_environment
from kits.gateways import process_gone, wait_until

EPROTO = 71


def _measured(env: dict[str, str]) -> dict[str, str]:
    """``env``, plus coverage's own variable when the suite runs under coverage.

    The dispatcher starts its fork server with the allowlisted environment, which
    drops it; the server these tests start by hand keeps it, so that the server and
    the children it forks are measured. Nothing the server does reads it.
    """
    config = os.environ.get("COVERAGE_PROCESS_CONFIG")
    return env if config is None else {**env, "COVERAGE_PROCESS_CONFIG": config}


class Server:
    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-B", "-X", "utf8", "-m", FORKSERVER_MODULE,
             f"--control-fd={theirs.fileno()}"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            cwd="/", env=_measured(child_environment()), pass_fds=(theirs.fileno(),),
            start_new_session=True,
        )  # fmt: skip
        theirs.close()
        self.control = ours

    def call(self, spec: bytes) -> tuple[socket.socket, socket.socket, int, int]:
        """Send one request whose spec socket carries ``spec``; (spec, status, stdout, pid)."""
        spec_ours, spec_theirs = socket.socketpair()
        status_ours, status_theirs = socket.socketpair()
        out_r, out_w = os.pipe()
        broker_ours, broker_theirs = socket.socketpair()
        devnull = os.open(os.devnull, os.O_RDONLY)
        fds = [spec_theirs.fileno(), status_theirs.fileno(), devnull, out_w, out_w]
        socket.send_fds(self.control, [REQUEST], [*fds, broker_theirs.fileno()])
        for fd in (devnull, out_w):
            os.close(fd)
        for sock in (spec_theirs, status_theirs, broker_theirs, broker_ours):
            sock.close()
        spec_ours.sendall(spec)
        spec_ours.shutdown(socket.SHUT_WR)
        status_ours.settimeout(15.0)
        spec_ours.settimeout(15.0)
        pid = int.from_bytes(recv_exact(status_ours, 4), "big")
        return spec_ours, status_ours, out_r, pid

    def stop(self) -> None:
        self.control.close()
        self.proc.wait(15.0)
        if self.proc.stderr is not None:
            self.proc.stderr.close()


def _status(status: socket.socket) -> int:
    code = int.from_bytes(recv_exact(status, 4), "big", signed=True)
    status.sendall(REAP)
    assert recv_exact(status, 1) == REAPED
    return code


@pytest.fixture
def server() -> Iterator[Server]:
    made = Server()
    try:
        yield made
    finally:
        with suppress(OSError):
            made.stop()


def _framed(payload: object) -> bytes:
    body = json.dumps(payload).encode()
    return len(body).to_bytes(4, "big") + body


def _hello_spec(tmp: Path) -> bytes:
    """A runner command that fails its own checks at once (exit 2): no repository needed."""
    return _framed({"argv": ["--nothing"], "env": {"PATH": "/usr/bin:/bin"}, "cwd": str(tmp)})


@pytest.mark.parametrize(
    ("data", "count"),
    [(b"X", 6), (REQUEST, 5), (REQUEST, 1), (REQUEST, 0), (b"FF", 6), (b"", 6)],
)
def test_a_malformed_request_is_refused_and_the_server_keeps_serving(
    server: Server, tmp_path: Path, data: bytes, count: int
) -> None:
    status_ours, status_theirs = socket.socketpair()
    others = [os.open(os.devnull, os.O_RDONLY) for _ in range(count)]
    fds = ([status_theirs.fileno(), *others])[:count] if count else []
    socket.send_fds(server.control, [data], fds)
    status_theirs.close()
    for fd in others:
        os.close(fd)
    status_ours.settimeout(15.0)
    if count:  # the status socket was among them: closed by the server, never a pid
        assert recv_exact(status_ours, 4) == b""
    status_ours.close()
    spec, status, out, _pid = server.call(_hello_spec(tmp_path))
    assert recv_exact(spec, 4) == b"\0\0\0\0"
    assert _status(status) == 2  # the runner refused its options: it ran
    os.close(out)
    spec.close()
    status.close()
    assert server.proc.poll() is None


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    payload=st.one_of(
        st.binary(max_size=64),
        st.builds(
            _framed,
            st.one_of(
                st.none(),
                st.integers(),
                st.lists(st.text(max_size=5), max_size=3),
                st.dictionaries(st.sampled_from(["argv", "env", "cwd", "x"]), st.integers()),
                st.fixed_dictionaries(
                    {"argv": st.just([]), "env": st.just({"A": 1}), "cwd": st.just("/")}
                ),
                st.fixed_dictionaries(
                    {"argv": st.just([1]), "env": st.just({}), "cwd": st.just("/")}
                ),
            ),
        ),
    )
)
def test_a_malformed_spec_stops_the_child_before_the_runner(server: Server, payload: bytes) -> None:
    spec, status, out, _pid = server.call(payload)
    assert int.from_bytes(recv_exact(spec, 4), "big") == EPROTO
    assert _status(status) == 127
    assert os.read(out, 100) == b""  # nothing of the runner ran
    os.close(out)
    spec.close()
    status.close()


def test_a_missing_working_directory_is_reported_as_its_errno(
    server: Server, tmp_path: Path
) -> None:
    payload = _framed({"argv": [], "env": {}, "cwd": str(tmp_path / "missing")})
    spec, status, out, _pid = server.call(payload)
    assert int.from_bytes(recv_exact(spec, 4), "big") == 2  # ENOENT
    assert _status(status) == 127
    for closing in (spec, status):
        closing.close()
    os.close(out)


def test_closing_the_status_socket_of_a_running_child_kills_it(server: Server) -> None:
    spec_ours, status_ours, broker_ours, out_r, pid = _unfed_call(server)
    # The child waits for its spec, which never comes (the spec socket stays open).
    status_ours.close()
    assert wait_until(lambda: process_gone(pid))
    for closing in (spec_ours, broker_ours):
        closing.close()
    os.close(out_r)
    assert server.proc.poll() is None


def _unfed_call(
    server: Server,
) -> tuple[socket.socket, socket.socket, socket.socket, int, int]:
    """A request whose spec never comes: (spec, status, broker, stdout, pid)."""
    spec_ours, spec_theirs = socket.socketpair()
    status_ours, status_theirs = socket.socketpair()
    out_r, out_w = os.pipe()
    broker_ours, broker_theirs = socket.socketpair()
    fds = [
        spec_theirs.fileno(),
        status_theirs.fileno(),
        out_r,
        out_w,
        out_w,
        broker_theirs.fileno(),
    ]
    socket.send_fds(server.control, [REQUEST], fds)
    for sock in (spec_theirs, status_theirs, broker_theirs):
        sock.close()
    os.close(out_w)
    status_ours.settimeout(15.0)
    pid = int.from_bytes(recv_exact(status_ours, 4), "big")
    return spec_ours, status_ours, broker_ours, out_r, pid


def test_when_the_control_socket_ends_the_server_kills_its_children_and_exits(
    server: Server,
) -> None:
    spec_ours, status_ours, broker_ours, out_r, pid = _unfed_call(server)
    server.stop()
    assert server.proc.returncode == 0
    assert process_gone(pid)
    for closing in (spec_ours, status_ours, broker_ours):
        closing.close()
    os.close(out_r)


def test_the_server_refuses_to_run_without_isolation() -> None:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with ours, theirs:
        done = subprocess.run(
            [sys.executable, "-m", FORKSERVER_MODULE, f"--control-fd={theirs.fileno()}"],
            pass_fds=(theirs.fileno(),), capture_output=True, timeout=30, check=False,
            cwd="/", env=child_environment(),
        )  # fmt: skip
    assert done.returncode == 2
    assert b"isolated" in done.stderr


@pytest.mark.parametrize("argv", [[], ["--control-fd"], ["--other=3"], ["--control-fd=3", "x"]])
def test_the_server_refuses_other_options(argv: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-I", "-m", FORKSERVER_MODULE, *argv],
        capture_output=True, timeout=30, check=False, cwd="/", env=child_environment(),
    )  # fmt: skip
    assert done.returncode == 2


def test_signals_are_not_changed_by_the_server() -> None:
    """A forked child starts with the dispositions a fresh interpreter has."""
    code = (
        "import signal, json; print(json.dumps([str(signal.getsignal(s)) for s in "
        "(signal.SIGINT, signal.SIGPIPE, signal.SIGCHLD, signal.SIGALRM, signal.SIGTERM)]))"
    )
    fresh = subprocess.run(
        [sys.executable, "-I", "-c", code], capture_output=True, check=True, env=child_environment()
    )
    loaded = subprocess.run(
        [sys.executable, "-I", "-c", "import boring_dispatch.process.child.forkserver, "
         "boring_dispatch.process.child._forked\n" + code],
        capture_output=True, check=True, env=child_environment(),
    )  # fmt: skip
    assert fresh.stdout == loaded.stdout


def _serves(server: Server, tmp: Path) -> None:
    """The server is alive and still forks: a new call runs the runner to its end."""
    assert server.proc.poll() is None, server.proc.stderr.read() if server.proc.stderr else ""
    spec, status, out, _pid = server.call(_hello_spec(tmp))
    assert recv_exact(spec, 4) == b"\0\0\0\0"
    assert _status(status) == 2
    os.close(out)
    spec.close()
    status.close()


def _readable(sock: socket.socket) -> None:
    ready, _, _ = select.select([sock], [], [], 15.0)
    assert ready


@pytest.mark.parametrize("unread", ["pid", "status", "reaped"])
def test_a_status_socket_closed_with_an_answer_unread_leaves_the_server_serving(
    server: Server, tmp_path: Path, unread: str
) -> None:
    """Closing a unix stream socket with data unread resets its peer (``ECONNRESET``).

    The launcher does that whenever it gives up on a call before reading
    everything (a set-up failure, a timeout, an exception): the server must
    treat it as the release it is, not die (and take every running call with it).
    """
    spec_ours, spec_theirs = socket.socketpair()
    status_ours, status_theirs = socket.socketpair()
    out_r, out_w = os.pipe()
    broker_ours, broker_theirs = socket.socketpair()
    fds = [spec_theirs.fileno(), status_theirs.fileno(), out_r, out_w, out_w]
    socket.send_fds(server.control, [REQUEST], [*fds, broker_theirs.fileno()])
    for sock in (spec_theirs, status_theirs, broker_theirs, broker_ours):
        sock.close()
    os.close(out_w)
    status_ours.settimeout(15.0)
    if unread == "pid":
        _readable(status_ours)  # the pid is there; the child waits for its spec
    else:
        recv_exact(status_ours, 4)
        spec_ours.sendall(_hello_spec(tmp_path))
        if unread == "status":
            _readable(status_ours)
        else:
            assert recv_exact(status_ours, 4) == (2).to_bytes(4, "big")
            status_ours.sendall(REAP)
            _readable(status_ours)
    status_ours.close()
    spec_ours.close()
    os.close(out_r)
    _serves(server, tmp_path)


@pytest.mark.parametrize(
    "swap", [(1, "pipe"), (1, "dgram"), (0, "pipe"), (5, "pipe"), (1, "file"), (0, "file")]
)
def test_a_request_with_a_descriptor_of_the_wrong_kind_never_stops_the_server(
    server: Server, tmp_path: Path, swap: tuple[int, str]
) -> None:
    position, kind = swap
    spec_ours, spec_theirs = socket.socketpair()
    status_ours, status_theirs = socket.socketpair()
    out_r, out_w = os.pipe()
    broker_ours, broker_theirs = socket.socketpair()
    fds = [
        spec_theirs.fileno(),
        status_theirs.fileno(),
        out_r,
        out_w,
        out_w,
        broker_theirs.fileno(),
    ]
    pipe_r, pipe_w = os.pipe()
    dgram = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    wrong = {"pipe": pipe_r, "dgram": dgram.fileno(), "file": os.open(tmp_path, os.O_RDONLY)}
    fds[position] = wrong[kind]
    socket.send_fds(server.control, [REQUEST], fds)
    for sock in (spec_theirs, status_theirs, broker_theirs, broker_ours, dgram):
        sock.close()
    for fd in (out_w, pipe_w, pipe_r, wrong["file"]):
        os.close(fd)
    status_ours.settimeout(15.0)
    if position != 1:  # a child was forked; it fails its set-up or the runner refuses
        pid = recv_exact(status_ours, 4)
        if position == 0:
            assert pid
        status_ours.close()
    else:  # refused: the status socket we kept sees its end
        assert recv_exact(status_ours, 4) == b""
        status_ours.close()
    spec_ours.close()
    os.close(out_r)
    _serves(server, tmp_path)
