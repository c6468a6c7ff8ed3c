"""The example repository's managed skills: the demo's whole flow over MCP, as a process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_setup_demo_walks_from_refusal_to_the_resumed_call() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "demo_setup.py")],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert '"status": "setup_required"' in lines[1]
    assert "stdout: account: ok" in done.stdout
    assert lines[-1] == "  stdout: sent: hello"
    # The demo ran on a private copy: the example's vault holds no key.
    assert not (ROOT / "examples" / "repository" / "skills" / "vault" / "data" / "key.txt").exists()
