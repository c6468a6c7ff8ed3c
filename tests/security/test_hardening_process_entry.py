"""The dispatcher's own process ignores ``PYTHONPATH`` and the other ``PYTHON*`` variables.

The gateway child always ran isolated, but the dispatcher honoured the
caller's environment: with a ``json.py`` on ``PYTHONPATH`` the installed
``dispatcher`` script ran it (and crashed). Now the entry point re-executes
itself with ``python -I`` when such a variable is set (and only then), and
drops the script's or the working directory from ``sys.path`` otherwise.
Real subprocesses run the installed console script and ``python -m
boring_dispatch`` with hostile directories on ``PYTHONPATH`` and as the
working directory; a registry module (operator code, run in the dispatcher
process on purpose) reports the interpreter's flags.

Not covered, because no code of ours can run before them (documented in
``boring_dispatch._entry``): what the interpreter imports first (``encodings``,
``site``'s ``.pth`` files, ``sitecustomize``; ``PYTHONHOME`` and
``PYTHONPLATLIBDIR`` act even earlier), what the console script's own
``import re`` loads (``re``, ``enum``, ``functools``, ``collections``,
``types``, ``operator``, ``keyword``, ``reprlib``, ``copyreg``), and for
``python -m`` what ``runpy`` loads (also ``contextlib``, ``warnings``,
``importlib.util``). After the re-execution none of them is in the
dispatcher's process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Final

import pytest

from kits.plain_env import plain_environment

ROOT: Final = Path(__file__).resolve().parents[2]
CONFIG: Final = ROOT / "examples" / "repository" / "officina.toml"
SCRIPT: Final = Path(sys.executable).with_name("dispatcher")
DRY_RUN: Final = (
    "--config",
    str(CONFIG),
    "--caller-skill",
    "notes",
    "--dry-run",
    "notes._rtx.interface.list-notes",
)
LIVE: Final = (
    "--config",
    str(CONFIG),
    "--caller-skill",
    "notes",
    "notes._rtx.interface.list-notes",
)
#: Modules the dispatcher imports after its entry point (stdlib and its dependencies).
HOSTILE_MODULES: Final = (
    "json",
    "typing",
    "__future__",
    "argparse",
    "pathlib",
    "subprocess",
    "threading",
    "signal",
    "selectors",
    "dataclasses",
    "inspect",
    "math",
    "base64",
    "tempfile",
    "shutil",
    "contextvars",
    "textwrap",
)
HOSTILE_PACKAGES: Final = (
    "yaml",
    "pydantic",
    "pydantic_core",
    "typing_extensions",
    "mcp",
    "anyio",
    "ctypes",
    "importlib_metadata",
)
PROBE_TABLE: Final = textwrap.dedent(
    """
    import json, os, sys
    from boring_dispatch import Registry, Tool


    def ping() -> dict:
        return {}


    flags = sys.flags
    report = {
        "isolated": flags.isolated,
        "ignore_environment": flags.ignore_environment,
        "inspect": flags.inspect,
        "optimize": flags.optimize,
        "dev_mode": flags.dev_mode,
        "verbose": flags.verbose,
        "int_max_str_digits": flags.int_max_str_digits,
        "warnoptions": sys.warnoptions,
        "pycache_prefix": sys.pycache_prefix,
        "path": sys.path,
    }
    with open(os.environ["PROBE_REPORT"], "w") as handle:
        json.dump(report, handle)
    TABLE = Registry({"ping": Tool(ping, description="Ping.")})
    """
)


def _base_env() -> dict[str, str]:
    # Unmeasured (coverage's start-up in a measured process imports modules of its own) and
    # without the developer's own PYTHON* variables.
    env = {k: v for k, v in plain_environment().items() if not k.startswith("PYTHON")}
    env["LANG"] = "C.UTF-8"
    return env


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A directory whose every module records that it ran and exits 97; the record file."""
    directory = tmp_path_factory.mktemp("hostile")
    record = directory.parent / f"{directory.name}-ran.txt"
    body = (
        "import sys\n"
        f"with open({str(record)!r}, 'a') as handle:\n"
        "    handle.write(__name__ + '\\n')\n"
        "raise SystemExit(97)\n"
    )
    for name in HOSTILE_MODULES:
        (directory / f"{name}.py").write_text(body, encoding="utf-8")
    for name in HOSTILE_PACKAGES:
        (directory / name).mkdir()
        (directory / name / "__init__.py").write_text(body, encoding="utf-8")
    return directory, record


def _run(
    argv: list[str], *, env: dict[str, str], cwd: Path, stdin: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        argv, input=stdin, capture_output=True, env=env, cwd=cwd, timeout=120, check=False
    )


def _launchers(how: str) -> list[str]:
    if how == "script":
        return [str(SCRIPT)]
    return [sys.executable, "-m", "boring_dispatch"]


COMMANDS: Final = {
    "dry-run": (DRY_RUN, 0),
    "live": (LIVE, 0),
    "mcp": (("mcp", "--config", str(CONFIG)), 0),
    "argparse": (("describe", "--config", str(CONFIG), "notes.interface.x"), 2),
}


@pytest.mark.parametrize(
    ("how", "where", "name"),
    [
        *(("script", "pythonpath", name) for name in COMMANDS),
        ("script", "cwd", "dry-run"),
        ("module", "pythonpath", "dry-run"),
        ("module", "pythonpath", "live"),
        ("module", "cwd", "dry-run"),
        ("module", "cwd", "mcp"),
        ("module", "both", "argparse"),
    ],
)
def test_no_module_on_a_hostile_path_runs_in_the_dispatcher(
    hostile: tuple[Path, Path], tmp_path: Path, how: str, where: str, name: str
) -> None:
    command, status = COMMANDS[name]
    directory, record = hostile
    record.unlink(missing_ok=True)
    env = _base_env()
    if where in ("pythonpath", "both"):
        env["PYTHONPATH"] = f"{directory}{os.pathsep}{directory}/pydantic"
    cwd = directory if where in ("cwd", "both") else tmp_path
    done = _run([*_launchers(how), *command], env=env, cwd=cwd)
    ran = record.read_text(encoding="utf-8") if record.exists() else ""
    assert ran == "", f"hostile modules ran: {ran.split()}"
    assert done.returncode == status, done.stderr.decode()
    assert b"Traceback" not in done.stderr
    if command == DRY_RUN:
        clean = _run([*_launchers(how), *command], env=_base_env(), cwd=tmp_path)
        route, expected = json.loads(done.stdout), json.loads(clean.stdout)
        assert route.pop("argv")[1:] == expected.pop("argv")[1:]  # the interpreter may differ
        assert route == expected


HAZARDS: Final = [
    ("PYTHONPATH", "{hostile}"),
    ("PYTHONINSPECT", "1"),
    ("PYTHONOPTIMIZE", "2"),
    ("PYTHONDEVMODE", "1"),
    ("PYTHONWARNINGS", "error"),
    ("PYTHONINTMAXSTRDIGITS", "0"),
    ("PYTHONVERBOSE", "1"),
    ("PYTHONPYCACHEPREFIX", "{tmp}/pycache"),
    ("PYTHONBREAKPOINT", "os.abort"),
    ("PYTHONMALLOC", "malloc"),
    ("PYTHONUSERBASE", "{tmp}/userbase"),
    ("PYTHONSOMETHINGNEW", "1"),
]


def _probe(how: str, env: dict[str, str], tmp_path: Path) -> dict[str, object]:
    table = tmp_path / "table"
    table.mkdir(exist_ok=True)
    (table / "probe_table.py").write_text(PROBE_TABLE, encoding="utf-8")
    report = tmp_path / "report.json"
    env = {**env, "PROBE_REPORT": str(report)}
    done = _run([*_launchers(how), "names", "--registry", "probe_table:TABLE"], env=env, cwd=table)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == b"ping\n"
    seen = json.loads(report.read_text(encoding="utf-8"))
    assert isinstance(seen, dict)
    return seen


@pytest.mark.parametrize(
    ("how", "name", "value"),
    [
        *(pytest.param("script", name, value, id=name) for name, value in HAZARDS),
        pytest.param("module", "PYTHONPATH", "{hostile}", id="module-PYTHONPATH"),
        pytest.param("module", "PYTHONINSPECT", "1", id="module-PYTHONINSPECT"),
    ],
)
def test_a_python_variable_that_changes_what_runs_is_ignored_by_the_dispatcher(
    hostile: tuple[Path, Path], tmp_path: Path, how: str, name: str, value: str
) -> None:
    given = value.format(hostile=hostile[0], tmp=tmp_path)
    seen = _probe(how, {**_base_env(), name: given}, tmp_path)
    assert seen["isolated"] == 1
    assert seen["inspect"] == 0
    assert seen["optimize"] == 0
    assert seen["dev_mode"] is False
    assert seen["verbose"] == 0
    assert seen["warnoptions"] == []
    assert seen["int_max_str_digits"] == sys.flags.int_max_str_digits
    assert seen["pycache_prefix"] is None
    path = seen["path"]
    assert isinstance(path, list)
    if name == "PYTHONPATH":
        # Never on sys.path: the registry loader looks there for its one top-level name only.
        assert given not in path


@pytest.mark.parametrize("name", ["PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PYTHONUTF8"])
def test_a_harmless_python_variable_costs_no_second_interpreter_start(
    tmp_path: Path, name: str
) -> None:
    seen = _probe("script", {**_base_env(), name: "1"}, tmp_path)
    assert seen["isolated"] == 0


@pytest.mark.parametrize("how", ["script", "module"])
def test_the_working_directory_is_not_on_the_path_even_without_python_variables(
    tmp_path: Path, how: str
) -> None:
    seen = _probe(how, _base_env(), tmp_path)
    path = seen["path"]
    assert isinstance(path, list)
    # Not even for the registry: the loader reads its one top-level name from there by spec.
    assert str(tmp_path / "table") not in path
    assert "" not in path


def test_pythoninspect_never_turns_stdin_into_code_after_the_dispatcher_exits(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "inspected"
    code = f"open({str(marker)!r}, 'w').write('ran')\n".encode()
    env = {**_base_env(), "PYTHONINSPECT": "1"}
    done = _run([str(SCRIPT), *DRY_RUN], env=env, cwd=tmp_path, stdin=code)
    assert done.returncode == 0, done.stderr.decode()
    assert not marker.exists()
