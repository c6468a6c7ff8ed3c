"""``TableBackend.call`` never raises: the operator's context function failing in any way.

The ``--context`` function runs in the call's worker thread, where no signal
arrives: whatever it raises (``SystemExit``, ``KeyboardInterrupt``,
``GeneratorExit``, any ``BaseException``) is the operator's fault, like a
handler's, and the call is ``internal_error``; nothing escapes to end the MCP
session, and the slot is given back. The next call is answered.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import anyio
import pytest

from boring_dispatch.surfaces._table_backend import TableBackend
from kits.fixture_tables import TABLE


class _Odd(BaseException):
    """A BaseException no one catches by name."""


FAULTS: tuple[Callable[[], BaseException], ...] = (
    lambda: SystemExit(0),
    lambda: SystemExit("vault gone"),
    KeyboardInterrupt,
    GeneratorExit,
    lambda: _Odd("x"),
    lambda: RuntimeError("vault unreachable"),
)


@pytest.mark.parametrize("fault", FAULTS)
def test_a_context_function_that_raises_anything_is_internal_error(
    fault: Callable[[], BaseException],
) -> None:
    raised = [True]

    def context() -> Mapping[str, object]:
        if raised[0]:
            raised[0] = False
            raise fault()
        return {}

    backend = TableBackend(TABLE, context=context)

    async def refuse(_tool: str, _shown: str) -> bool:
        return False

    async def main() -> tuple[object, object]:
        slots = anyio.CapacityLimiter(1)
        first = await backend.call(
            "get_job", {"job_id": 7}, trace_id="0" * 32, slots=slots, confirm=refuse
        )
        assert slots.borrowed_tokens == 0
        second = await backend.call(
            "get_job", {"job_id": 7}, trace_id="1" * 32, slots=slots, confirm=refuse
        )
        return first.structured, second.structured

    first, second = anyio.run(main)
    assert isinstance(first, dict)
    assert first["result"]["ok"] is False
    assert first["result"]["error"]["code"] == "internal_error"
    assert "vault" not in str(first)
    assert isinstance(second, dict)
    assert second["result"]["ok"] is True
