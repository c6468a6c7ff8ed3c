"""Run every benchmark in sequence (``make bench``): table, resolution, live CLI, MCP, setup.

Prints the conditions first (date, Python, CPU count, bytecode caches), since
every figure depends on them. Each benchmark prints its own floors, measured
in the same run and interleaved with what it measures.
"""

from __future__ import annotations

import datetime as dt
import functools
import importlib.util
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import bench_live
import bench_mcp
import bench_resolve
import bench_setup
import bench_table
from _targets import summary

import boring_dispatch

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "corpus" / "famulus" / "officina.toml"


def conditions() -> None:
    package = Path(boring_dispatch.__file__).parent
    sources = sorted(package.rglob("*.py"))
    uncached = [p for p in sources if not Path(importlib.util.cache_from_source(str(p))).is_file()]
    print(f"date: {dt.datetime.now(dt.UTC).isoformat(timespec='seconds')}")
    print(f"python: {sys.version.split()[0]} ({platform.python_implementation()}) {sys.executable}")
    print(f"machine: {platform.machine()}, nproc {os.cpu_count()}, {platform.platform()}")
    print(
        f"bytecode: {len(sources) - len(uncached)} of {len(sources)} modules of {package}"
        f" have a .pyc; PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r}"
    )
    if uncached:
        names = ", ".join(str(p.relative_to(package)) for p in uncached[:8])
        print(f"  without .pyc: {names}{' ...' if len(uncached) > 8 else ''}")
    print(
        "  (python -I ignores PYTHONDONTWRITEBYTECODE and writes caches; the gateway child runs"
        " with -B and never writes them; the 'without .pyc' row uses a cache-free copy and -B)"
    )
    print(f"corpus: {CORPUS}")
    print()


def main() -> None:
    began = time.monotonic()
    conditions()
    runs: list[tuple[str, Callable[[], object]]] = [
        ("table", bench_table.main),
        ("resolve", functools.partial(bench_resolve.main, CORPUS)),
        ("live", bench_live.main),
        ("mcp", functools.partial(bench_mcp.main, CORPUS)),
        ("setup", bench_setup.main),
    ]
    results: dict[str, Any] = {}
    for name, run in runs:
        started = time.monotonic()
        results[name] = run()
        print(f"  [{name}: {time.monotonic() - started:.0f} s]")
        print()
    print(
        "Summary: issue 15's targets (medians of this run; absolute ms are for this machine only)"
    )
    for row in summary(results["resolve"], results["live"], results["mcp"]):
        print(row.line())
    print(f"total: {time.monotonic() - began:.0f} s")


if __name__ == "__main__":
    main()
