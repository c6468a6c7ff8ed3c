"""``dispatcher timeline --out FILE``: the report goes to a regular file, never through a link.

An operator writes the report to a predictable name (``/tmp/timeline.html``),
often as root. A symlink planted at that name would make the dispatcher
overwrite the file it points to; a FIFO would block it forever. The output
file is treated like the dispatcher's other files: a symlink at its place is
refused, and so is anything that is not a regular file (exit 2, one error
line, the target untouched); a regular file is replaced.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from boring_dispatch.surfaces.cli.main import main
from kits.sessions import HostCall, Turn, write_codex

VICTIM_TEXT = "precious\n"


def _session(path: Path) -> Path:
    wire = {"content": [{"type": "text", "text": ""}], "isError": False}
    call = HostCall("call_1", "invoke_security_0", {}, wire, 1_780_000_001.0, 1_780_000_001.5)
    return write_codex(path, [Turn(1_780_000_000.0, [call], 1_780_000_002.0)])


def _symlink_to_file(out: Path, victim: Path) -> None:
    out.symlink_to(victim)


def _dangling_symlink(out: Path, victim: Path) -> None:
    victim.unlink()
    out.symlink_to(victim)


def _symlinked_fifo(out: Path, victim: Path) -> None:
    fifo = out.parent / "fifo"
    os.mkfifo(fifo)
    out.symlink_to(fifo)


def _fifo(out: Path, victim: Path) -> None:
    os.mkfifo(out)


def _directory(out: Path, victim: Path) -> None:
    out.mkdir()


def _hard_link(out: Path, victim: Path) -> None:
    os.link(victim, out)


REFUSED: dict[str, Callable[[Path, Path], None]] = {
    "symlink-to-file": _symlink_to_file,
    "dangling-symlink": _dangling_symlink,
    "symlink-to-fifo": _symlinked_fifo,
    "fifo": _fifo,
    "directory": _directory,
    "hard-link": _hard_link,
}


@pytest.mark.parametrize("format_", ["text", "json", "html"])
@pytest.mark.parametrize("kind", sorted(REFUSED))
def test_an_output_path_that_is_not_a_plain_file_of_its_own_is_refused(
    tmp_path: Path, kind: str, format_: str
) -> None:
    session = _session(tmp_path / "session.jsonl")
    victim = tmp_path / "victim"
    victim.write_text(VICTIM_TEXT)
    out = tmp_path / "out" / "report"
    out.parent.mkdir()
    REFUSED[kind](out, victim)
    argv = ["timeline", str(session), "--logs", str(tmp_path / "none"), "--format", format_]
    # A subprocess with a bounded wait: a FIFO without a reader would block the writer.
    done = subprocess.run(
        [sys.executable, "-m", "boring_dispatch", *argv, "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    err = done.stderr
    assert done.returncode == 2, err
    assert err.startswith("error: cannot write the output file"), err
    assert "Traceback" not in err
    if victim.exists():
        assert victim.read_text() == VICTIM_TEXT


def test_a_regular_output_file_is_replaced(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    session = _session(tmp_path / "session.jsonl")
    out = tmp_path / "report.json"
    out.write_text("x" * 100_000)
    status = main(
        [
            "timeline",
            str(session),
            "--logs",
            str(tmp_path / "none"),
            "--format",
            "json",
            "--out",
            str(out),
        ]
    )
    capsys.readouterr()
    assert status == 1  # no spans to join: the report is still written
    assert out.read_text().startswith("{")
    assert out.read_text().rstrip().endswith("}")
