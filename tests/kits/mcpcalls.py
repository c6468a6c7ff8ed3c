"""The kit's ``dispatcher mcp`` server with bounded and concurrent calls (hardening tests).

:class:`BoundedServer` adds to :class:`mcp_kit.McpServer`: calls that give up
after a read timeout (the SDK then sends ``notifications/cancelled``), many
calls at once, calls in the background, and a choice of how the server is
started (``python -m boring_dispatch`` or the installed ``dispatcher`` script).
"""

from __future__ import annotations

import concurrent.futures
import sys
from pathlib import Path
from typing import Any, Final

from kits.mcp import McpServer

__all__ = ["DISPATCHER", "BoundedServer"]

#: The installed console script, as hosts start the server.
DISPATCHER: Final = Path(sys.executable).with_name("dispatcher")
#: Long enough for a loaded machine, short enough that a wedged server fails the test.
CALL_TIMEOUT_S: Final = 30.0


class BoundedServer(McpServer):
    """A server session whose every call is bounded in time.

    Args:
        args: the arguments after the command (``["mcp", "--config", path]``).
        prefix: the command; ``python -m boring_dispatch`` unless given.
        **kwargs: as for :class:`McpServer` (``env``, ``cwd``, ``errlog``).
    """

    def __init__(self, args: list[str], *, prefix: list[str] | None = None, **kwargs: Any) -> None:
        super().__init__(args, **kwargs)
        if prefix is not None:
            self._args = [*prefix, *args]

    def call(self, name: str, arguments: Any) -> dict[str, Any]:
        """One call, failing (``TimeoutError``-like SDK error) after :data:`CALL_TIMEOUT_S`."""
        (result,) = self.call_many([(name, arguments, CALL_TIMEOUT_S)])
        if isinstance(result, BaseException):
            raise result
        assert isinstance(result, dict)
        return {key: result.get(key) for key in ("content", "structuredContent", "isError")}

    def call_many(self, calls: list[tuple[str, Any, float]]) -> list[object]:
        """Send every call at once; each entry is the wire result or the SDK's error."""
        import anyio

        results: list[object] = [None] * len(calls)

        async def one(index: int, name: str, arguments: Any, read_timeout_s: float) -> None:
            try:
                result = await self._client.call_tool(
                    name, arguments, read_timeout_seconds=read_timeout_s
                )
            except Exception as error:  # the SDK's timeout error: the call was cancelled
                results[index] = error
            else:
                results[index] = result.model_dump(by_alias=True, mode="json", exclude_none=True)

        async def all_of_them() -> None:
            async with anyio.create_task_group() as group:
                for index, (name, arguments, timeout) in enumerate(calls):
                    group.start_soon(one, index, name, arguments, timeout)

        self._portal.call(all_of_them)
        return results

    def start_call(self, name: str, arguments: Any) -> concurrent.futures.Future[Any]:
        """Send a call in the background (bounded by :data:`CALL_TIMEOUT_S`)."""

        async def call() -> Any:
            return await self._client.call_tool(
                name, arguments, read_timeout_seconds=CALL_TIMEOUT_S
            )

        future: concurrent.futures.Future[Any] = self._portal.start_task_soon(call)
        return future
