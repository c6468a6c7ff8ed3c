"""Repository resolution: warm in-process routes and a fresh CLI dry run, against their floors.

Floors measured in the same run (PERFORMANCE.md):
- YAML floor: ``yaml.load(..., Loader=yaml.CSafeLoader)`` over exactly the blueprint files
  the route opened (recorded from the loader's own ``opened_paths()``);
- interpreter floors: ``python -I -c pass`` and ``python -I -c "import yaml"``.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import yaml
from _timing import Stats, command, interleave, report

from boring_dispatch.blueprints import resolve as resolve_module
from boring_dispatch.blueprints.lookup import ModuleLoader
from boring_dispatch.blueprints.repository import Repository
from boring_dispatch.types import RouteRequest

ROUTES = {
    "R1": RouteRequest("get-weather", "get-weather._rtx.interface.scripts-weather"),
    "R2": RouteRequest("daily-plan", "cloud-files._rtx.interface.lists-read", argv=("lists/a",)),
    "R3": RouteRequest(
        "daily-plan", "list-manager._rtx.interface.read-list", argv=("/tmp/todo.yaml",)
    ),
}


def opened_blueprints(repository: Repository, request: RouteRequest) -> list[Path]:
    """The YAML files one resolution opened, from the loader's audit hook."""
    loaders: list[ModuleLoader] = []
    original = resolve_module.ModuleLoader

    class Recording(original):  # type: ignore[misc,valid-type]
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)
            loaders.append(self)

    resolve_module.ModuleLoader = Recording  # type: ignore[misc]
    try:
        repository.resolve(request)
    finally:
        resolve_module.ModuleLoader = original  # type: ignore[misc]
    return [p for p in loaders[0].opened_paths if p.suffix == ".yaml" and p.is_file()]


def yaml_floor(paths: Sequence[Path]) -> Callable[[], object]:
    def parse() -> object:
        for path in paths:
            with path.open("rb") as handle:
                yaml.load(handle, Loader=yaml.CSafeLoader)  # noqa: S506,TID251 - the floor itself
        return None

    return parse


def warm(repository: Repository, rounds: int, inner: int) -> dict[str, float]:
    results: dict[str, float] = {}
    for name, request in ROUTES.items():
        files = opened_blueprints(repository, request)
        stats = interleave(
            [
                (f"{name} YAML floor ({len(files)} files, C loader)", yaml_floor(files)),
                (f"{name} Repository.resolve {request.caller} -> {request.target}",
                 lambda request=request: repository.resolve(request)),
            ],
            rounds=rounds,
            inner=inner,
        )
        report(f"Warm resolution {name} (floor: plain YAML parse of the same files)", stats, "ms")
        results[name] = stats[1].median * 1e3
        results[f"{name}_floor"] = stats[0].median * 1e3
    return results


def fresh_cli(config: Path, rounds: int) -> dict[str, float]:
    python = Path(sys.executable)  # the venv interpreter itself (a symlink, not a shell shim)
    r1 = ROUTES["R1"]
    dry = [str(python), "-I", "-m", "boring_dispatch", "--config", str(config),
           "--caller-skill", r1.caller, "--dry-run", r1.target]
    stats = interleave(
        [
            ("python -I -c pass", command([str(python), "-I", "-c", "pass"])),
            ('python -I -c "import yaml"', command([str(python), "-I", "-c", "import yaml"])),
            ("dispatcher --dry-run R1 (python -I -m boring_dispatch)", command(dry)),
        ],
        rounds=rounds,
        inner=1,
    )
    report("Fresh CLI dry run of R1 (floor: python -I -c pass)", stats, "ms")
    yaml_floor_ms = stats[1].median * 1e3
    cli_ms = stats[2].median * 1e3
    print(f"  CLI / import-yaml floor: x{cli_ms / yaml_floor_ms:.2f} (target <= 1.5)")
    return {"cli_ms": cli_ms, "import_yaml_ms": yaml_floor_ms, "pass_ms": stats[0].median * 1e3}


def sweep(repository: Repository, requests: Sequence[RouteRequest], rounds: int) -> None:
    """Every owner route given: median per route, and the distribution of medians."""
    medians: list[float] = []
    for request in requests:
        stats = interleave([("r", lambda request=request: repository.resolve(request))],
                           rounds=rounds, inner=5)
        medians.append(stats[0].median * 1e3)
    medians.sort()
    q = statistics.quantiles(medians, n=10)
    print(f"Sweep of {len(medians)} owner routes (warm, median per route):")
    print(f"  min {medians[0]:.3f} ms  p10 {q[0]:.3f}  median {statistics.median(medians):.3f}"
          f"  p90 {q[-1]:.3f}  max {medians[-1]:.3f} ms")
    del Stats


def main(config: Path, rounds: int = 15) -> None:
    repository = Repository.open(config)
    warm(repository, rounds=rounds, inner=20)
    fresh_cli(config, rounds=21)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
