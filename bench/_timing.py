"""Interleaved timing: every benchmark is a ratio against a baseline measured in the same run.

Samples of the candidates are taken in turn (A B A B ...) so that machine noise
hits all of them alike; we report min/median/max per candidate and the ratio of
medians to the first candidate (the floor).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Stats:
    name: str
    samples: tuple[float, ...]  # seconds

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    def row(self, floor: Stats | None, unit: str = "us") -> str:
        scale = {"us": 1e6, "ms": 1e3}[unit]
        lo, med, hi = min(self.samples) * scale, self.median * scale, max(self.samples) * scale
        ratio = "" if floor is None else f"  x{self.median / floor.median:6.2f}"
        return f"  {self.name:<58} min {lo:9.2f} median {med:9.2f} max {hi:9.2f} {unit}{ratio}"


def interleave(
    candidates: Sequence[tuple[str, Callable[[], object]]],
    *,
    rounds: int,
    inner: int,
) -> list[Stats]:
    """Time each callable ``inner`` times per round, for ``rounds`` rounds, in turn."""
    samples: dict[str, list[float]] = {name: [] for name, _ in candidates}
    for _ in range(rounds):
        for name, func in candidates:
            start = time.perf_counter()
            for _ in range(inner):
                func()
            samples[name].append((time.perf_counter() - start) / inner)
    return [Stats(name, tuple(samples[name])) for name, _ in candidates]


def command(
    argv: Sequence[str],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    expect: bytes | None = None,
) -> Callable[[], object]:
    """A callable that runs one process and checks that it succeeded (and printed ``expect``)."""

    def run() -> object:
        completed = subprocess.run(list(argv), capture_output=True, check=False, cwd=cwd, env=env)
        if completed.returncode != 0:
            raise RuntimeError(
                f"{argv[:4]} exited {completed.returncode}: {completed.stderr[-300:]!r}"
            )
        if expect is not None and expect not in completed.stdout:
            raise RuntimeError(f"{argv[:4]} printed {completed.stdout[-300:]!r}")
        return completed

    return run


def report(title: str, stats: list[Stats], unit: str = "us") -> None:
    print(title)
    floor = stats[0]
    for item in stats:
        print(item.row(None if item is floor else floor, unit))


def verdict(label: str, measured: float, target: float, unit: str = "") -> str:
    """One line ``label: measured (target <= target) met/NOT met``."""
    met = "met" if measured <= target else "NOT met"
    return f"  {label}: {measured:.2f}{unit} (target <= {target:g}{unit}) {met}"


def interpreter() -> Path:
    """The interpreter running the benchmark (the venv's, not a shell shim)."""
    return Path(sys.executable)


def console_script(name: str) -> Path:
    """An installed console script next to the interpreter (``.venv/bin/<name>``)."""
    path = interpreter().parent / name
    if not path.is_file():
        raise RuntimeError(f"{path} is missing: install the project (make bench does)")
    return path
