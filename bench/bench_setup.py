"""The setup gate's cost on a live call: status + authorize, SQLite and PostgreSQL, against floors.

In process, warm, on a private copy of the example repository whose managed
setups are ready: ``Repository.resolve`` (no gate: what a dry run does) is the
floor; ``resolve_live`` adds the gate. For the managed target
(``mailer._rtx.interface.send``) the gate loads the sparse closure and makes
two ledger transactions (status, then the atomic authorize with its event);
for an unmanaged target (``notes._rtx.interface.list-notes``) it classifies
from the loaded ancestry and returns without touching the ledger.
PostgreSQL rows need ``BORING_DISPATCH_BENCH_POSTGRES`` (a URL) or the
machine's PostgreSQL packages (a throwaway server is started on loopback).
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from _timing import interleave, report

from boring_dispatch.records import RouteRequest
from boring_dispatch.repository.repository import Repository
from boring_dispatch.setup.manager.routes import SetupManager

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "repository"
MANAGED = RouteRequest("mailer", "mailer._rtx.interface.send", argv=("hi",))
UNMANAGED = RouteRequest("notes", "notes._rtx.interface.list-notes")
RESUME = '{"caller":"mailer","interface":"mailer._rtx.interface.send","version":1}'


def _ready(repository: Repository) -> None:
    """Run the example's setup flow once: the vault's Python step, the mailer's Markdown step."""
    manager = SetupManager(repository)
    began = manager.call("begin", "mailer", {"setup": "mailer.interface.setup@1", "resume": RESUME})
    flow = str(began["flow_id"])
    manager.call("run-python", "mailer", {"flow": flow})
    manager.call(
        "settle", "mailer", {"flow": flow, "setup": "mailer.interface.setup@1", "outcome": "ready"}
    )


@contextlib.contextmanager
def _postgres() -> Iterator[str | None]:
    given = os.environ.get("BORING_DISPATCH_BENCH_POSTGRES")
    if given:
        yield given
        return
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from kits.postgres import start_postgres

        servers = start_postgres()
        server = next(servers)
    except BaseException as error:
        print(f"  (no PostgreSQL for the benchmark: {type(error).__name__})")
        yield None
        return
    try:
        yield server.new_database()
    finally:
        with contextlib.suppress(StopIteration):
            next(servers)


def main(rounds: int = 30, inner: int = 20) -> None:
    with tempfile.TemporaryDirectory(prefix="bd-bench-setup-") as tmp, _postgres() as pg:
        root = Path(tmp).resolve()
        shutil.copytree(EXAMPLE, root / "repository", ignore=shutil.ignore_patterns("__pycache__"))
        config = root / "repository" / "officina.toml"
        ledgers = {"SQLite": str(root / "ledger.sqlite3")}
        if pg is not None:
            ledgers["PostgreSQL"] = pg
        repositories = {name: Repository.open(config, ledger=url) for name, url in ledgers.items()}
        for repository in repositories.values():
            _ready(repository)
        first = next(iter(repositories.values()))
        candidates: list[tuple[str, Callable[[], object]]] = [
            ("managed target, resolve (no gate; the floor)", lambda: first.resolve(MANAGED)),
        ]
        for name, repository in repositories.items():
            live = functools.partial(repository.resolve_live, MANAGED)
            candidates.append((f"managed target, resolve_live ({name}: status + authorize)", live))
        candidates += [
            ("unmanaged target, resolve (no gate)", lambda: first.resolve(UNMANAGED)),
            (
                "unmanaged target, resolve_live (classified, no ledger)",
                lambda: first.resolve_live(UNMANAGED),
            ),
        ]
        stats = interleave(candidates, rounds=rounds, inner=inner)
        report("setup gate: warm in-process resolution, per call", stats)
        for repository in repositories.values():
            SetupManager(repository).ledger().close()


if __name__ == "__main__":
    main()
