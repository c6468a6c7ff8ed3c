"""A dry run shows the child command the live call would start, with the options given.

The dry-run payload's ``argv`` is "the full child argv" (ARCHITECTURE 3.2): the
``--limits`` token it holds must be the one a live call with the same options
passes, and an option the live call refuses (``--run-as`` naming no user) is
refused by the dry run too, before anything is resolved.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from boring_dispatch.process._argv import _limits_token
from boring_dispatch.records import ExecLimits
from boring_dispatch.surfaces.cli.main import main

CONFIG = Path(__file__).resolve().parents[2] / "corpus" / "famulus" / "officina.toml"
ROUTE = ("--caller-skill", "list-manager")
TARGET = ("list-manager._rtx.interface.read-list", "/tmp/x.yaml")


def _limits_of(argv: list[str]) -> str:
    tokens = [token for token in argv if token.startswith("--limits=")]
    assert len(tokens) == 1, argv
    return tokens[0].removeprefix("--limits=")


@pytest.mark.parametrize("timeout", ["0.5", "5", "59.25", "61", "604800", "1e2"])
def test_the_dry_run_argv_carries_the_requested_timeout(
    timeout: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--config", str(CONFIG), *ROUTE, "--timeout", timeout, "--dry-run", *TARGET]
    assert main(argv) == 0
    payload = json.loads(capsys.readouterr().out)
    expected = _limits_token(ExecLimits(timeout_s=float(timeout)))
    assert _limits_of(payload["argv"]) == expected


def test_without_a_timeout_the_dry_run_argv_carries_the_default(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--config", str(CONFIG), *ROUTE, "--dry-run", *TARGET]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert _limits_of(payload["argv"]) == _limits_token(ExecLimits())


@pytest.mark.parametrize("run_as", ["no-such-user-here", "root:no-such-group-here", "a:", ":b"])
def test_a_run_as_the_live_call_refuses_is_refused_by_the_dry_run(
    run_as: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--config", str(CONFIG), *ROUTE, "--error-format", "json", "--run-as", run_as]
    assert main([*argv, "--dry-run", *TARGET]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert json.loads(captured.err)["code"] == "dispatcher.runtime_misconfigured"
