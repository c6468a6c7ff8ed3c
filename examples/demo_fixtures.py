"""`make demo`, part 4: record -> review -> replay in CI -> deploy, on the support table.

Real calls to ``examples.support_and_billing.support:SUPPORT`` are recorded as
a fixture file and a trace; the trace is replayed against the fixture world
with the real ``dispatcher replay --fixtures`` (no handler runs); a changed
fixture fails that check; the reviewed golden file is deployed to a SQLite
database with ``dispatcher deploy`` and the deployed table is loaded back.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = "examples.support_and_billing.support:SUPPORT"
GOLDEN = ROOT / "examples" / "support_and_billing" / "support.golden"
_WAIT_S = 60


def _dispatcher(*args: str) -> subprocess.CompletedProcess[str]:
    print("$ dispatcher " + " ".join(shlex.quote(a) for a in args))
    done = subprocess.run(
        [sys.executable, "-m", "boring_dispatch", *args],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=_WAIT_S,
        check=False,
    )
    for line in (done.stdout + done.stderr).splitlines():
        print(f"  {line}")
    print(f"  (exit {done.returncode})")
    return done


def _record(folder: Path) -> tuple[Path, Path]:
    from boring_dispatch import Registry, TraceRecorder
    from boring_dispatch.registry.fixture_files import FixtureRecorder
    from examples.support_and_billing.support import SUPPORT

    fixtures, trace = folder / "support.fixtures.jsonl", folder / "trace.jsonl"
    with FixtureRecorder(fixtures) as recorder, TraceRecorder(trace) as tracer:
        live = Registry(dict(SUPPORT.tools), name="support", sinks=[recorder, tracer])
        live.dispatch("get_job", {"job_id": 7})
        live.dispatch("get_job", {"job_id": 99})
        live.dispatch("lookup_invoice", {"invoice_id": "INV-1001"})
        live.dispatch("finish", {"answer": "Your boiler valve is scheduled."})
    return fixtures, trace


def main() -> int:
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory(prefix="demo-fixtures-") as name:
        folder = Path(name)
        fixtures, trace = _record(folder)
        print("Recorded 4 real calls. The fixture file, to review in git:")
        for line in fixtures.read_text().splitlines():
            print(f"  {line}")
        print("\nCI replays the trace in the fixture world (no handler runs):")
        ok = _dispatcher("replay", "--registry", SPEC, "--fixtures", str(fixtures), str(trace))
        print("\nSomeone edits a fixture; the same check now fails:")
        fixtures.write_text(
            fixtures.read_text().replace('"status":"scheduled"', '"status":"cancelled"')
        )
        broken = _dispatcher("replay", "--registry", SPEC, "--fixtures", str(fixtures), str(trace))
        print("\nDeploy the reviewed golden file as the surface's rows (SQLite):")
        database = f"sqlite://{folder}/tables.db"
        deployed = _dispatcher(
            "deploy",
            "--registry",
            SPEC,
            "--golden",
            str(GOLDEN),
            "--surface",
            "support",
            "--database",
            database,
            "--deployed-by",
            "demo",
        )
        from boring_dispatch.registry.deployed import load_deployed
        from examples.support_and_billing.support import SUPPORT

        table = load_deployed(SUPPORT, surface="support", database=database)
        print(f"Loaded back from the rows: {table.names()}")
    expected = (ok.returncode, broken.returncode, deployed.returncode) == (0, 1, 0)
    return 0 if expected else 1


if __name__ == "__main__":
    raise SystemExit(main())
