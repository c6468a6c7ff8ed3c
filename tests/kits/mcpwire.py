"""A real ``dispatcher mcp`` process driven with raw JSON-RPC lines over real pipes.

The SDK client cannot send hostile bytes (duplicate keys, lone surrogates,
huge ids, deep nesting) and always reads what the server writes; these tests
need both, so :class:`RawServer` writes and reads the pipes itself, with a
deadline on every read. :data:`HOSTILE_TABLE` is a Python table whose tools
return what a handler should not (text that is not UTF-8, deep nesting),
block, or return results of a chosen size.
"""

from __future__ import annotations

import fcntl
import functools
import json
import os
import select
import subprocess
import sys
import textwrap
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, Self

from kits.mcp import McpServer

__all__ = [
    "HOSTILE_TABLE",
    "INITIALIZE",
    "BoundedMcpServer",
    "RawServer",
    "peak_rss_kib",
    "write_hostile_table",
]

INITIALIZE: Final = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}

HOSTILE_TABLE: Final = textwrap.dedent(
    """
    import os, threading
    from pathlib import Path
    from boring_dispatch import Registry, Tool, ToolError
    from boring_dispatch.registry.pipeline import TableLimits


    def listdir(path: str) -> list:
        return sorted(os.listdir(path))


    def raw_text(code_points: list[int]) -> dict:
        return {"text": "".join(map(chr, code_points))}


    def raw_key(code_points: list[int]) -> dict:
        return {"".join(map(chr, code_points)): 1}


    def fail_with(code_points: list[int]) -> dict:
        raise ToolError("failed on " + "".join(map(chr, code_points)))


    def deep(levels: int, kind: str) -> object:
        value: object = []
        for _ in range(levels):
            value = [value] if kind == "list" else {"k": value}
        return value


    def sized(size: int) -> dict:
        return {"data": "x" * size}


    def echo(text: str) -> dict:
        return {"text": text}


    def noisy() -> dict:
        import sys

        print("stray print")
        sys.stdout.flush()
        os.write(1, b"stray write\\n")
        return {"stdin": sys.stdin.read(), "raw": os.read(0, 100).decode()}


    def block(marker: str) -> dict:
        Path(marker).touch()
        threading.Event().wait()
        return {}


    TABLE = Registry(
        {
            "listdir": Tool(listdir, description="List a folder."),
            "raw_text": Tool(raw_text, description="Text from code points."),
            "raw_key": Tool(raw_key, description="A key from code points."),
            "fail_with": Tool(fail_with, description="Fail with a message."),
            "deep": Tool(deep, description="A nested result."),
            "sized": Tool(sized, description="A result of a given size."),
            "echo": Tool(echo, description="Echo text."),
            "noisy": Tool(noisy, description="Print and read stdin."),
            "block": Tool(block, description="Never return."),
        },
        limits=TableLimits(max_observation_bytes=1 << 20),
    )
    """
)


class BoundedMcpServer(McpServer):
    """The SDK client session of :class:`McpServer`, whose calls give up after a deadline.

    A server that died leaves the SDK client waiting forever; this one fails the test.
    """

    def call(
        self, name: str, arguments: Mapping[str, object] | None, timeout_s: float = 60.0
    ) -> dict[str, Any]:
        result = self._portal.call(
            functools.partial(
                self._client.call_tool, name, arguments, read_timeout_seconds=timeout_s
            )
        )
        wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        return {key: wire.get(key) for key in ("content", "structuredContent", "isError")}


def write_hostile_table(directory: Path) -> str:
    """Write the table module into ``directory``; return its ``--registry`` spec."""
    (directory / "hostile_table.py").write_text(HOSTILE_TABLE, encoding="utf-8")
    return "hostile_table:TABLE"


def peak_rss_kib(pid: int) -> int:
    """The process's peak resident set size so far (``VmHWM``), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM in /proc/<pid>/status")


class RawServer:
    """``python -m boring_dispatch mcp ...`` with raw pipes (use as a context manager)."""

    def __init__(self, args: list[str], *, cwd: Path, env: Mapping[str, str] | None = None) -> None:
        self._args = [sys.executable, "-m", "boring_dispatch", *args]
        self._cwd = cwd
        self._env = {**os.environ, **(env or {})}
        self._buffer = b""
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Self:
        self.proc = subprocess.Popen(
            self._args,
            cwd=self._cwd,
            env=self._env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        return self

    def __exit__(self, *exc: object) -> None:
        proc = self._proc
        proc.kill()
        proc.wait(timeout=30)
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                pipe.close()

    @property
    def _proc(self) -> subprocess.Popen[bytes]:
        assert self.proc is not None, "use RawServer as a context manager"
        return self.proc

    @property
    def pid(self) -> int:
        return self._proc.pid

    @property
    def stdin_fd(self) -> int:
        assert self._proc.stdin is not None
        return self._proc.stdin.fileno()

    def initialize(self) -> None:
        """The legacy handshake, answered."""
        assert self.request(INITIALIZE)["id"] == 0
        self.send_json({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, line: bytes, timeout_s: float = 30.0) -> None:
        """Write one raw line (a newline is added); fails if the server reads none of it in time."""
        data = memoryview(line + b"\n")
        fd = self.stdin_fd
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_NONBLOCK)
        try:
            while data:
                ready = select.select([], [fd], [], timeout_s)[1]
                assert ready, f"the server read nothing for {timeout_s}s"
                try:
                    data = data[os.write(fd, data[: 1 << 20]) :]
                except BlockingIOError:
                    continue
        finally:
            fcntl.fcntl(fd, fcntl.F_SETFL, flags)

    def send_json(self, message: object) -> None:
        self.send(json.dumps(message).encode())

    def request(self, message: object, timeout_s: float = 5.0) -> dict[str, Any]:
        """Send one message and read the next line the server writes."""
        self.send_json(message)
        return self.receive(timeout_s)

    def receive(self, timeout_s: float = 5.0) -> dict[str, Any]:
        """The next line the server writes, parsed; fails after ``timeout_s``."""
        line = self.receive_line(timeout_s)
        assert line is not None, f"no message within {timeout_s}s"
        message = json.loads(line)
        assert isinstance(message, dict)
        return message

    def receive_line(self, timeout_s: float) -> bytes | None:
        """The next raw line, or ``None`` when nothing complete came within ``timeout_s``."""
        stdout = self._proc.stdout
        assert stdout is not None
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buffer:
            left = max(0.0, deadline - time.monotonic())
            if not select.select([stdout], [], [], left)[0]:
                return None
            chunk = os.read(stdout.fileno(), 1 << 20)
            if not chunk:
                raise AssertionError("the server closed its stdout (it ended)")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def ping(self, request_id: int | str) -> None:
        """The server is alive and has answered everything sent before this ping."""
        answer = self.request({"jsonrpc": "2.0", "id": request_id, "method": "ping"})
        assert answer == {"jsonrpc": "2.0", "id": request_id, "result": {}}, answer

    def call(self, request_id: int, name: str, arguments: Mapping[str, object]) -> dict[str, Any]:
        """A ``tools/call`` request, answered."""
        message = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": name, "arguments": dict(arguments)},
        }
        answer = self.request(message)
        assert answer.get("id") == request_id, answer
        return answer
