"""MCP dry run over stdio without the SDK client: the servers' own share of a round trip.

``bench_mcp.py`` drives each server with the SDK's ``Client``, whose own work
(pydantic models, and checking ``structuredContent`` against the tool's output
schema) is part of every figure it reports, and is larger for our 2.5 KB
result than for a one-word echo. Here a plain client writes each JSON-RPC
line and reads the answer line (one ``json.loads``), so what remains is the
two servers' work and the pipes: the SDK's own ``MCPServer`` echo tool (the
floor) and ``dispatcher mcp`` answering a dry run of R1. Interleaved in blocks
(floor, ours, floor, ours ...); every answer is checked.

    .venv/bin/python bench/bench_mcp_raw.py [path/to/officina.toml]
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _timing import Stats, console_script, interpreter, report
from bench_mcp import FLOOR_SERVER, R1

from boring_dispatch.repository.repository import Repository

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from kits.mcpwire import INITIALIZE


class _Session:
    """One server process, initialized, answering one request per line."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self._process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self._next = 1
        self._ask(INITIALIZE)
        self._tell({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _tell(self, message: dict[str, object]) -> None:
        assert self._process.stdin is not None
        self._process.stdin.write(json.dumps(message).encode() + b"\n")
        self._process.stdin.flush()

    def _ask(self, message: dict[str, object]) -> dict[str, object]:
        self._tell(message)
        assert self._process.stdout is not None
        answer = json.loads(self._process.stdout.readline())
        if answer.get("id") != message["id"] or "result" not in answer:
            raise RuntimeError(f"unexpected answer {str(answer)[:300]}")
        return answer["result"]  # type: ignore[no-any-return]

    def call(self, tool: str, arguments: dict[str, object]) -> None:
        self._next += 1  # a fresh id each time: an id is busy until its answer is written
        request = {"name": tool, "arguments": arguments}
        message = {"jsonrpc": "2.0", "id": self._next, "method": "tools/call", "params": request}
        if self._ask(message).get("isError"):
            raise RuntimeError(f"{tool} failed")

    def close(self) -> None:
        assert self._process.stdin is not None
        self._process.stdin.close()
        self._process.wait(timeout=10)


def main(corpus: Path, rounds: int = 30, inner: int = 25) -> dict[str, float]:
    level = Repository.open(corpus).resolve(R1).security_level
    dry_run: dict[str, object] = {
        "caller": R1.caller,
        "interface": R1.target,
        "arguments": {},
        "dry_run": True,
    }
    with tempfile.TemporaryDirectory(prefix="bench-mcp-raw-") as scratch:
        floor_script = Path(scratch) / "floor_server.py"
        floor_script.write_text(FLOOR_SERVER, encoding="utf-8")
        env = {"PATH": "/usr/bin:/bin", "ASSISTANT_LOGS": str(Path(scratch) / "logs")}
        dispatcher = [str(console_script("dispatcher")), "mcp", "--config", str(corpus)]
        floor = _Session([str(interpreter()), "-I", str(floor_script)], env)
        ours = _Session(dispatcher, env)

        def echo() -> None:
            floor.call("echo", {"text": "hi"})

        def dry() -> None:
            ours.call(f"invoke_security_{level}", dry_run)

        candidates: list[tuple[str, Callable[[], None]]] = [
            ("SDK MCPServer: echo tool (floor)", echo),
            (f"dispatcher mcp: invoke_security_{level} dry run R1", dry),
        ]
        samples: dict[str, list[float]] = {name: [] for name, _ in candidates}
        for _, call in candidates:  # warm up: first-call imports are not charged
            for _ in range(inner):
                call()
        for _ in range(rounds):
            for name, call in candidates:
                start = time.perf_counter()
                for _ in range(inner):
                    call()
                samples[name].append((time.perf_counter() - start) / inner)
        floor.close()
        ours.close()
    stats = [Stats(name, tuple(samples[name])) for name, _ in candidates]
    report("MCP over stdio without the SDK client, warm, per call (floor: SDK echo)", stats, "ms")
    floor_ms, dry_ms = (s.median * 1e3 for s in stats)
    print(f"  our server's share over the SDK server's: {dry_ms - floor_ms:.2f} ms per call")
    return {"mcp_raw_floor_ms": floor_ms, "mcp_raw_dry_ms": dry_ms}


def _default_corpus() -> Path:
    return Path(__file__).resolve().parents[1] / "tests" / "corpus" / "famulus" / "officina.toml"


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else _default_corpus())
