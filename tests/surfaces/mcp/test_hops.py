"""How a repository call reaches its worker threads: hops, slots, answers and cancels.

Real repositories and real gateways; the only instrument is a counter around
anyio's own ``to_thread.run_sync`` (each call of it is one hop to a worker
thread and back), which records how many slots were held when the hop began.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest
from anyio import wait_all_tasks_blocked

from boring_dispatch.process._cancel import forget
from boring_dispatch.repository.repository import Repository
from boring_dispatch.surfaces.mcp._calls import RepositoryCalls
from boring_dispatch.surfaces.mcp._hops import repository_call
from boring_dispatch.surfaces.mcp._results import ToolOutcome
from kits.gateways import process_running, wait_until, written
from kits.mcp import projection, write_tools_repository

#: One call of each kind: launched (ok, failing, raising, with stdin), refused
#: before resolution, refused by resolution, and a dry run.
_FAMILY: list[tuple[str, object]] = [
    ("invoke_security_0", projection("streams-both")),
    ("invoke_security_0", projection("streams-machine")),
    ("invoke_security_0", projection("fail")),
    ("invoke_security_0", projection("raise")),
    ("invoke_security_0", projection("echo", positionals=["a", "b"], stdin="in\n")),
    ("invoke_security_1", projection("write-own")),
    ("invoke_security_1", projection("streams-both")),
    ("invoke_security_0", projection("missing")),
    ("invoke_security_0", projection("private")),
    ("invoke_security_0", projection("streams-both", caller="nobody")),
    ("invoke_security_9", projection("streams-both")),
    ("invoke_security_0", {"caller": 3, "interface": []}),
    ("invoke_security_0", "not an object"),
    ("invoke_security_0", projection("streams-both", dry_run=True)),
]
_LAUNCHED = {0, 1, 2, 3, 4, 5}
_DRY = {len(_FAMILY) - 1}
_TRACE = "0123456789abcdef0123456789abcdef"


@pytest.fixture(scope="module")
def calls(tmp_path_factory: pytest.TempPathFactory) -> RepositoryCalls:
    config = write_tools_repository(tmp_path_factory.mktemp("repo"))
    return RepositoryCalls(Repository.open(config))


class _Hops:
    """Counts hops to worker threads and the slots held as each began."""

    def __init__(self, slots: anyio.CapacityLimiter) -> None:
        self.held: list[float] = []
        self.returned = anyio.Event()
        self._slots = slots
        self._real: Callable[..., Any] = anyio.to_thread.run_sync

    async def run_sync(self, func: Callable[..., Any], *args: object, **kwargs: Any) -> Any:
        self.held.append(self._slots.borrowed_tokens)
        try:
            return await self._real(func, *args, **kwargs)
        finally:
            self.returned.set()


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Callable[[anyio.CapacityLimiter], _Hops]:
    def install(slots: anyio.CapacityLimiter) -> _Hops:
        hops = _Hops(slots)
        monkeypatch.setattr(anyio.to_thread, "run_sync", hops.run_sync)
        return hops

    return install


def _answer(outcome: ToolOutcome) -> tuple[object, ...]:
    return (outcome.structured, outcome.texts, outcome.is_error, outcome.wire_meta())


def _two_steps(calls: RepositoryCalls, name: str, arguments: object) -> ToolOutcome:
    """The call as the server made it before: prepare, then (if any) the launch."""
    step = calls.prepare(name, arguments, trace_id=_TRACE)
    return step if isinstance(step, ToolOutcome) else step.run()


@pytest.mark.parametrize(("index", "name", "arguments"), [(i, *c) for i, c in enumerate(_FAMILY)])
def test_each_call_answers_as_its_preparation_then_launch_does(
    calls: RepositoryCalls, index: int, name: str, arguments: object
) -> None:
    slots = anyio.CapacityLimiter(2)
    call = functools.partial(repository_call, calls, slots, name, arguments, _TRACE)
    try:
        assert _answer(anyio.run(call)) == _answer(_two_steps(calls, name, arguments))
    finally:
        forget(_TRACE)
    assert slots.borrowed_tokens == 0


@pytest.mark.parametrize(("index", "name", "arguments"), [(i, *c) for i, c in enumerate(_FAMILY)])
def test_with_a_free_slot_a_call_takes_one_hop_holding_the_slot_unless_dry(
    calls: RepositoryCalls,
    counted: Callable[[anyio.CapacityLimiter], _Hops],
    index: int,
    name: str,
    arguments: object,
) -> None:
    slots = anyio.CapacityLimiter(1)
    hops = counted(slots)
    outcome = anyio.run(repository_call, calls, slots, name, arguments, _TRACE)
    forget(_TRACE)
    assert hops.held == ([0] if index in _DRY else [1])
    assert slots.borrowed_tokens == 0
    assert isinstance(outcome, ToolOutcome)


@pytest.mark.parametrize(("index", "name", "arguments"), [(i, *c) for i, c in enumerate(_FAMILY)])
def test_without_a_free_slot_only_a_launch_waits_for_one(
    calls: RepositoryCalls,
    counted: Callable[[anyio.CapacityLimiter], _Hops],
    index: int,
    name: str,
    arguments: object,
) -> None:
    slots = anyio.CapacityLimiter(1)
    other = object()
    hops = counted(slots)
    outcomes: list[ToolOutcome] = []

    async def main() -> None:
        slots.acquire_on_behalf_of_nowait(other)  # another call holds the only slot

        async def one() -> None:
            outcomes.append(await repository_call(calls, slots, name, arguments, _TRACE))

        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                group.start_soon(one)
                await hops.returned.wait()  # the preparation (or the dry run) is over
                await wait_all_tasks_blocked()
                waiting = slots.statistics().tasks_waiting
                assert waiting == (1 if index in _LAUNCHED else 0)
                assert bool(outcomes) is (index not in _LAUNCHED)
                slots.release_on_behalf_of(other)

    anyio.run(main)
    forget(_TRACE)
    # A launch: the preparation without a slot, then the launch with it.
    assert hops.held == ([1, 1] if index in _LAUNCHED else [1])
    assert slots.borrowed_tokens == 0
    assert _answer(outcomes[0]) == _answer(_two_steps(calls, name, arguments))
    forget(_TRACE)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_a_cancel_in_the_single_hop_ends_the_gateway_before_the_slot_is_free(
    calls: RepositoryCalls, tmp_path: Path
) -> None:
    marker = tmp_path / "sleep.pid"
    slots = anyio.CapacityLimiter(1)
    seen: dict[str, object] = {}

    async def main() -> None:
        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:

                async def one() -> None:
                    arguments = projection("sleep", positionals=[str(marker)])
                    await repository_call(calls, slots, "invoke_security_0", arguments, _TRACE)

                group.start_soon(one)
                started = await anyio.to_thread.run_sync(wait_until, lambda: written(marker))
                assert started
                seen["pid"] = int(marker.read_text().split()[0])
                seen["held"] = slots.borrowed_tokens
                group.cancel_scope.cancel()
        seen["after"] = slots.borrowed_tokens

    try:
        anyio.run(main)
    finally:
        forget(_TRACE)
    pid = seen["pid"]
    assert isinstance(pid, int)
    assert seen["held"] == 1
    assert seen["after"] == 0
    # The slot came back only after the thread ended, which waits for the gateway's end.
    assert not process_running(pid)
