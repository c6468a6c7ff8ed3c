"""A child forked by the fork server: today's process setup, then the runner.

In the forked child, before any gateway code and before the runner's own
checks, :func:`run_call` does what ``subprocess.Popen`` and ``execve`` do for
a spawned runner:

- a new session (``setsid``): the child leads its group and session;
- stdin, stdout and stderr from the call's descriptors, the spec socket at
  descriptor 3 (closed before the runner starts), the broker socket at 4 (the
  number the runner command names);
  every other descriptor is closed (the server's control and status sockets,
  the pidfds, other calls' descriptors; :func:`close_others` checks
  ``/proc/self/fd`` afterwards);
- the spec, read from the spec socket (never seen by the server): the runner
  command, the allowlisted environment (it replaces ``os.environ`` whole) and
  the working directory; ``chdir`` to it; ``time.tzset()`` for its ``TZ``;
  ``LC_CTYPE`` set (and coerced) from it as the interpreter's start-up does;
- dumpable again, as after ``execve`` (the server itself is not dumpable);
- the random module reseeded (also done by its at-fork hook).

Then one status word is written back on the spec socket (0, or the errno of
the step that failed, as ``Popen`` reports a failed ``exec``), the socket is
closed, and the runner's :func:`~boring_dispatch.process.child.runner.main`
runs with the server as the parent its deadline watches. Everything after
that (capabilities, rlimits, the confined importer, the deadline) is the
runner's, unchanged.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import sys
from _weakref import ref
from contextlib import suppress
from typing import Final

from boring_dispatch.process import _reach, wire
from boring_dispatch.process._command import FORKED_BROKER_FD
from boring_dispatch.process.child import _exit, runner

__all__ = [
    "BROKER_FD",
    "MAX_SPEC_BYTES",
    "close_others",
    "preload",
    "run_call",
]

#: Where the broker socket sits in a forked child (the runner command names it).
BROKER_FD: Final = FORKED_BROKER_FD
_SPEC_FD: Final = 3
#: The spec (command, environment, cwd) is bounded well above the argv caps.
MAX_SPEC_BYTES: Final = 4 << 20
_PR_SET_DUMPABLE: Final = 4
#: CPython's own list, in its order (Python/pylifecycle.c, ``_TARGET_LOCALES``).
_COERCION_TARGETS: Final = ("C.UTF-8", "C.utf8", "UTF-8")
_LOW_FD: Final = 10  # above every target descriptor


class _SpecError(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def close_others(keep: int) -> None:
    """Close every descriptor from ``keep`` up; then check ``/proc/self/fd``."""
    os.closerange(keep, 1 << 20)
    try:
        left = [int(name) for name in os.listdir("/proc/self/fd")]  # noqa: PTH208 - numbers only
    except OSError:
        return
    for fd in left:
        if fd >= keep:
            with suppress(OSError):  # the directory descriptor of the listing itself
                os.close(fd)


def _place(fds: list[int]) -> list[object]:
    """spec, status, stdin, stdout, stderr, broker -> 3 (spec), 0, 1, 2, 4 (broker)."""
    import fcntl

    spec, _status, stdin, stdout, stderr, broker = (
        fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, _LOW_FD) for fd in fds
    )
    for source, target in ((stdin, 0), (stdout, 1), (stderr, 2), (broker, BROKER_FD)):
        os.dup2(source, target, inheritable=True)
    os.dup2(spec, _SPEC_FD, inheritable=False)
    close_others(max(_SPEC_FD, BROKER_FD) + 1)
    return _fresh_stdio()


def _fresh_stdio() -> list[object]:
    """New ``sys.stdin/stdout/stderr`` over descriptors 0-2, as a starting interpreter makes them.

    The server's were opened on ``/dev/null``; reusing them would keep its
    buffers and its notion of seekability. Named ``<stdin>``, ``<stdout>`` and
    ``<stderr>`` with the text layer's ``mode`` set, as the interpreter's start-up
    makes them (a gateway reading ``sys.stdout.mode`` or ``.name`` sees a spawn's).
    Returns the objects made (text, buffer and raw layers of the three streams).
    """
    import io

    made: list[object] = []
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        old = getattr(sys, name)
        raw = io.FileIO(fd, "rb" if fd == 0 else "wb", closefd=False)
        raw.name = f"<{name}>"  # as create_stdio names them
        buffered: io.BufferedReader | io.BufferedWriter = (
            io.BufferedReader(raw) if fd == 0 else io.BufferedWriter(raw)
        )
        stream = io.TextIOWrapper(
            buffered,
            encoding=old.encoding,
            errors=old.errors,
            newline="\n",
            line_buffering=fd == 2 or raw.isatty(),
        )
        stream.mode = "r" if fd == 0 else "w"  # type: ignore[misc] # as create_stdio sets it
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)
        made += [stream, buffered, raw]
    return made


def _read_spec(sock: socket.socket) -> tuple[list[str], dict[str, str], str]:
    try:
        body = wire.read_message(sock, MAX_SPEC_BYTES)
    except (OSError, wire.MessageTooLarge):
        raise _SpecError(errno.EPROTO) from None
    try:
        spec = json.loads(body or b"null")
    except ValueError:
        raise _SpecError(errno.EPROTO) from None
    if not isinstance(spec, dict) or set(spec) != {"argv", "env", "cwd"}:
        raise _SpecError(errno.EPROTO)
    argv, env, cwd = spec["argv"], spec["env"], spec["cwd"]
    if (
        not isinstance(argv, list)
        or not all(isinstance(token, str) for token in argv)
        or not isinstance(env, dict)
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())
        or not isinstance(cwd, str)
    ):
        raise _SpecError(errno.EPROTO)
    return argv, env, cwd


def _set_locale(env: dict[str, str]) -> None:
    """``LC_CTYPE`` from the call's environment, as CPython's start-up sets it (PEP 538).

    The interpreter sets ``LC_CTYPE`` from the environment; when that gives the
    legacy ``C``/``POSIX`` locale (or an uninstalled one) and ``LC_ALL`` is not
    set, it switches to the first UTF-8 locale that exists and exports it as
    ``LC_CTYPE``, so that programs the gateway starts see it too.
    """
    import locale

    try:
        current = locale.setlocale(locale.LC_CTYPE, "")
    except locale.Error:
        current = locale.setlocale(locale.LC_CTYPE, "C")
    if env.get("LC_ALL") or current not in {"C", "POSIX"}:
        return
    for target in _COERCION_TARGETS:
        try:
            locale.setlocale(locale.LC_CTYPE, target)
        except locale.Error:
            continue
        os.environ["LC_CTYPE"] = target
        return


def _set_up(sock: socket.socket) -> list[str]:
    """Environment, cwd and dumpable from the spec; returns the runner command."""
    argv, env, cwd = _read_spec(sock)
    os.environ.clear()
    os.environ.update(env)
    import time

    time.tzset()  # the call's TZ, as a starting interpreter reads it
    _set_locale(env)
    try:
        os.chdir(cwd)
    except OSError as error:
        raise _SpecError(error.errno or errno.ENOENT) from None
    if _reach.libc().prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0) != 0:
        raise _SpecError(errno.EPERM)
    if "random" in sys.modules:  # its at-fork hook did it too; never the server's state
        sys.modules["random"].seed()
    return argv


def preload() -> None:
    """In the server, once: what every child would load anyway (stdlib and our own code only).

    The C library handle, the functions of it a child calls and the
    ``capget`` structures, ``argparse`` (parsed gateways), ``fcntl``, ``io``,
    ``locale`` (the child's set-up) and :mod:`boring_dispatch._files` (the
    runner's span writer appends with it); the count of audit hooks the exit
    protocol watches (:func:`~boring_dispatch.process.child._exit.watch_audit_hooks`);
    the interpreter's AST singletons (a first ``compile()``); then the collector's view of
    everything loaded is frozen, so the children's collections do not touch
    (and copy) the server's pages.
    """
    import argparse  # noqa: F401 - loaded for the children
    import fcntl  # noqa: F401
    import gc
    import io  # noqa: F401
    import locale  # noqa: F401

    from boring_dispatch import _files  # noqa: F401

    libc = _reach.libc()
    # Made (and cached on the handle by ctypes) here, not in each child (see _exit).
    libc.prctl, libc.capget, libc.capset, libc.exit  # noqa: B018
    _reach.capability_types()
    _exit.watch_audit_hooks()
    # The interpreter makes its AST singletons at the first compile(): here, not in each
    # child (every gateway is compiled by the confined importer). Made in a child, they
    # stay alive and their class has its own deallocation: every call fell back to the
    # full exit, unless this server had compiled a module of its own (no .pyc file).
    compile("", "<fork server>", "exec", dont_inherit=True)
    gc.freeze()


def run_call(fds: list[int], *, server_pid: int) -> int:
    """Set this forked child up as a spawned runner would be, then run the runner.

    The call ends through :func:`~boring_dispatch.process.child._exit.finish`
    (the interpreter's exit without the server's teardown); the status is
    returned only when that falls back to the interpreter's full exit.
    """
    import gc

    gc.freeze()  # what the server made while serving is not the call's (see _exit)
    taken = _exit.Snapshot()
    os.setsid()
    streams = [ref(stream) for stream in _place(fds)]  # weak: see _exit.finish
    sock = socket.socket(fileno=_SPEC_FD)
    try:
        argv = _set_up(sock)
    except _SpecError as error:
        code = error.code
    else:
        code = 0
    try:
        sock.sendall(code.to_bytes(4, "big"))
    except OSError:
        code = code or errno.EPIPE
    sock.close()
    del sock  # nothing of the set-up outlives it (see _exit)
    if code:
        return 127
    sys.argv = [runner.__file__ or "runner", *argv]
    if not _exit.applies():  # another interpreter: its own exit, whole (no emulated step)
        return runner.main(argv, parent_pid=server_pid)
    status = _exit.status_of(lambda: runner.main(argv, parent_pid=server_pid))
    with suppress(Exception):  # never the call's status: the interpreter's exit then
        _exit.finish(status, taken, streams)
    return status
