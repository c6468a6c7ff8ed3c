"""The ``dispatcher`` process when its standard streams fail: never a traceback, a defined status.

Real ``dispatcher`` processes whose stdout or stderr is closed (``>&-``) or a
pipe whose reader is gone (``dispatcher names | head -1``), over every
subcommand family that writes to one of them, and an interrupted live call
(``^C``). The reference exit statuses are those of the same command with
working streams; a broken pipe on a stream the command writes to is 141
(128 + SIGPIPE, what a shell reports for ``yes | head -1``), except for
argparse's own help and usage messages (argparse ignores a failed write).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kits.mcp import CALLER, write_tools_repository

CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "famulus"
CONFIG = str(CORPUS / "officina.toml")
TARGET = "list-manager._rtx.interface.read-list"
BROKEN_PIPE = 141
INTERRUPTED = 130
#: argparse writes these and ignores a failed write: the status stays argparse's own.
ARGPARSE_WRITES = frozenset({"help", "subcommand-help", "usage-error"})

#: Invocations that write to stdout, to stderr, or to both; each with its usual status.
COMMANDS: dict[str, tuple[str, ...]] = {
    "names": ("names", "--config", CONFIG),
    "describe": ("describe", "--config", CONFIG, "get-weather._rtx.interface.scripts-weather"),
    "dry-run": ("--config", CONFIG, "--caller-skill", "daily-plan", "--dry-run", TARGET, "/t"),
    "refusal": ("--config", CONFIG, "--caller-skill", "daily-plan", "--dry-run", "x.interface.y"),
    "refusal-json": (
        "--config",
        CONFIG,
        "--caller-skill",
        "daily-plan",
        "--error-format",
        "json",
        "--dry-run",
        "x.interface.y",
    ),
    "golden-unreadable": ("names", "--config", CONFIG, "--golden", "/nonexistent/golden"),
    "help": ("--help",),
    "subcommand-help": ("names", "--help"),
    "usage-error": ("--config", CONFIG, TARGET),
    "bad-target": ("--config", CONFIG, "--caller-skill", "daily-plan", "no-interface"),
}


def _run(
    args: tuple[str, ...], *, close: tuple[int, ...] = (), broken: tuple[int, ...] = ()
) -> tuple[int, str, str]:
    """Run the command; ``close``: descriptors closed, ``broken``: pipes without a reader.

    Returns the exit status and what stdout and stderr received (when they were pipes).
    """
    pipes: dict[int, tuple[int, int]] = {}
    for fd in broken:
        read_end, write_end = os.pipe()
        os.close(read_end)  # the reader is gone before the dispatcher writes anything
        pipes[fd] = (-1, write_end)
    captured: dict[int, int] = {}
    for fd in (1, 2):
        if fd not in broken and fd not in close:
            read_end, write_end = os.pipe()
            pipes[fd] = (read_end, write_end)
            captured[fd] = read_end

    def preexec() -> None:
        for fd in close:
            os.close(fd)

    with subprocess.Popen(
        [sys.executable, "-m", "boring_dispatch", *args],
        stdin=subprocess.DEVNULL,
        stdout=pipes[1][1] if 1 in pipes else None,
        stderr=pipes[2][1] if 2 in pipes else None,
        preexec_fn=preexec if close else None,  # noqa: PLW1509 - closes descriptors only
    ) as process:
        for _, write_end in pipes.values():
            os.close(write_end)
        texts = {}
        for fd, read_end in captured.items():
            with open(read_end, "rb") as stream:  # noqa: PTH123 - a pipe, by descriptor
                texts[fd] = stream.read().decode("utf-8", "replace")
        status = process.wait(timeout=60)
    return status, texts.get(1, ""), texts.get(2, "")


@pytest.fixture(scope="module")
def usual() -> dict[str, tuple[int, str, str]]:
    """Each command with working streams: its status, and which streams it writes."""
    return {name: _run(args) for name, args in COMMANDS.items()}


def test_the_usual_runs_write_what_the_cases_below_rely_on(
    usual: dict[str, tuple[int, str, str]],
) -> None:
    assert usual["names"][0] == 0
    assert usual["names"][1]
    assert usual["refusal"][0] == 2
    assert usual["refusal"][2].startswith("error: ")
    assert usual["help"][0] == 0
    assert usual["usage-error"][0] == 2
    for _, _, stderr in usual.values():
        assert "Traceback" not in stderr


@pytest.mark.parametrize("name", sorted(COMMANDS))
@pytest.mark.parametrize("stream", [1, 2])
def test_a_stream_whose_reader_is_gone_is_no_traceback_and_status_141(
    usual: dict[str, tuple[int, str, str]], name: str, stream: int
) -> None:
    status, _, stderr = _run(COMMANDS[name], broken=(stream,))
    usual_status, usual_out, usual_err = usual[name]
    wrote = usual_out if stream == 1 else usual_err
    assert "Traceback" not in stderr
    assert "Exception ignored" not in stderr
    expected = BROKEN_PIPE if wrote and name not in ARGPARSE_WRITES else usual_status
    assert status == expected, stderr


@pytest.mark.parametrize("name", sorted(COMMANDS))
@pytest.mark.parametrize("close", [(1,), (2,), (1, 2), (0, 1, 2)])
def test_a_closed_stream_is_like_dev_null(
    usual: dict[str, tuple[int, str, str]], name: str, close: tuple[int, ...]
) -> None:
    status, _, stderr = _run(COMMANDS[name], close=close)
    assert "Traceback" not in stderr
    assert status == usual[name][0], stderr


@pytest.fixture
def tools_config(tmp_path: Path) -> Path:
    return write_tools_repository(tmp_path / "repo")


def _wait_for(predicate: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 30
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


@pytest.mark.parametrize("audit", [False, True])
def test_an_interrupted_live_call_ends_its_gateway_without_a_traceback(
    tools_config: Path, tmp_path: Path, audit: bool
) -> None:
    marker = tmp_path / "marker"
    extra = ("--audit", str(tmp_path / "audit.jsonl")) if audit else ()
    env = dict(os.environ, BORING_DISPATCH_LEDGER=str(tmp_path / "ledger.sqlite3"))
    with subprocess.Popen(
        [
            sys.executable,
            "-m",
            "boring_dispatch",
            "--config",
            str(tools_config),
            "--caller-skill",
            CALLER,
            *extra,
            "--timeout",
            "60",
            "tools.interface.sleep",
            str(marker),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    ) as process:
        _wait_for(lambda: marker.exists() and bool(marker.read_text()))
        gateway = int(marker.read_text().split()[0])
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
    assert "Traceback" not in stderr.decode()
    assert "KeyboardInterrupt" not in stderr.decode()
    assert process.returncode == INTERRUPTED
    _wait_for(lambda: not Path(f"/proc/{gateway}").exists())


@pytest.mark.parametrize("encoding", ["ascii", "latin-1", "cp1252"])
def test_a_stdout_that_cannot_encode_the_text_gets_escapes_not_a_traceback(
    tmp_path: Path, encoding: str
) -> None:
    """``PYTHONIOENCODING`` (or a non-UTF-8 locale) that cannot encode a blueprint's text."""
    config = write_tools_repository(tmp_path / "repo")
    source = config.parent / "skills" / "tools" / "main.yaml"
    head = "  tools.source.main.interface.echo:\n    version: 1\n"
    text = source.read_text()
    assert head in text
    source.write_text(text.replace(head, f'{head}    description: "café 日本 ✓"\n', 1))
    argv = ["describe", "--config", str(config), "tools.interface.echo"]
    done = subprocess.run(
        [sys.executable, "-m", "boring_dispatch", *argv],
        capture_output=True,
        timeout=60,
        check=False,
        env=dict(os.environ, PYTHONIOENCODING=encoding),
    )
    assert done.returncode == 0, done.stderr
    assert b"Traceback" not in done.stderr
    assert b"Description: caf" in done.stdout
