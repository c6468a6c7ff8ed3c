"""The demo's last part: a real MCP session written as a Codex rollout, then its timeline."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from kits.plain_env import plain_environment

REPO = Path(__file__).resolve().parents[2]


def test_the_demo_prints_the_timeline_of_its_own_session() -> None:
    done = subprocess.run(
        [sys.executable, "examples/demo_timeline.py"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        cwd=REPO,
        env=plain_environment(),
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert re.fullmatch(
        r"session \S+ \(codex\): 3 call\(s\) of dispatch, 3 joined to spans", lines[0]
    )
    rows = lines[2:5]
    assert [row.split()[0] for row in rows] == ["1", "2", "3"]
    assert all(re.search(r"\b[0-9a-f]{8}\b", row) for row in rows)  # each call's trace id
    assert rows[0].rstrip().endswith("ok")
    assert rows[2].rstrip().endswith("dispatcher.unauthorized_caller")
    assert lines[5].startswith("times in ms;")
