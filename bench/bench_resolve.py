"""Repository resolution: warm in-process routes, a sweep, and a fresh CLI dry run, against floors.

Floors measured in the same run (PERFORMANCE.md):
- YAML floor: ``yaml.load(..., Loader=yaml.CSafeLoader)`` over exactly the blueprint files
  the route opened (recorded from the loader's own ``opened_paths``);
- interpreter floors: ``python -I -c pass`` and ``python -I -c "import yaml"``.

The fresh CLI is measured as users run it (the ``dispatcher`` console script),
as ``python -I -m boring_dispatch``, and from a copy of the package that has no
``.pyc`` files (run with ``-B``, so none are written: a fresh checkout, or
``PYTHONDONTWRITEBYTECODE=1``).
"""

from __future__ import annotations

import functools
import os
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import yaml
from _timing import command, console_script, interleave, interpreter, report, verdict

import boring_dispatch
from boring_dispatch.errors import RouteError
from boring_dispatch.records import RepositoryConfig, RouteRequest
from boring_dispatch.repository import pipeline as resolve_module
from boring_dispatch.repository.load.lookup import NO_FOLLOW_FILES, ModuleLoader
from boring_dispatch.repository.repository import Repository

ROUTES = {
    "R1": RouteRequest("get-weather", "get-weather._rtx.interface.scripts-weather"),
    "R2": RouteRequest("daily-plan", "cloud-files._rtx.interface.lists-read", argv=("lists/a",)),
    "R3": RouteRequest(
        "daily-plan",
        "list-manager._rtx.interface.read-list",
        argv=("/tmp/todo.yaml",),  # noqa: S108 - an argument string, never opened
    ),
}
#: PERFORMANCE.md targets of warm resolution: (ms, ratio to the YAML floor or None).
WARM_TARGETS = {"R1": (0.5, 0.35), "R2": (1.5, None), "R3": (3.0, None)}


class _RecordingFiles:
    """The real no-follow reader, recording the paths it reads or probes."""

    def __init__(self) -> None:
        self.paths: list[Path] = []

    def read(self, path: Path, cap: int) -> bytes:
        self.paths.append(path)
        return NO_FOLLOW_FILES.read(path, cap)

    def stat(self, path: Path) -> os.stat_result:
        self.paths.append(path)
        return NO_FOLLOW_FILES.stat(path)


def opened_blueprints(repository: Repository, request: RouteRequest) -> list[Path]:
    """The YAML files one resolution opened, recorded by the loader's file reader."""
    loaders: list[ModuleLoader] = []
    files = _RecordingFiles()

    def recording(config: RepositoryConfig) -> ModuleLoader:
        loader = ModuleLoader(config, files)
        loaders.append(loader)
        return loader

    namespace = vars(resolve_module)  # the benchmark swaps the class for one resolution
    original = namespace["ModuleLoader"]
    namespace["ModuleLoader"] = recording
    try:
        repository.resolve(request)
    finally:
        namespace["ModuleLoader"] = original
    return [p for p in files.paths if p.suffix == ".yaml" and p.is_file()]


def yaml_floor(paths: Sequence[Path]) -> Callable[[], object]:
    def parse() -> object:
        for path in paths:
            with path.open("rb") as handle:
                yaml.load(handle, Loader=yaml.CSafeLoader)  # noqa: TID251 - the floor itself
        return None

    return parse


def resolver(repository: Repository, request: RouteRequest) -> Callable[[], object]:
    def resolve() -> object:
        return repository.resolve(request)

    return resolve


def warm(repository: Repository, rounds: int, inner: int) -> dict[str, float]:
    results: dict[str, float] = {}
    for name, request in ROUTES.items():
        files = opened_blueprints(repository, request)
        stats = interleave(
            [
                (f"{name} YAML floor ({len(files)} files, C loader)", yaml_floor(files)),
                (f"{name} Repository.resolve", resolver(repository, request)),
            ],
            rounds=rounds,
            inner=inner,
        )
        report(
            f"Warm resolution {name}: {request.caller} -> {request.target}"
            " (floor: plain YAML parse of the same files)",
            stats,
            "ms",
        )
        floor_ms, ours_ms = (s.median * 1e3 for s in stats)
        target_ms, target_ratio = WARM_TARGETS[name]
        print(verdict(f"{name} median", ours_ms, target_ms, " ms"))
        if target_ratio is not None:
            print(verdict(f"{name} / YAML floor", ours_ms / floor_ms, target_ratio, "x"))
        results[name] = ours_ms
        results[f"{name}_floor"] = floor_ms
    return results


def sweep(repository: Repository, rounds: int) -> dict[str, float]:
    """Every process-bindable export, called with an argv its pattern accepts: the distribution.

    The caller and argv of each route are the ones ``tests/test_corpus_routes.py``
    proves: the owning skill where it is a host, else a module its policy names.
    Exports that need a secret in argv (refused by design) are left out.
    """
    tests = Path(__file__).resolve().parent.parent / "tests"
    sys.path.insert(0, str(tests))
    from kits.corpus import BINDABLE, SECRET_IN_ARGV
    from test_corpus_routes import _argv, _callers

    resolved: list[RouteRequest] = []
    for export_id, export in sorted(BINDABLE.items()):
        if export_id in SECRET_IN_ARGV:
            continue
        argv = _argv(export_id, export)
        for caller, host in _callers(export_id, export):
            request = RouteRequest(caller, export_id, argv=argv, from_host=host)
            try:
                repository.resolve(request)
            except RouteError:
                continue
            resolved.append(request)
            break
    skipped = len(BINDABLE) - len(SECRET_IN_ARGV) - len(resolved)
    print(f"Sweep of every process-bindable export from its owner ({skipped} did not resolve)")
    stats = interleave(
        [(r.target, functools.partial(repository.resolve, r)) for r in resolved],
        rounds=rounds,
        inner=3,
    )
    medians = sorted(s.median * 1e3 for s in stats)
    deciles = statistics.quantiles(medians, n=10)
    print(
        f"  {len(medians)} routes, median per route: min {medians[0]:.3f}"
        f"  p10 {deciles[0]:.3f}  median {statistics.median(medians):.3f}"
        f"  p90 {deciles[-1]:.3f}  max {medians[-1]:.3f} ms"
    )
    return {"resolved": statistics.median(medians)}


def fresh_cli(config: Path, rounds: int) -> dict[str, float]:
    python = str(interpreter())
    r1 = ROUTES["R1"]
    args = ["--config", str(config), "--caller-skill", r1.caller, "--dry-run", r1.target]
    with tempfile.TemporaryDirectory(prefix="bench-nopyc-") as scratch:
        # A copy of the package with no bytecode cache, run with -B so that none is written.
        package = Path(boring_dispatch.__file__).parent
        shutil.copytree(
            package, Path(scratch) / package.name, ignore=shutil.ignore_patterns("__pycache__")
        )
        shim = (
            f"import sys; sys.path.insert(0, {scratch!r});"
            " from boring_dispatch.surfaces.cli.main import main; sys.exit(main())"
        )
        stats = interleave(
            [
                ("python -I -c pass", command([python, "-I", "-c", "pass"])),
                ('python -I -c "import yaml"', command([python, "-I", "-c", "import yaml"])),
                (
                    "dispatcher --dry-run R1 (console script)",
                    command([str(console_script("dispatcher")), *args]),
                ),
                (
                    "python -I -m boring_dispatch --dry-run R1",
                    command([python, "-I", "-m", "boring_dispatch", *args]),
                ),
                (
                    "the same without .pyc (python -I -B, fresh copy)",
                    command([python, "-I", "-B", "-c", shim, *args]),
                ),
            ],
            rounds=rounds,
            inner=1,
        )
        leaked = list(Path(scratch).rglob("*.pyc"))
    if leaked:
        raise RuntimeError("the no-.pyc copy got bytecode files")
    report("Fresh CLI dry run of R1 (floor: python -I -c pass)", stats, "ms")
    pass_ms, yaml_ms, cli_ms, module_ms, cold_ms = (s.median * 1e3 for s in stats)
    print(verdict("dispatcher (console script) median", cli_ms, 45, " ms"))
    print(verdict("dispatcher / import-yaml floor", cli_ms / yaml_ms, 1.5, "x"))
    print(verdict("python -m boring_dispatch / import-yaml floor", module_ms / yaml_ms, 1.5, "x"))
    print(f"  without .pyc / import-yaml floor: x{cold_ms / yaml_ms:.2f}")
    return {
        "cli_ms": cli_ms,
        "module_ms": module_ms,
        "no_pyc_ms": cold_ms,
        "import_yaml_ms": yaml_ms,
        "pass_ms": pass_ms,
    }


def main(config: Path, rounds: int = 15) -> dict[str, float]:
    repository = Repository.open(config)
    results = warm(repository, rounds=rounds, inner=20)
    results.update(sweep(repository, rounds=3))
    results.update(fresh_cli(config, rounds=21))
    return results


if __name__ == "__main__":
    main(Path(sys.argv[1]))
