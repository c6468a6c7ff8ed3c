"""Python tables served by ``dispatcher``: what a handler raises and what a checkout holds.

- Every ``BaseException`` a handler raises (``GeneratorExit``,
  ``KeyboardInterrupt``, ``SystemExit``, a custom subclass, a
  ``CancelledError`` out of a nested event loop, a group of them) is an
  ``internal_error`` with a correlation id on every surface (library,
  ``dispatch_json``, MCP, replay); the server keeps serving and its stderr
  holds only the scrubbed log line.
- ``--registry`` finds the operator's module in the working directory
  without putting that directory on ``sys.path``: a checkout's ``pydantic/``,
  ``anyio/``, ``mcp/``, ``yaml/`` or ``json.py`` never runs.
"""

from __future__ import annotations

import importlib.util
import io
import json
import logging
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

from boring_dispatch import Registry
from kits.mcpcalls import DISPATCHER, BoundedServer

TOKEN: Final = "tok-5ecret-7f3a9"

#: kind -> the statement that raises it (``token`` is the Sensitive argument).
RAISES: Final = {
    "generator-exit": "raise GeneratorExit(token)",
    "keyboard-interrupt": "raise KeyboardInterrupt(token)",
    "system-exit": "raise SystemExit(token)",
    "system-exit-code": "sys.exit(3)",
    "custom-base-exception": "raise Custom(token)",
    "custom-subclass-of-subclass": "raise Deeper(token)",
    "cancelled-from-nested-loop": "asyncio.run(cancelled(token))",
    "base-exception-group": (
        "raise BaseExceptionGroup(token, [KeyboardInterrupt(token), ValueError(token)])"
    ),
    "base-exception": "raise BaseException(token)",
}

_TABLE: Final = textwrap.dedent(
    """
    import asyncio, sys
    from typing import Annotated
    from boring_dispatch import Registry, Sensitive, Tool


    class Custom(BaseException):
        pass


    class Deeper(Custom):
        pass


    async def cancelled(token):
        raise asyncio.CancelledError(token)


    def explode(kind: str, token: Annotated[str, Sensitive]) -> dict:
    {branches}
        return {{"kind": kind}}


    def ping() -> dict:
        return {{"pong": True}}


    TABLE = Registry({{
        "explode": Tool(explode, description="Raise what it is told to."),
        "ping": Tool(ping, description="Answer at once."),
    }})
    """
)


def _table_source() -> str:
    branches = "".join(
        f"    if kind == {kind!r}:\n        {statement}\n" for kind, statement in RAISES.items()
    )
    return _TABLE.format(branches=branches)


def _write_table(directory: Path) -> None:
    (directory / "raising_table.py").write_text(_table_source(), encoding="utf-8")


@pytest.fixture(scope="module")
def table_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("table")
    _write_table(directory)
    return directory


@pytest.fixture(scope="module")
def registry(table_dir: Path) -> Registry:
    """The table, loaded in this process from its file."""
    spec = importlib.util.spec_from_file_location("raising_table", table_dir / "raising_table.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    table = vars(module)["TABLE"]
    assert isinstance(table, Registry)
    return table


def _assert_internal_error(observation: dict[str, object]) -> str:
    assert observation["ok"] is False
    error = observation["error"]
    assert isinstance(error, dict)
    assert error["code"] == "internal_error"
    assert error["message"] == "internal error"
    correlation_id = error["correlation_id"]
    assert isinstance(correlation_id, str)
    assert re.fullmatch(r"[0-9A-Z]{26}", correlation_id)
    assert TOKEN not in json.dumps(observation)
    return correlation_id


# --------------------------------------------------------------------------- #
# BaseException from a handler


@pytest.mark.parametrize("kind", RAISES)
def test_a_base_exception_is_an_internal_error_in_the_library(
    registry: Registry, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    text = json.dumps({"name": "explode", "args": {"kind": kind, "token": TOKEN}})
    with caplog.at_level(logging.ERROR, logger="boring_dispatch"):
        try:
            direct = registry.dispatch("explode", {"kind": kind, "token": TOKEN}).to_dict()
            parsed = registry.dispatch_json(text).to_dict()
        except BaseException as error:
            pytest.fail(f"{type(error).__name__} escaped the pipeline")
    ids = {_assert_internal_error(direct), _assert_internal_error(parsed)}
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert all(correlation_id in logged for correlation_id in ids)
    assert TOKEN not in logged
    assert registry.dispatch("ping", {}).ok is True


@pytest.fixture(scope="module")
def errlog(tmp_path_factory: pytest.TempPathFactory) -> Iterator[io.TextIOWrapper]:
    with (tmp_path_factory.mktemp("stderr") / "server.log").open("w+", encoding="utf-8") as log:
        yield log


@pytest.fixture(scope="module")
def server(table_dir: Path, errlog: io.TextIOWrapper) -> Iterator[BoundedServer]:
    args = ["mcp", "--registry", "raising_table:TABLE"]
    with BoundedServer(args, env={}, cwd=table_dir, errlog=errlog) as s:
        yield s


@pytest.mark.parametrize("kind", RAISES)
def test_a_base_exception_is_an_internal_error_over_mcp_and_the_server_lives_on(
    server: BoundedServer, errlog: io.TextIOWrapper, kind: str
) -> None:
    result = server.call("explode", {"kind": kind, "token": TOKEN})
    assert result["isError"] is True
    correlation_id = _assert_internal_error(result["structuredContent"]["result"])
    assert server.call("ping", {})["structuredContent"] == {
        "result": {"ok": True, "result": {"pong": True}}
    }
    errlog.flush()
    stderr = Path(errlog.name).read_text(encoding="utf-8")
    assert f"correlation_id={correlation_id}" in stderr
    assert TOKEN not in stderr


def test_a_base_exception_is_an_internal_error_in_replay(table_dir: Path, tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    trace.write_text(
        "".join(
            json.dumps({"name": "explode", "args": {"kind": kind, "token": TOKEN}}) + "\n"
            for kind in RAISES
        )
        + json.dumps({"name": "ping", "args": {}})
        + "\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [str(DISPATCHER), "replay", "--registry", "raising_table:TABLE", "--live", str(trace)],
        cwd=table_dir,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(lines) == len(RAISES) + 1, done.stderr
    for observation in lines[:-1]:
        correlation_id = _assert_internal_error(observation)
        assert f"correlation_id={correlation_id}" in done.stderr
    assert lines[-1] == {"ok": True, "result": {"pong": True}}
    assert TOKEN not in done.stderr


# --------------------------------------------------------------------------- #
# The working directory never shadows a dependency

#: Names a checkout may hold; each must never be imported from there.
SHADOWS: Final = (
    "pydantic",
    "pydantic_core",
    "anyio",
    "mcp",
    "mcp_types",
    "yaml",
    "json",
    "typing_extensions",
    "sniffio",
    "httpx",
    "opentelemetry",
    "email_validator",
    "trio",
)

_SHADOW: Final = textwrap.dedent(
    """
    import os, pathlib
    (pathlib.Path(__file__).resolve().parent.parent / "HIT-{name}").write_text(str(os.getpid()))
    raise ImportError("a shadow of {name} ran")
    """
)

_OPS_TABLE: Final = textwrap.dedent(
    """
    from boring_dispatch import Registry, Tool

    from {relative}helpers import double


    def twice(n: int) -> dict:
        return {{"n": double(n)}}


    TABLE = Registry({{"twice": Tool(twice, description="Double a number.")}})
    """
)


_DOUBLE: Final = "def double(n):\n    return 2 * n\n"


def _hostile_checkout(directory: Path) -> Path:
    """A working directory full of shadows, with the operator's tables in three layouts."""
    cwd = directory / "checkout"
    cwd.mkdir()
    for name in SHADOWS:
        if name == "json":
            (cwd / "json.py").write_text(
                _SHADOW.format(name=name).replace("parent.parent", "parent")
            )
        else:
            (cwd / name).mkdir()
            (cwd / name / "__init__.py").write_text(_SHADOW.format(name=name))
    # A top-level module...
    (cwd / "flat_table.py").write_text(
        _OPS_TABLE.format(relative="").replace("from helpers import double\n", _DOUBLE),
        encoding="utf-8",
    )
    # ... a regular package with a relative import ...
    (cwd / "ops").mkdir()
    (cwd / "ops" / "__init__.py").write_text("", encoding="utf-8")
    (cwd / "ops" / "helpers.py").write_text(_DOUBLE, encoding="utf-8")
    (cwd / "ops" / "tables.py").write_text(_OPS_TABLE.format(relative="."), encoding="utf-8")
    # ... and a namespace package.
    (cwd / "loose" / "deep").mkdir(parents=True)
    (cwd / "loose" / "deep" / "helpers.py").write_text(_DOUBLE, encoding="utf-8")
    (cwd / "loose" / "deep" / "tables.py").write_text(
        _OPS_TABLE.format(relative="."), encoding="utf-8"
    )
    return cwd


def _hits(cwd: Path) -> list[str]:
    return sorted(path.name for path in cwd.glob("HIT-*"))


SPECS: Final = ("flat_table:TABLE", "ops.tables:TABLE", "loose.deep.tables:TABLE")
COMMANDS: Final = {
    "script": [str(DISPATCHER)],
    "python-m": [sys.executable, "-m", "boring_dispatch"],
}


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("spec", SPECS)
def test_names_loads_the_registry_from_the_working_directory_without_shadows(
    tmp_path: Path, spec: str, command: str
) -> None:
    cwd = _hostile_checkout(tmp_path)
    done = _run([*COMMANDS[command], "names", "--registry", spec], cwd)
    assert (done.returncode, done.stdout) == (0, "twice\n"), done.stderr
    assert _hits(cwd) == []


def test_replay_and_describe_load_the_registry_the_same_way(tmp_path: Path) -> None:
    cwd = _hostile_checkout(tmp_path)
    trace = tmp_path / "trace.jsonl"
    trace.write_text(json.dumps({"name": "twice", "args": {"n": 21}}) + "\n", encoding="utf-8")
    spec = "loose.deep.tables:TABLE"
    replayed = _run([str(DISPATCHER), "replay", "--registry", spec, "--live", str(trace)], cwd)
    assert (replayed.returncode, replayed.stdout) == (0, '{"ok": true, "result": {"n": 42}}\n')
    described = _run([str(DISPATCHER), "describe", "--registry", spec, "twice"], cwd)
    assert described.returncode == 0, described.stderr
    assert json.loads(described.stdout)["name"] == "twice"
    assert _hits(cwd) == []


@pytest.mark.parametrize("spec", ["json:TABLE", "yaml:TABLE", "mcp:TABLE"])
def test_a_registry_named_like_a_dependency_is_never_loaded_from_the_working_directory(
    tmp_path: Path, spec: str
) -> None:
    cwd = _hostile_checkout(tmp_path)
    done = _run([str(DISPATCHER), "names", "--registry", spec], cwd)
    assert done.returncode == 2
    assert done.stderr.startswith("error: ")
    assert _hits(cwd) == []


@pytest.mark.parametrize("command", COMMANDS)
def test_the_mcp_server_loads_the_registry_without_shadows(
    tmp_path: Path, errlog: io.TextIOWrapper, command: str
) -> None:
    cwd = _hostile_checkout(tmp_path)
    args = ["mcp", "--registry", "ops.tables:TABLE"]
    with BoundedServer(args, prefix=COMMANDS[command], env={}, cwd=cwd, errlog=errlog) as server:
        assert [tool["name"] for tool in server.list_tools()] == ["twice"]
        result = server.call("twice", {"n": 21})
    assert result["structuredContent"] == {"result": {"ok": True, "result": {"n": 42}}}
    assert _hits(cwd) == []
