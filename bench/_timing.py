"""Interleaved timing: every benchmark is a ratio against a baseline measured in the same run.

Samples of the candidates are taken in turn (A B A B ...) so that machine noise
hits all of them alike; we report min/median/max per candidate and the ratio of
medians to the first candidate (the floor).
"""

from __future__ import annotations

import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass


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


def command(argv: Sequence[str], **kwargs: object) -> Callable[[], object]:
    """A callable that runs one process and checks that it succeeded."""

    def run() -> object:
        completed = subprocess.run(  # noqa: S603 - fixed benchmark commands
            list(argv), capture_output=True, check=False, **kwargs
        )
        if completed.returncode != 0:
            raise RuntimeError(f"{argv[:4]} exited {completed.returncode}: {completed.stderr[-300:]!r}")
        return completed

    return run


def report(title: str, stats: list[Stats], unit: str = "us") -> None:
    print(title)
    floor = stats[0]
    for item in stats:
        print(item.row(None if item is floor else floor, unit))
