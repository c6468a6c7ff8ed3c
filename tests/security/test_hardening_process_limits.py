"""Out-of-range limits are a clear, structured refusal on every surface, never a traceback.

``dispatcher --timeout 1e308`` used to end in an ``OverflowError`` traceback
(the kernel timer and ``poll`` cannot take such numbers). The rule now: a
timeout is a number of seconds in (0, 604800]; every byte or count limit is
a whole number in range. The CLI (both of its parsers), ``dispatcher mcp``,
``serve()`` and ``ExecLimits`` given to the Python API all apply it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from boring_dispatch import Repository
from boring_dispatch._limits import MAX_TIMEOUT_S
from boring_dispatch.errors import RuntimeMisconfigured
from boring_dispatch.records import ExecLimits, RouteRequest
from boring_dispatch.surfaces.cli import main as cli
from boring_dispatch.surfaces.mcp.server import serve

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "examples" / "repository" / "officina.toml"
SCRIPT = Path(sys.executable).with_name("dispatcher")
CALL = ("--caller-skill", "notes", "notes._rtx.interface.list-notes")
ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}

BAD_SECONDS = (
    "1e308",
    "1e300",
    "1e20",
    "1e10",
    "604800.001",
    "1e309",
    "inf",
    "-inf",
    "Infinity",
    "nan",
    "NaN",
    "-1",
    "-0.5",
    "0",
    "0.0",
    "-0",
    "soon",
    "",
    "0x10",
    "1,5",
    "5s",
    "1" * 400,
)


def _run(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *args],
        input=stdin.decode(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=ENV,
    )


def _assert_usage_refusal(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert "Error:" not in done.stderr  # no exception class names either
    assert "--timeout" in done.stderr
    # argparse reads a separate "-1" as an option: then the value is missing, not refused.
    assert "seconds" in done.stderr or "expected one argument" in done.stderr
    assert done.stdout == ""


def _in_process(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """The same refusal from the CLI's ``main`` in this process (fast: the whole family)."""
    with pytest.raises(SystemExit) as caught:
        cli.main(argv)
    captured = capsys.readouterr()
    code = caught.value.code
    assert isinstance(code, int)
    _assert_usage_refusal(subprocess.CompletedProcess(argv, code, captured.out, captured.err))


@pytest.mark.parametrize("seconds", BAD_SECONDS)
@pytest.mark.parametrize("spelling", ["separate", "equals"])
def test_cli_timeout_out_of_range_is_a_usage_error(
    seconds: str, spelling: str, capsys: pytest.CaptureFixture[str]
) -> None:
    option = ["--timeout", seconds] if spelling == "separate" else [f"--timeout={seconds}"]
    _in_process(["--config", str(CONFIG), *option, *CALL], capsys)


@pytest.mark.parametrize("seconds", BAD_SECONDS)
def test_mcp_timeout_out_of_range_is_a_usage_error(
    seconds: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _in_process(["mcp", "--config", str(CONFIG), f"--timeout={seconds}"], capsys)


@pytest.mark.parametrize("seconds", ["1e308", "inf", "nan", "-1", "0", "soon"])
@pytest.mark.parametrize("surface", ["invoke", "mcp"])
def test_the_installed_script_refuses_out_of_range_timeouts(seconds: str, surface: str) -> None:
    if surface == "invoke":
        _assert_usage_refusal(_run("--config", str(CONFIG), f"--timeout={seconds}", *CALL))
    else:
        _assert_usage_refusal(_run("mcp", "--config", str(CONFIG), f"--timeout={seconds}"))


@pytest.mark.parametrize(
    ("seconds", "status"),
    [("604800", 0), ("6.048e5", 0), ("30", 0), ("0.001", 124), ("1e-3", 124)],
)
def test_cli_timeouts_in_range_run_the_gateway(seconds: str, status: int) -> None:
    done = _run("--config", str(CONFIG), "--timeout", seconds, *CALL)
    assert done.returncode == status, done.stderr
    assert "Traceback" not in done.stderr


def test_the_largest_timeout_serves_over_mcp_and_ends_cleanly() -> None:
    done = _run("mcp", "--config", str(CONFIG), f"--timeout={MAX_TIMEOUT_S:g}")
    assert done.returncode == 0, done.stderr  # stdin at EOF: the session ends
    assert "Traceback" not in done.stderr


BAD_LIMITS = [
    pytest.param({"timeout_s": 1e308}, id="timeout-huge"),
    pytest.param({"timeout_s": MAX_TIMEOUT_S * 2}, id="timeout-over-max"),
    pytest.param({"timeout_s": float("inf")}, id="timeout-inf"),
    pytest.param({"timeout_s": float("nan")}, id="timeout-nan"),
    pytest.param({"timeout_s": -1.0}, id="timeout-negative"),
    pytest.param({"timeout_s": 0}, id="timeout-zero"),
    pytest.param({"timeout_s": True}, id="timeout-bool"),
    pytest.param({"timeout_s": "5"}, id="timeout-text"),
    pytest.param({"timeout_s": None}, id="timeout-none"),
    pytest.param({"timeout_s": 10**400}, id="timeout-huge-int"),
    pytest.param({"max_output_bytes": 10**30}, id="output-huge"),
    pytest.param({"max_output_bytes": -1}, id="output-negative"),
    pytest.param({"max_output_bytes": 1.5}, id="output-float"),
    pytest.param({"max_stdin_bytes": 2**63}, id="stdin-huge"),
    pytest.param({"max_open_files": 10**30}, id="nofile-huge"),
    pytest.param({"max_cpu_seconds": 2**64}, id="cpu-huge"),
    pytest.param({"max_file_bytes": float("inf")}, id="fsize-inf"),
    pytest.param({"max_memory_bytes": -5}, id="as-negative"),
    pytest.param({"max_memory_bytes": False}, id="as-bool"),
    pytest.param({"run_as_uid": 65534}, id="uid-without-gid"),
    pytest.param({"run_as_uid": -1, "run_as_gid": 0}, id="uid-negative"),
    pytest.param({"run_as_uid": 2**32 - 1, "run_as_gid": 0}, id="uid-unchanged-marker"),
    pytest.param({"run_as_uid": "nobody", "run_as_gid": 0}, id="uid-name"),
]


@pytest.mark.parametrize("fields", BAD_LIMITS)
@pytest.mark.parametrize("path", ["invoke", "streaming"])
def test_python_api_limits_out_of_range_are_refused_before_any_launch(
    fields: dict[str, object], path: str
) -> None:
    limits = ExecLimits(**fields)  # type: ignore[arg-type]
    repository = Repository.open(CONFIG)
    request = RouteRequest(caller="notes", target="notes._rtx.interface.list-notes")
    route = repository.resolve(request)

    def launch() -> object:
        if path == "invoke":
            return repository.invoke(request, limits=limits)
        return repository.run_streaming(route, stdin=None, limits=limits)

    with pytest.raises(RuntimeMisconfigured) as caught:
        launch()
    payload = caught.value.to_dict()
    assert payload["code"] == "dispatcher.runtime_misconfigured"
    for given in fields.values():
        if isinstance(given, int | float) and not isinstance(given, bool) and abs(given) > 10:
            assert str(given) not in str(payload["message"])
    json.dumps(payload)


@pytest.mark.parametrize("seconds", [1e308, float("inf"), float("nan"), -1.0, 0.0])
def test_serve_refuses_an_out_of_range_timeout_before_the_session(seconds: float) -> None:
    with pytest.raises(RuntimeMisconfigured):
        serve(config=str(CONFIG), registry=None, timeout_s=seconds)


def test_the_python_api_accepts_the_largest_values() -> None:
    limits = ExecLimits(timeout_s=MAX_TIMEOUT_S, max_open_files=1 << 40, max_file_bytes=1 << 62)
    request = RouteRequest(caller="notes", target="notes._rtx.interface.list-notes")
    result = Repository.open(CONFIG).invoke(request, limits=limits)
    assert result.ok, result.stderr
