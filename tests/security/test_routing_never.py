"""What the routing path never does, observed with a CPython audit hook (PEP 578).

The v6 reference: the live routing path does not list directories, build
catalogues, inspect Git, contact a network, run processes or write routing
state. Every process-bindable corpus route is resolved while an audit hook
records the events that any of those would raise; none may appear, and every
file opened must be opened read-only.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from boring_dispatch.errors import RouteError
from boring_dispatch.records import RouteRequest
from boring_dispatch.repository.repository import Repository
from kits.cases import corpus_config
from kits.corpus import BINDABLE, SECRET_IN_ARGV

FORBIDDEN_EVENTS = frozenset(
    {
        "socket.connect",
        "socket.getaddrinfo",
        "socket.gethostbyname",
        "subprocess.Popen",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.listdir",
        "os.scandir",
        "os.walk",
        "glob.glob",
        "os.remove",
        "os.rename",
        "os.mkdir",
        "os.rmdir",
        "os.symlink",
        "os.chmod",
        "os.truncate",
    }
)
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_recording: list[tuple[str, tuple[object, ...]]] | None = None


def _hook(event: str, args: tuple[object, ...]) -> None:
    if _recording is not None and (event in FORBIDDEN_EVENTS or event == "open"):
        _recording.append((event, args))


sys.addaudithook(_hook)  # permanent for the process; records only inside `recording()`


@contextmanager
def recording() -> Iterator[list[tuple[str, tuple[object, ...]]]]:
    global _recording  # noqa: PLW0603 - the hook cannot be removed, so it reads a module flag
    events: list[tuple[str, tuple[object, ...]]] = []
    _recording = events
    try:
        yield events
    finally:
        _recording = None


def _writes(event: tuple[str, tuple[object, ...]]) -> bool:
    name, args = event
    if name != "open":
        return False
    mode, flags = args[1], args[2]
    if isinstance(mode, str) and any(c in mode for c in "wax+"):
        return True
    return isinstance(flags, int) and bool(flags & _WRITE_FLAGS)


def test_resolving_every_corpus_route_lists_nothing_runs_nothing_and_writes_nothing() -> None:
    repository = Repository.open(corpus_config("famulus"))
    from test_corpus_routes import _argv, _callers

    def resolve_all() -> int:
        resolved = 0
        for export_id, export in sorted(BINDABLE.items()):
            argv = _argv(export_id, export)
            for caller, host in _callers(export_id, export):
                try:
                    repository.resolve(
                        RouteRequest(caller=caller, target=export_id, argv=argv, from_host=host)
                    )
                except RouteError:
                    continue
                resolved += 1
                break
        return resolved

    # Once unrecorded: modules the routing code imports on first use (RE2, PyYAML, datetime)
    # are found by the import system, which lists directories; that is not routing.
    resolve_all()
    with recording() as events:
        resolved = resolve_all()
    assert resolved == len(BINDABLE) - len(SECRET_IN_ARGV)
    forbidden = [name for name, _ in events if name in FORBIDDEN_EVENTS]
    assert forbidden == []
    assert [event for event in events if _writes(event)] == []
    assert any(name == "open" for name, _ in events)  # the hook does see the reads


def test_the_hook_would_see_a_listing_a_process_and_a_write() -> None:
    import subprocess

    with recording() as events:
        os.listdir("/")  # noqa: PTH208 - the event under test
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        with open(os.devnull, "w", encoding="utf-8"):  # noqa: PTH123 - the event under test
            pass
    names = {name for name, _ in events}
    assert {"os.listdir", "subprocess.Popen"} <= names
    assert any(_writes(event) for event in events)
