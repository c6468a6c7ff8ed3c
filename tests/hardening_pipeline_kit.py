"""Shared parts of the pipeline-hardening tests: a raw JSON-RPC client and log capture.

:class:`RawMcp` starts a real ``dispatcher mcp --registry ...`` process and
speaks newline-delimited JSON-RPC to it byte for byte, for the inputs the SDK
client cannot send (its serializer turns ``inf`` into ``null``): overflowing
number literals and ``NaN``/``Infinity``. Every read is bounded.
"""

from __future__ import annotations

import json
import logging
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import IO, Final, Self

__all__ = ["RawMcp", "captured_logs", "write_module"]

_WAIT_S: Final = 20.0


def write_module(directory: Path, name: str, source: str) -> Path:
    """Write ``<directory>/<name>.py`` and return its path."""
    path = directory / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    return path


class RawMcp:
    """A ``dispatcher mcp`` child spoken to in raw JSON-RPC lines (a context manager)."""

    def __init__(self, args: list[str], *, cwd: Path, env: Mapping[str, str] | None = None) -> None:
        self._args = [sys.executable, "-m", "boring_dispatch", *args]
        self._cwd = cwd
        self._env = dict(env) if env is not None else None
        self._lines: queue.Queue[bytes] = queue.Queue()
        self._process: subprocess.Popen[bytes] | None = None
        self._next_id = 1

    def __enter__(self) -> Self:
        self._process = subprocess.Popen(
            self._args,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=self._cwd,
            env=self._env,
        )
        stdout = self._process.stdout
        assert stdout is not None
        self._pump_thread = threading.Thread(target=self._pump, args=(stdout,), daemon=True)
        self._pump_thread.start()
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        )
        self.send_text('{"jsonrpc":"2.0","method":"notifications/initialized"}')
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        process = self._process
        assert process is not None
        stdin = process.stdin
        assert stdin is not None
        stdin.close()
        try:
            process.wait(timeout=_WAIT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=_WAIT_S)
        self._pump_thread.join(timeout=_WAIT_S)
        if process.stdout is not None:
            process.stdout.close()

    def _pump(self, stdout: IO[bytes]) -> None:
        for line in stdout:
            self._lines.put(line)

    def send_text(self, text: str) -> None:
        """Write one message exactly as given (plus the newline)."""
        process = self._process
        assert process is not None
        stdin = process.stdin
        assert stdin is not None
        stdin.write(text.encode("utf-8") + b"\n")
        stdin.flush()

    def request(self, method: str, params: Mapping[str, object]) -> dict[str, object]:
        """Send a request built with ``json.dumps`` and return its response."""
        message_id = self._next_id
        self._next_id += 1
        text = json.dumps({"jsonrpc": "2.0", "id": message_id, "method": method, "params": params})
        self.send_text(text)
        return self.response(message_id)

    def call_raw(self, name: str, arguments_text: str) -> dict[str, object]:
        """``tools/call`` whose ``arguments`` member is ``arguments_text`` verbatim."""
        message_id = self._next_id
        self._next_id += 1
        head = {"jsonrpc": "2.0", "id": message_id, "method": "tools/call"}
        params = '{"name":' + json.dumps(name) + ',"arguments":' + arguments_text + "}"
        self.send_text(json.dumps(head)[:-1] + ',"params":' + params + "}")
        return self.response(message_id)

    def response(self, message_id: int) -> dict[str, object]:
        """The next response with ``message_id`` (notifications are skipped); bounded wait."""
        while True:
            line = self._lines.get(timeout=_WAIT_S)
            message = json.loads(line)
            if isinstance(message, dict) and message.get("id") == message_id:
                return message


class _Keep(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def captured_logs() -> Iterator[list[logging.LogRecord]]:
    """Every record of the ``boring_dispatch`` logger (DEBUG and up) inside the block."""
    logger = logging.getLogger("boring_dispatch")
    keep = _Keep()
    old_level = logger.level
    logger.setLevel(logging.DEBUG)
    logger.addHandler(keep)
    try:
        yield keep.records
    finally:
        logger.removeHandler(keep)
        logger.setLevel(old_level)
