"""``dispatcher --audit PATH``: one JSON-lines record per live CLI call, none for a dry run.

Real ``dispatcher`` processes against a real repository (kits.mcp); a
secret-looking value in the argv and on stdin never reaches the audit file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from boring_dispatch.observe.audit import read_records
from kits.mcp import CALLER, write_tools_repository

SECRET = "sk-live-CLI-AUDIT-CANARY-5a0c"


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return write_tools_repository(tmp_path / "repo")


def _dispatcher(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, BORING_DISPATCH_LEDGER=str(tmp_path / "ledger.sqlite3"))
    return subprocess.run(
        [sys.executable, "-m", "boring_dispatch", *args],
        input=SECRET,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )


@pytest.mark.parametrize(
    ("target", "extra", "outcome", "exit_code", "status"),
    [
        ("tools.interface.echo@1", (), "ok", 0, 0),
        ("tools.interface.fail", (), "exit_nonzero", 3, 3),
        ("tools.interface.sleep", ("--timeout", "1"), "timeout", None, 124),
        ("tools.interface.nope", (), "dispatcher.interface_not_found", None, None),
        ("tools.interface.private", (), "dispatcher.unauthorized_caller", None, None),
    ],
)
def test_a_live_call_appends_one_record_without_its_argv_or_stdin(  # noqa: PLR0917
    config: Path,
    tmp_path: Path,
    target: str,
    extra: tuple[str, ...],
    outcome: str,
    exit_code: int | None,
    status: int | None,
) -> None:
    audit = tmp_path / "audit.jsonl"
    marker = tmp_path / "marker"  # the sleep gateway's first argument
    options = ("--config", str(config), "--caller-skill", CALLER, "--stdin", "--audit", str(audit))
    done = _dispatcher(tmp_path, *options, *extra, target, str(marker), SECRET)
    if status is not None:
        assert done.returncode == status, done.stderr
    else:
        assert done.returncode != 0
    if outcome == "ok":
        assert SECRET in done.stdout  # the gateway saw it, and printed it
    found = read_records(audit)
    assert found.skipped == ()
    ((_, record),) = found.records
    assert record["outcome"] == outcome
    assert record["exit_code"] == exit_code
    assert record["caller"] == CALLER
    assert record["nested"] is False
    assert record["interface"] == target.partition("@")[0]
    trace_id = record["trace_id"]
    assert isinstance(trace_id, str)
    assert len(trace_id) == 32
    text = audit.read_text(encoding="ascii")
    assert SECRET not in text
    assert str(marker) not in text


def test_a_dry_run_writes_no_record_and_opens_no_file(config: Path, tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    options = ("--config", str(config), "--caller-skill", CALLER, "--audit", str(audit))
    done = _dispatcher(tmp_path, *options, "--dry-run", "tools.interface.echo", SECRET)
    assert done.returncode == 0, done.stderr
    assert not audit.exists()


def test_an_audit_path_that_is_refused_fails_closed_before_the_call(
    config: Path, tmp_path: Path
) -> None:
    target = tmp_path / "elsewhere.jsonl"
    target.write_bytes(b"")
    link = tmp_path / "audit.jsonl"
    link.symlink_to(target)
    marker = tmp_path / "marker"
    options = ("--config", str(config), "--caller-skill", CALLER, "--audit", str(link))
    done = _dispatcher(
        tmp_path, "--error-format", "json", *options, "tools.interface.sleep", str(marker)
    )
    assert done.returncode != 0
    assert "dispatcher.runtime_misconfigured" in done.stderr
    assert not marker.exists()
    assert target.read_bytes() == b""


def test_mcp_audit_applies_to_a_repository_only(tmp_path: Path) -> None:
    done = _dispatcher(
        tmp_path, "mcp", "--registry", "examples.support_and_billing:REGISTRY", "--audit", "/x"
    )
    assert done.returncode != 0
    assert "--audit records a repository (--config) only" in done.stderr


def _line(interface: str, *argv: str) -> str:
    call = {"caller": CALLER, "interface": interface, "version": None, "argv": list(argv)}
    return json.dumps(call)


def test_a_live_replay_appends_one_record_per_line_that_reaches_the_repository(
    config: Path, tmp_path: Path
) -> None:
    audit, trace = tmp_path / "audit.jsonl", tmp_path / "trace.jsonl"
    lines = [
        _line("tools.interface.echo", SECRET),
        _line("tools.interface.fail", SECRET),
        _line("tools.interface.nope", SECRET),
    ]
    trace.write_text("\n".join(lines) + "\n")
    done = _dispatcher(
        tmp_path, "replay", "--config", str(config), "--live", "--audit", str(audit), str(trace)
    )
    assert done.returncode == 0, done.stderr
    found = read_records(audit)
    assert found.skipped == ()
    outcomes = [(r["interface"], r["outcome"]) for _, r in found.records]
    assert outcomes == [
        ("tools.interface.echo", "ok"),
        ("tools.interface.fail", "exit_nonzero"),
        ("tools.interface.nope", "dispatcher.interface_not_found"),
    ]
    assert SECRET not in audit.read_text(encoding="ascii")


@pytest.mark.parametrize("dry", [(), ("--dry-run",)])
def test_a_dry_replay_with_an_audit_file_is_refused_and_opens_no_file(
    config: Path, tmp_path: Path, dry: tuple[str, ...]
) -> None:
    audit, trace = tmp_path / "audit.jsonl", tmp_path / "trace.jsonl"
    trace.write_text(_line("tools.interface.echo", SECRET) + "\n")
    options = ("replay", "--config", str(config), *dry, "--audit", str(audit))
    done = _dispatcher(tmp_path, *options, str(trace))
    assert done.returncode == 2, done.stderr
    assert "--audit records live calls only: add --live" in done.stderr
    assert not audit.exists()


@pytest.mark.parametrize("command", ["replay", "names", "describe"])
def test_audit_is_refused_where_nothing_of_a_repository_launches(
    tmp_path: Path, command: str
) -> None:
    trace = tmp_path / "trace.jsonl"
    trace.write_text("")
    spec = "examples.support_and_billing:REGISTRY"
    last = {"replay": str(trace), "names": None, "describe": "x"}[command]
    args = ["--registry", spec, "--audit", str(tmp_path / "a.jsonl")]
    done = _dispatcher(tmp_path, command, *args, *([last] if last else []))
    assert done.returncode != 0
    if command == "replay":
        assert "--audit records a repository (--config) only" in done.stderr
    else:  # not an option of these subcommands at all
        assert "unrecognized arguments: --audit" in done.stderr
    assert not (tmp_path / "a.jsonl").exists()


@pytest.mark.parametrize("extra_bytes", [1, 4096])
def test_a_live_call_refused_for_its_stdin_size_is_recorded(
    config: Path, tmp_path: Path, extra_bytes: int
) -> None:
    """Every live call that ends gets its record, a refusal before the launch included."""
    from boring_dispatch.records import ExecLimits

    audit = tmp_path / "audit.jsonl"
    env = dict(os.environ, BORING_DISPATCH_LEDGER=str(tmp_path / "ledger.sqlite3"))
    options = ("--config", str(config), "--caller-skill", CALLER, "--stdin", "--audit", str(audit))
    done = subprocess.run(
        [sys.executable, "-m", "boring_dispatch", *options, "tools.interface.echo"],
        input=b"x" * (ExecLimits().max_stdin_bytes + extra_bytes),
        capture_output=True,
        timeout=60,
        check=False,
        env=env,
    )
    assert done.returncode == 2, done.stderr
    found = read_records(audit)
    ((_, record),) = found.records
    assert record["outcome"] == "dispatcher.invalid_request"
    assert record["interface"] == "tools.interface.echo"
    assert record["caller"] == CALLER


def _symlink(path: Path) -> None:
    path.symlink_to(path.parent / "elsewhere")


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _directory(path: Path) -> None:
    path.mkdir()


def _linked(path: Path) -> None:
    path.write_text("")
    os.link(path, path.parent / "second-name")


def _missing_directory(path: Path) -> None:
    del path  # the path's directory does not exist


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (_symlink, "symlink"),
        (_fifo, "not a regular file"),
        (_directory, "not a regular file"),
        (_linked, "hard link"),
        (_missing_directory, "No such file or directory"),
    ],
)
def test_a_refused_audit_path_says_why(
    config: Path, tmp_path: Path, make: object, reason: str
) -> None:
    """The operator must learn what to fix: the refusal's reason (never the file's text)."""
    audit = tmp_path / "sub" / "audit.jsonl" if make is _missing_directory else tmp_path / "a"
    make(audit)  # type: ignore[operator]
    done = _dispatcher(
        tmp_path,
        "--config",
        str(config),
        "--caller-skill",
        CALLER,
        "--audit",
        str(audit),
        "tools.interface.echo",
    )
    assert done.returncode == 2, done.stderr
    assert reason in done.stderr, done.stderr
