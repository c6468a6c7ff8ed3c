"""``dispatcher replay --config``: does a replay without a flag re-run the trace's gateways?

The design's checklist (SECURITY.md F8, "Replay of a side-effecting tool"):
"dry-run by default; executing requires an explicit flag". A replay resolves
only; ``--live`` launches. (It used to launch every gateway of the trace: an
operator who replayed a trace to check it re-ran its payments and deletions.)
A Python table's replay needs ``--fixtures`` (a fixture world) or ``--live``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kits.mcp import CALLER, write_tools_repository


@pytest.mark.parametrize("form", ["argv", "projection"])
def test_a_replay_without_a_flag_launches_no_gateway(tmp_path: Path, form: str) -> None:
    config = write_tools_repository(tmp_path / "repo")
    line: dict[str, object] = {"caller": CALLER, "interface": "tools.interface.echo", "version": 1}
    if form == "argv":
        line |= {"argv": ["side-effect"], "stdin": None}
    else:
        line |= {"arguments": {"positionals": ["side-effect"], "options": {}, "stdin": None}}
    trace = tmp_path / "trace.jsonl"
    trace.write_text(json.dumps(line) + "\n")
    env = dict(os.environ, BORING_DISPATCH_LEDGER=str(tmp_path / "ledger.sqlite3"))
    done = subprocess.run(
        [sys.executable, "-m", "boring_dispatch", "replay", "--config", str(config), str(trace)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )
    (record,) = [json.loads(text) for text in done.stdout.splitlines()]
    assert "exit_code" not in record, record  # a launched gateway's result
    assert "command" in record, record  # the dry-run payload


_TABLE = """
from pathlib import Path

from boring_dispatch import Registry, Tool

def touch(name: str) -> dict[str, str]:
    Path(__file__).with_name("ran").write_text(name)
    return {{"touched": name}}

TABLE = Registry({{"touch": Tool(touch, description="Leave a file behind.")}})
"""


@pytest.mark.parametrize(
    ("flags", "runs"),
    [
        ((), False),
        (("--dry-run",), False),  # a table has no dry run: refused, not run
        (("--live", "--fixtures", "fixtures.jsonl"), False),
        (("--live",), True),
    ],
)
def test_a_tables_replay_runs_a_handler_only_with_live(
    tmp_path: Path, flags: tuple[str, ...], runs: bool
) -> None:
    (tmp_path / "side_table.py").write_text(_TABLE.format())
    (tmp_path / "fixtures.jsonl").write_text("")
    trace = tmp_path / "trace.jsonl"
    trace.write_text(json.dumps({"name": "touch", "args": {"name": "x"}}) + "\n")
    command = [sys.executable, "-m", "boring_dispatch", "replay", "--registry", "side_table:TABLE"]
    done = subprocess.run(
        [*command, *flags, str(trace)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (tmp_path / "ran").exists() is runs, done.stderr
    if runs:
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["ok"] is True
    else:
        assert done.returncode == 2, done.stderr
        assert done.stdout == ""
