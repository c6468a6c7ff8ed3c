"""How ``dispatcher mcp`` runs calls: cancellation, slots and what may wait for one.

Real servers driven by the official SDK client over stdio. Gateways and table
handlers count themselves on disk: each one records how many of its kind were
running when it started, so "never more than the limit" is measured by the
work itself, not inferred from the server.

- A cancel ends the call's gateway, or prevents its spawn when it comes
  earlier; a slot is free only once its gateway has really ended.
- A cancelled table call's handler keeps its slot until it returns (threads
  cannot be killed), so no more handlers than the limit ever run.
- Dry runs and refusals take no slot: they answer while every slot is held.
"""

from __future__ import annotations

import io
import json
import os
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

from boring_dispatch.surfaces.mcp.server import MAX_CONCURRENT_CALLS
from kits.gateways import process_running, wait_until
from kits.mcp import GATEWAY, projection, write_tools_repository
from kits.mcpcalls import BoundedServer

needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")

#: Replaces the kit's ``Sleep`` gateway: count the running ones, then hold until released.
_COUNTING_SLEEP: Final = textwrap.dedent(
    """

    def _running(pid):
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
                state = handle.read().rpartition(")")[2].split()[0]
        except OSError:
            return False
        return state not in {"Z", "X"}


    class Sleep(ArgvInterface):
        def run(self, argv):
            directory, hold = Path(argv[0]), float(argv[1])
            (directory / f"{os.getpid()}.pid").write_text(str(os.getppid()))
            running = sum(1 for p in directory.glob("*.pid") if _running(int(p.stem)))
            # Whole or absent: a cancel may kill the gateway mid-write.
            partial = directory / f"{os.getpid()}.seen-partial"
            partial.write_text(str(running))
            partial.replace(directory / f"{os.getpid()}.seen")
            deadline = time.monotonic() + hold
            while time.monotonic() < deadline and not (directory / "release").exists():
                time.sleep(0.01)
            return 0
    """
)

_TABLE: Final = textwrap.dedent(
    """
    import json, threading, time
    from pathlib import Path
    from boring_dispatch import Registry, Tool

    STATE = Path({state!r})
    _LOCK = threading.Lock()
    _COUNTS = {{"running": 0, "max_running": 0, "started": 0}}


    def _record(change):
        with _LOCK:
            _COUNTS["running"] += change
            if change > 0:
                _COUNTS["started"] += 1
            _COUNTS["max_running"] = max(_COUNTS["max_running"], _COUNTS["running"])
            STATE.with_suffix(".tmp").write_text(json.dumps(_COUNTS))
            STATE.with_suffix(".tmp").replace(STATE)


    def hold(seconds: float) -> dict:
        _record(1)
        try:
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline and not (STATE.parent / "release").exists():
                time.sleep(0.01)
        finally:
            _record(-1)
        return {{"held": True}}


    def ping() -> dict:
        return {{"pong": True}}


    TABLE = Registry({{
        "hold": Tool(hold, description="Hold a slot until released."),
        "ping": Tool(ping, description="Answer at once."),
    }})
    """
)


@pytest.fixture
def errlog(tmp_path: Path) -> Iterator[io.TextIOWrapper]:
    with (tmp_path / "server.log").open("w+", encoding="utf-8") as log:
        yield log


def _counting_repository(directory: Path) -> Path:
    config = write_tools_repository(directory)
    (directory / "skills" / "tools" / "main.py").write_text(
        GATEWAY + _COUNTING_SLEEP, encoding="utf-8"
    )
    return config


def _gateways(directory: Path) -> list[int]:
    return [int(path.stem) for path in directory.glob("*.pid")]


def _max_seen(directory: Path) -> int:
    return max((int(path.read_text()) for path in directory.glob("*.seen")), default=0)


def _runner_descendants() -> list[int]:
    """Gateway runners anywhere below this test process (Linux ``/proc``)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue
            if fields[0] not in {"Z", "X"}:
                parents[int(entry.name)] = int(fields[1])
    found = []
    for pid in parents:
        ancestor = parents.get(pid)
        while ancestor is not None and ancestor != os.getpid():
            ancestor = parents.get(ancestor)
        if ancestor is None:
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"boring_dispatch.process.child.runner" in cmdline:
            found.append(pid)
    return found


#: When each of the 24 cancels comes: some before the spawn, some while it runs.
_CANCEL_AFTER_S: Final = [0.002 * (k % 3) + 0.045 * k for k in range(24)]


@needs_proc
def test_cancelled_calls_end_their_gateways_and_never_run_more_than_the_limit(
    tmp_path: Path, errlog: io.TextIOWrapper
) -> None:
    config = _counting_repository(tmp_path / "repo")
    runs = tmp_path / "runs"
    runs.mkdir()
    arguments = projection("sleep", positionals=[str(runs), "30"])
    args = ["mcp", "--config", str(config)]
    env = {"ASSISTANT_LOGS": str(tmp_path / "logs")}
    with BoundedServer(args, env=env, cwd=tmp_path, errlog=errlog) as server:
        results = server.call_many(
            [("invoke_security_0", arguments, after) for after in _CANCEL_AFTER_S]
        )
        assert all(isinstance(result, Exception) for result in results)
        # Anything the server was still going to do for those calls, it has begun by now.
        server.list_tools()
        assert server.call("invoke_security_0", projection("streams-human"))["isError"] is False
        assert wait_until(lambda: not _runner_descendants(), timeout_s=10.0), (
            "a cancelled call's gateway is still running"
        )
        assert _gateways(runs), "no gateway started: the test exercised nothing"
        assert _max_seen(runs) <= MAX_CONCURRENT_CALLS
        assert not any(process_running(pid) for pid in _gateways(runs))


def test_cancelled_table_calls_keep_their_slot_until_the_handler_returns(
    tmp_path: Path, errlog: io.TextIOWrapper
) -> None:
    state = tmp_path / "state.json"
    (tmp_path / "holding_table.py").write_text(_TABLE.format(state=str(state)), encoding="utf-8")
    args = ["mcp", "--registry", "holding_table:TABLE"]
    with BoundedServer(args, env={}, cwd=tmp_path, errlog=errlog) as server:
        results = server.call_many([("hold", {"seconds": 10.0}, 0.05 * (k + 1)) for k in range(24)])
        assert all(isinstance(result, Exception) for result in results)
        (tmp_path / "release").touch()
        assert server.call("ping", {})["structuredContent"] == {
            "result": {"ok": True, "result": {"pong": True}}
        }
        assert wait_until(lambda: json.loads(state.read_text())["running"] == 0, timeout_s=10.0)
    counts = json.loads(state.read_text())
    assert 1 <= counts["max_running"] <= MAX_CONCURRENT_CALLS, counts


#: Calls that must answer while every slot is held: dry runs and refusals of every stage.
_NO_SLOT: Final[list[tuple[str, str, dict[str, object], bool]]] = [
    ("dry-run", "invoke_security_0", projection("echo", dry_run=True), False),
    (
        "dry-run-with-arguments",
        "invoke_security_0",
        projection("echo", positionals=["a"], options={"name": "x"}, stdin="s", dry_run=True),
        False,
    ),
    ("dry-run-refused", "invoke_security_0", projection("write-own", dry_run=True), True),
    ("tier-mismatch", "invoke_security_1", projection("echo"), True),
    ("unauthorized", "invoke_security_0", projection("private"), True),
    ("not-a-skill", "invoke_security_0", projection("echo", caller="other"), True),
    ("no-level", "invoke_security_0", projection("no-contract"), True),
    ("unknown-tool", "invoke_security_3", projection("echo"), True),
    ("malformed", "invoke_security_0", {"caller": 1}, True),
    ("no-such-interface", "invoke_security_0", projection("missing"), True),
]


@needs_proc
def test_dry_runs_and_refusals_answer_while_every_slot_is_held(
    tmp_path: Path, errlog: io.TextIOWrapper
) -> None:
    config = _counting_repository(tmp_path / "repo")
    runs = tmp_path / "runs"
    runs.mkdir()
    slow = projection("sleep", positionals=[str(runs), "8"])
    args = ["mcp", "--config", str(config)]
    env = {"ASSISTANT_LOGS": str(tmp_path / "logs")}
    with BoundedServer(args, env=env, cwd=tmp_path, errlog=errlog) as server:
        held = [server.start_call("invoke_security_0", slow) for _ in range(MAX_CONCURRENT_CALLS)]
        try:
            assert wait_until(lambda: len(_gateways(runs)) == MAX_CONCURRENT_CALLS)
            gateways = _gateways(runs)
            for case, name, arguments, is_error in _NO_SLOT:
                (result,) = server.call_many([(name, arguments, 3.0)])
                assert isinstance(result, dict), f"{case} waited for a slot"
                assert result["isError"] is is_error, case
                assert all(process_running(pid) for pid in gateways), case
        finally:
            (runs / "release").touch()
            for future in held:
                future.result(timeout=30)
