"""Strict YAML loading: the fast path against the libyaml path and the plain PyYAML floor.

For each benchmark route (the blueprint files one warm resolution opens), and
for every file of the corpus, three candidates run interleaved:

- floor: ``yaml.load(data, Loader=yaml.CSafeLoader)`` (PERFORMANCE.md's YAML floor);
- libyaml path: the strict loader without the fast path (``_load_yaml_libyaml``);
- ``load_yaml``: what resolution runs (the fast path, falling back to libyaml).

Usage: ``python bench/bench_yaml.py [/abs/path/officina.toml]``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import yaml
from _timing import interleave, report
from bench_resolve import ROUTES, opened_blueprints

from boring_dispatch.repository.repository import Repository
from boring_dispatch.repository.strict_yaml._fast import parse_block_yaml
from boring_dispatch.repository.strict_yaml.load import _load_yaml_libyaml, load_yaml

CONFIG = Path(__file__).resolve().parents[1] / "tests" / "corpus" / "famulus" / "officina.toml"


def _candidates(datas: Sequence[bytes]) -> list[tuple[str, Callable[[], object]]]:
    def floor() -> None:
        for data in datas:
            yaml.load(data, Loader=yaml.CSafeLoader)  # noqa: TID251 - the floor itself

    def libyaml() -> None:
        for data in datas:
            _load_yaml_libyaml(data, what="bench")

    def loaded() -> None:
        for data in datas:
            load_yaml(data, what="bench")

    return [
        ("floor: yaml.load CSafeLoader", floor),
        ("strict, libyaml path only", libyaml),
        ("load_yaml (fast path first)", loaded),
    ]


def routes(config: Path, rounds: int) -> None:
    repository = Repository.open(config)
    for name, request in ROUTES.items():
        files = opened_blueprints(repository, request)
        datas = [path.read_bytes() for path in files]
        size = sum(len(data) for data in datas)
        title = f"{name}: the {len(files)} blueprint files one resolution reads ({size} bytes)"
        report(title, interleave(_candidates(datas), rounds=rounds, inner=10), "ms")
        for path, data in zip(files, datas, strict=True):
            each = interleave(_candidates([data]), rounds=rounds, inner=5)
            relative = path.relative_to(config.parent)
            print(
                f"    {relative} ({len(data)} B): floor {each[0].median * 1e3:.3f}"
                f"  libyaml {each[1].median * 1e3:.3f}  load_yaml {each[2].median * 1e3:.3f} ms"
            )


def corpus(config: Path, rounds: int) -> None:
    files = sorted(config.parent.rglob("*.yaml"))
    datas = [path.read_bytes() for path in files]
    declined = [
        p for p, d in zip(files, datas, strict=True) if parse_block_yaml(d.decode()) is None
    ]
    print(f"Corpus: {len(files)} files, the fast path declines {len(declined)}:")
    for path in declined:
        print(f"    {path.relative_to(config.parent)}")
    readable = [data for data in datas if data.strip()]  # libyaml refuses the empty file
    title = f"Corpus: every non-empty file ({len(readable)}, {sum(map(len, readable))} bytes)"
    report(title, interleave(_candidates(readable), rounds=rounds, inner=1), "ms")


def main(config: Path = CONFIG, rounds: int = 15) -> None:
    routes(config, rounds)
    corpus(config, rounds)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else CONFIG)
