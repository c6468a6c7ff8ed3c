"""A live CLI call of a hello-world gateway, against two interpreter starts.

A live call starts two interpreters (the dispatcher, then the gateway's
runner), so the floor is ``python -I -c pass`` twice (PERFORMANCE.md: target
<= 1.5x that). Measured in the same run, interleaved: the floor, the live
call, its parent alone (the same call with ``--dry-run``) and its child alone
(the runner command the dry run prints, started directly).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _hello import CALLER, TARGET, write_hello_repository
from _timing import command, console_script, interleave, interpreter, report, verdict


def main(rounds: int = 21) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench-live-") as scratch:
        base = Path(scratch)
        config = write_hello_repository(base / "repo")
        # Spans of traced calls go to the scratch directory, not to the user's logs.
        env = {**os.environ, "ASSISTANT_LOGS": str(base / "logs")}
        dispatcher = [str(console_script("dispatcher")), "--config", str(config)]
        live = [*dispatcher, "--caller-skill", CALLER, TARGET]
        dry = [*dispatcher, "--caller-skill", CALLER, "--dry-run", TARGET]
        payload = json.loads(subprocess.run(dry, capture_output=True, check=True, env=env).stdout)
        child = [str(x) for x in payload["argv"]]
        stats = interleave(
            [
                ("python -I -c pass", command([str(interpreter()), "-I", "-c", "pass"])),
                ("dispatcher hello.interface.say (live)", command(live, env=env, expect=b"hello")),
                ("  parent alone: the same call with --dry-run", command(dry, env=env)),
                (
                    "  child alone: the runner command of the dry run",
                    command(child, cwd=Path(payload["cwd"]), env=env, expect=b"hello"),
                ),
            ],
            rounds=rounds,
            inner=1,
        )
    report("Live CLI call of a hello-world gateway (floor: python -I -c pass)", stats, "ms")
    floor_ms = stats[0].median * 1e3
    live_ms = stats[1].median * 1e3
    print(verdict("live call / (2 x python -I -c pass)", live_ms / (2 * floor_ms), 1.5, "x"))
    return {
        "live_ms": live_ms,
        "pass_ms": floor_ms,
        "parent_ms": stats[2].median * 1e3,
        "child_ms": stats[3].median * 1e3,
    }


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 21)
