"""What the ``dispatcher`` command prints about a path it was given or met: never raw.

A path is chosen by whoever names or lays out the files: the operator's
``--config``, a checkout's directory names, a golden file's name. In a message
on a terminal, a newline in it forges a second ``error:`` line, an ANSI
sequence (7-bit ESC or 8-bit CSI) steers the terminal, a bidi override
reverses what a reader sees. Every such path is quoted with
``boring_dispatch._quote.shown`` like any other untrusted value; a family of
hostile path components goes through every message that names a path, in
the text and the JSON error format.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from boring_dispatch.surfaces.cli.main import main
from kits.mcp import CALLER, write_tools_repository
from kits.sessions import HostCall, Turn, write_codex

#: Path components that steer a terminal or a reader (each a valid file name).
HOSTILE = (
    "\x1b[31mred",
    "line\nerror: forged",
    "\u202eevil",
    "x\u2028y",
    "bell\x07",
    "csi\x9b31m",
    "zero\u200bwidth",
    "\r\rcarriage",
)
TARGET = "tools.interface.echo"


def _raw(text: str) -> list[str]:
    """The characters of ``text`` a terminal or a reader would not show as themselves."""
    import unicodedata

    return [
        char
        for char in text
        if char != "\n" and unicodedata.category(char) in {"Cc", "Cf", "Zl", "Zp", "Cs"}
    ]


def _check(capsys: pytest.CaptureFixture[str], status: int, expected: int) -> None:
    out, err = capsys.readouterr()
    assert status == expected, err
    for text in (out, err):
        assert _raw(text) == [], text
    assert "forged" not in "".join(line for line in err.splitlines() if line.startswith("error: f"))
    error_lines = [line for line in err.splitlines() if line.startswith(("error:", "{"))]
    assert len(error_lines) <= 1, err
    for line in error_lines:
        if line.startswith("{"):
            json.loads(line)


def _repository(tmp_path: Path, component: str) -> Path:
    return write_tools_repository(tmp_path / component / "repo")


Breaker = Callable[[Path], None]


def _world_writable_config(config: Path) -> None:
    config.chmod(0o666)


def _world_writable_blueprint(config: Path) -> None:
    next(config.parent.joinpath("skills").rglob("blueprint.yaml")).chmod(0o666)


def _malformed_blueprint(config: Path) -> None:
    next(config.parent.joinpath("skills").rglob("blueprint.yaml")).write_text("a: [\n")


def _missing_root(config: Path) -> None:
    config.write_text(config.read_text().replace("roots = [", 'roots = ["gone", ', 1))


BREAKERS: dict[str, Breaker] = {
    "config-world-writable": _world_writable_config,
    "blueprint-world-writable": _world_writable_blueprint,
    "blueprint-malformed": _malformed_blueprint,
    "root-missing": _missing_root,
}


@pytest.fixture(autouse=True)
def _ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BORING_DISPATCH_LEDGER", str(tmp_path / "ledger.sqlite3"))


@pytest.mark.parametrize("error_format", ["text", "json"])
@pytest.mark.parametrize("component", HOSTILE)
@pytest.mark.parametrize("breaker", sorted(BREAKERS))
@pytest.mark.parametrize("command", ["names", "describe", "dry-run"])
def test_a_repository_path_in_a_refusal_is_quoted(  # noqa: PLR0917 - a family
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    command: str,
    breaker: str,
    component: str,
    error_format: str,
) -> None:
    config = _repository(tmp_path, component)
    BREAKERS[breaker](config)
    common = ("--config", str(config), "--error-format", error_format)
    argv = {
        "names": ("names", *common),
        "describe": ("describe", *common, TARGET),
        "dry-run": (*common, "--caller-skill", CALLER, "--dry-run", TARGET),
    }[command]
    status = main(list(argv))
    if status == 0:  # this breakage is not on this command's path: nothing to check
        capsys.readouterr()
        return
    _check(capsys, status, 2)


@pytest.mark.parametrize("component", HOSTILE)
def test_a_missing_configuration_path_is_quoted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, component: str
) -> None:
    config = tmp_path / component / "officina.toml"
    _check(capsys, main(["--config", str(config), "--caller-skill", CALLER, TARGET]), 2)
    _check(capsys, main(["names", "--config", str(config)]), 2)


@pytest.mark.parametrize("component", HOSTILE)
def test_a_golden_file_path_in_a_difference_is_quoted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, component: str
) -> None:
    config = _repository(tmp_path, "plain")
    golden = tmp_path / f"golden{component}"
    golden.write_text("tools.interface.nothing\n")
    _check(capsys, main(["names", "--config", str(config), "--golden", str(golden)]), 1)


@pytest.mark.parametrize("component", HOSTILE)
def test_a_serve_host_is_quoted_and_never_a_traceback(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, component: str
) -> None:
    config = _repository(tmp_path, "plain")
    argv = ["serve", "--config", str(config), "--allow-remote", "--host", component]
    _check(capsys, main([*argv, "--port", "1"]), 2)


def _codex_session(path: Path) -> Path:
    wire = {"content": [{"type": "text", "text": ""}], "isError": False}
    call = HostCall("call_1", "invoke_security_0", {}, wire, 1_780_000_001.0, 1_780_000_001.5)
    return write_codex(path, [Turn(1_780_000_000.0, [call], 1_780_000_002.0)])


#: Paths the lookup itself fails on, below a temporary directory.
UNLOOKABLE = (
    "z" * 300,  # ENAMETOOLONG (one component)
    "a/" * 3000 + "s.jsonl",  # ENAMETOOLONG (the whole path)
    "file.jsonl/below",  # ENOTDIR
    "loop/s.jsonl",  # ELOOP
)


@pytest.mark.parametrize("unlookable", UNLOOKABLE)
def test_a_timeline_path_that_cannot_be_looked_up_is_never_a_traceback(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, unlookable: str
) -> None:
    session = _codex_session(tmp_path / "file.jsonl")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    # The session: a file that cannot be read is exit 2 (docs/timeline.md).
    _check(capsys, main(["timeline", str(tmp_path / unlookable), "--logs", str(tmp_path)]), 2)
    # The logs directory: not there, so the call is not joined (exit 1), with a note.
    _check(capsys, main(["timeline", str(session), "--logs", str(tmp_path / unlookable)]), 1)


def test_the_hostile_components_are_file_names_here(tmp_path: Path) -> None:
    for component in HOSTILE:
        (tmp_path / component).mkdir()
        shutil.rmtree(tmp_path / component)
    assert os.sep not in "".join(HOSTILE)


def _unreadable(tmp_path: Path, kind: str) -> Path:
    """A file the CLI cannot read: missing, a directory, a FIFO, world-writable, bad text."""
    path = tmp_path / f"file-{kind}"
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "world-writable":
        path.write_text("x\n")
        path.chmod(0o666)
    elif kind == "bad-character":
        path.write_text("a\u202eb\n")
    return path


UNREADABLE = ("missing", "directory", "fifo", "world-writable", "bad-character")


@pytest.mark.parametrize("kind", UNREADABLE)
@pytest.mark.parametrize("command", ["names", "deploy", "serve-token"])
def test_an_unreadable_file_is_one_json_line_with_the_json_error_format(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str, kind: str
) -> None:
    if command == "serve-token" and kind == "bad-character":
        pytest.skip("a readable token file: its first line is checked as a token")
    path = str(_unreadable(tmp_path, kind))
    config = str(_repository(tmp_path, "plain"))
    table = "kits.fixture_tables:TABLE"
    json_format = ("--error-format", "json")
    argv = {
        "names": ["names", "--config", config, *json_format, "--golden", path],
        "deploy": [
            "deploy",
            "--registry",
            table,
            "--golden",
            path,
            "--surface",
            "s",
            "--database",
            f"sqlite:///{tmp_path}/d.db",
            *json_format,
        ],
        "serve-token": ["serve", "--config", config, *json_format, "--token-file", path],
    }[command]
    status = main(argv)
    _, err = capsys.readouterr()
    assert status == 2, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    payload = json.loads(lines[0])
    assert payload["code"] == "unreadable_file"
    assert payload["schema_version"] == 1


def _strict(value: object) -> None:
    """Every string in ``value`` is valid Unicode (a strict JSON reader accepts it)."""
    if isinstance(value, str):
        value.encode("utf-8")
    elif isinstance(value, dict):
        for key, item in value.items():
            _strict(key)
            _strict(item)
    elif isinstance(value, list):
        for item in value:
            _strict(item)


NON_UTF8 = (b"ho\xffst", b"\xc3", b"tools\xed\xa0\x80", b"\x80" * 3)


@pytest.mark.parametrize("raw", NON_UTF8)
@pytest.mark.parametrize("where", ["caller", "target", "config"])
def test_a_non_utf8_argument_gives_a_json_error_line_every_reader_can_parse(
    tmp_path: Path, where: str, raw: bytes
) -> None:
    config = os.fsencode(_repository(tmp_path, "plain"))
    caller, target = b"host", b"tools.interface.echo"
    if where == "caller":
        caller = raw
    elif where == "target":
        target = b"tools.interface." + raw
    else:
        config = os.fsencode(tmp_path) + b"/" + raw + b"/officina.toml"
    argv = [b"--config", config, b"--caller-skill", caller, b"--error-format", b"json"]
    done = subprocess.run(
        [os.fsencode(sys.executable), b"-m", b"boring_dispatch", *argv, b"--dry-run", target],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.splitlines()
    _strict(json.loads(line))


#: Each subcommand with options that parse, before the hostile extra token.
PARSED = {
    "invocation": ["--caller-skill", CALLER, "--config", "/x/officina.toml"],
    "names": ["names", "--config", "/x/officina.toml"],
    "replay": ["replay", "--config", "/x/officina.toml", "trace.jsonl"],
    "describe": ["describe", "--config", "/x/officina.toml", TARGET],
    "mcp": ["mcp", "--config", "/x/officina.toml"],
    "deploy": ["deploy", "--registry", "a:b", "--golden", "g", "--surface", "s"],
    "serve": ["serve", "--config", "/x/officina.toml"],
    "timeline": ["timeline", "session.jsonl"],
    "setup": ["setup", "status", "--config", "/x/officina.toml"],
}


@pytest.mark.parametrize("component", HOSTILE)
@pytest.mark.parametrize("command", sorted(PARSED))
@pytest.mark.parametrize("shape", ["extra", "option", "option-value"])
def test_a_usage_error_never_echoes_an_argument_raw(
    capsys: pytest.CaptureFixture[str], command: str, component: str, shape: str
) -> None:
    """argparse quotes a bad choice, but echoes unrecognized arguments and unknown
    options as they are: a launcher that passes a model's words would print them."""
    argv = list(PARSED[command])
    if shape == "extra":
        argv += ["--unknown-flag", component]
    elif shape == "option":
        argv += [f"--{component}"]
    else:
        argv += [f"--x{component}=1"]
    if command == "invocation":
        argv += [TARGET] if shape != "extra" else []
    try:
        status = main(argv)
    except SystemExit as exited:  # argparse's usage error
        status = exited.code  # type: ignore[assignment]
    assert status == 2
    _, err = capsys.readouterr()
    assert _raw(err) == [], err
    assert not any(line.startswith("error: forged") for line in err.splitlines()), err
