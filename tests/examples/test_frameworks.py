"""The runnable framework examples (``examples/frameworks/``) run, offline, end to end."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CANARY = "tok-canary-4b1d9e"


@pytest.mark.parametrize("module", ["pydantic_ai_agent", "openai_agents_agent", "langgraph_agent"])
def test_the_example_runs_and_the_token_stays_out_of_the_history(module: str) -> None:
    env = {**os.environ, "BILLING_TOKEN": CANARY, "OPENAI_API_KEY": ""}
    done = subprocess.run(
        [sys.executable, "-m", f"examples.frameworks.{module}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "waiting for approval: ['refund']"
    assert lines[1] == "Invoice 7 is refunded."
    assert lines[2].startswith("the token is in no message")
    assert CANARY not in done.stdout + done.stderr
