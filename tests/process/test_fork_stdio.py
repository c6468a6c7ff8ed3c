"""A forked gateway's standard streams look as a spawned gateway's do, attribute by attribute.

The forked child makes new ``sys.stdin/stdout/stderr`` over descriptors 0-2
(``child._forked._fresh_stdio``); a starting interpreter makes them in
``create_stdio`` and names them. Anything a gateway can read off them
(``name``, ``mode``, the buffer's and the raw file's) must not tell a fork from
a spawn: ``logging``, ``argparse.FileType('-')`` and gateways that print or
compare ``sys.stdout.name`` read these.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from boring_dispatch._value import replace
from boring_dispatch.process import _fork
from boring_dispatch.process.launch import run_captured
from boring_dispatch.records import ExecLimits
from kits.gateways import Repo, make_repo, make_route

LIMITS = ExecLimits(timeout_s=30.0, fork_server=True)
spawn_captured = getattr(run_captured, "__wrapped__", run_captured)

STREAMS = """
import json, sys
from boring_dispatch.gateway import ArgvInterface

def _attrs(obj, names):
    seen = {}
    for name in names:
        try:
            seen[name] = repr(getattr(obj, name))
        except Exception as error:  # an attribute one kind of stream lacks is a difference
            seen[name] = "missing: " + type(error).__name__
    return seen

class Echo(ArgvInterface):
    def run(self, argv):
        report = {}
        for which in ("stdin", "stdout", "stderr", "__stdin__", "__stdout__", "__stderr__"):
            text = getattr(sys, which)
            report[which] = {
                "text": _attrs(text, ("name", "mode", "encoding", "errors", "line_buffering",
                                      "write_through", "closed")),
                "buffer": _attrs(text.buffer, ("name", "mode", "closed")),
                "raw": _attrs(text.buffer.raw, ("name", "mode", "closefd")),
                "kinds": [type(text).__name__, type(text.buffer).__name__,
                          type(text.buffer.raw).__name__],
            }
        report["same"] = [sys.stdin is sys.__stdin__, sys.stdout is sys.__stdout__,
                          sys.stderr is sys.__stderr__]
        print(json.dumps(report))
        return 0
"""


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Repo]:
    made = make_repo(tmp_path)
    made.write("gateway.py", STREAMS)
    try:
        yield made
    finally:
        _fork.stop()


def _seen(repo: Repo, stdin: bytes | None, *, fork: bool) -> dict[str, Any]:
    launch = run_captured if fork else spawn_captured
    route = make_route(repo, ("a",), stdin=stdin is not None)
    result = launch(route, stdin=stdin, limits=replace(LIMITS, fork_server=fork), trace_id=None)
    assert result.exit_code == 0, result.stderr
    seen = json.loads(result.stdout)
    assert isinstance(seen, dict)
    return seen


@pytest.mark.parametrize("stdin", [None, b"", b"input\n"])
def test_a_forked_gateways_standard_streams_look_as_a_spawned_ones(
    repo: Repo, stdin: bytes | None
) -> None:
    forked = _seen(repo, stdin, fork=True)
    spawned = _seen(repo, stdin, fork=False)
    for key in spawned:
        assert forked[key] == spawned[key], key
