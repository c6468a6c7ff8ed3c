"""The CLI's import path is a budget: stdlib, PyYAML and our own routing code, nothing else."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kits.plain_env import isolated_json, plain_environment
from kits.setup_repo import write_setup_repository

OFF_THE_DRY_RUN_PATH = frozenset(
    {
        "argparse",
        "asyncio",
        "dataclasses",
        "gettext",
        "importlib.abc",
        "importlib.metadata",
        "inspect",
        "shutil",
        "subprocess",
        "tempfile",
        "threading",
    }
)
#: Top-level stdlib modules a dry run may add to what a bare ``python -I`` has loaded:
#: the configuration's TOML reader, paths, JSON, typing, datetime (tomllib's), the regex
#: linter's Unicode tables and the YAML reader's base64; on 3.12 and 3.13 some of those
#: pull in ``glob``, ``pwd``, ``grp`` and the C parts named here. No process, thread,
#: async, packaging, logging or random machinery: the same list pins all of that out.
DRY_RUN_STDLIB = frozenset(
    {
        "__future__",
        "_datetime",
        "_json",
        "_string",
        "_struct",
        "base64",
        "binascii",
        "collections",
        "contextlib",
        "copyreg",
        "datetime",
        "enum",
        "errno",
        "fnmatch",
        "functools",
        "glob",
        "grp",
        "ipaddress",
        "itertools",
        "json",
        "keyword",
        "math",
        "ntpath",
        "operator",
        "pathlib",
        "pwd",
        "re",
        "reprlib",
        "string",
        "struct",
        "types",
        "unicodedata",
        "urllib",
        "warnings",
    }
)
#: Our packages a dry run may load (second-level names under ``boring_dispatch``).
DRY_RUN_OURS = frozenset(
    {
        "_entry",
        "_limits",
        "_quote",
        "_refusal",
        "_static",
        "_value",
        "errors",
        "process",
        "records",
        "repository",
        "surfaces",
    }
)
HEAVY = ("pydantic", "mcp", "anyio", "httpx", "opentelemetry", "jsonschema", "rich", "starlette")
CONFIG = Path(__file__).resolve().parent / "corpus" / "famulus" / "officina.toml"


def _modules_after(code: str) -> set[str]:
    probe = code + "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))\n"
    return set(isolated_json(probe))


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY)


def test_importing_the_package_imports_nothing_heavy() -> None:
    assert _heavy(_modules_after("import boring_dispatch")) == []


def test_the_gateway_authoring_api_imports_nothing_heavy() -> None:
    assert _heavy(_modules_after("import boring_dispatch.gateway")) == []


@pytest.mark.skipif(not CONFIG.is_file(), reason="famulus corpus not found")
def test_a_cli_dry_run_imports_only_stdlib_yaml_and_routing_code() -> None:
    code = (
        "import io, contextlib\n"
        "from boring_dispatch.surfaces.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    rc = main(['--config', {str(CONFIG)!r}, '--caller-skill', 'daily-plan', '--dry-run',"
        "'list-manager._rtx.interface.read-list', '/tmp/todo.yaml'])\n"
        "assert rc == 0, rc\n"
    )
    modules = _modules_after(code)
    assert _heavy(modules) == []
    third_party = {
        m.split(".")[0]
        for m in modules
        if m.split(".")[0] not in sys.stdlib_module_names
        and not m.startswith(("boring_dispatch", "_"))
    }
    assert third_party <= {"yaml", "cython_runtime"}  # libyaml is a Cython extension
    # Start-up cost a dry run does not pay: argparse (the usual invocations are parsed
    # without it), the launcher's process machinery, and what async or packaging code loads.
    assert not modules & OFF_THE_DRY_RUN_PATH
    # A dry run of a managed target never reaches the setup gate: nothing of setup/ loads.
    assert sorted(m for m in modules if m.startswith("boring_dispatch.setup")) == []
    assert "sqlite3" not in modules


def test_an_unmanaged_live_call_imports_nothing_of_the_ledger(tmp_path: Path) -> None:
    config = write_setup_repository(tmp_path / "repo")
    probe = (
        "from boring_dispatch.surfaces.cli.main import main\n"
        f"rc = main(['--config', {str(config)!r}, '--caller-skill', 'host',"
        " 'plain.interface.echo'])\n"
        "assert rc == 0, rc\n"
    )
    modules = _modules_after(probe)
    assert sorted(m for m in modules if m.startswith("boring_dispatch.setup.ledger")) == []
    assert "sqlite3" not in modules
    assert "psycopg" not in modules


def test_a_cli_dry_run_with_audit_imports_the_same_as_without(tmp_path: Path) -> None:
    """``--audit`` is for live runs: a dry run neither opens the file nor loads the sinks."""
    audit = tmp_path / "audit.jsonl"
    runs = []
    for extra in ([], ["--audit", str(audit)]):
        code = (
            "import io, contextlib\n"
            "from boring_dispatch.surfaces.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    rc = main(['--config', {str(CONFIG)!r}, '--caller-skill', 'daily-plan',"
            f" *{extra!r}, '--dry-run', 'list-manager._rtx.interface.read-list', '/tmp/t.yaml'])\n"
            "assert rc == 0, rc\n"
        )
        runs.append(_modules_after(code))
    assert runs[1] == runs[0]
    assert not [m for m in runs[1] if "audit" in m]
    assert not audit.exists()


def test_a_dry_run_whose_blueprints_the_fast_parser_reads_never_imports_pyyaml() -> None:
    code = (
        "import io, contextlib\n"
        "from boring_dispatch.surfaces.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    rc = main(['--config', {str(CONFIG)!r}, '--caller-skill', 'get-weather',"
        " '--dry-run', 'get-weather._rtx.interface.scripts-weather'])\n"
        "assert rc == 0, rc\n"
    )
    assert not any(m == "yaml" or m.startswith("yaml.") for m in _modules_after(code))


def test_a_table_call_imports_no_opentelemetry_unless_enabled() -> None:
    # plain_environment() has no BORING_DISPATCH_OTEL: OpenTelemetry stays out.
    code = (
        "from boring_dispatch import Registry, Tool\n"
        "def echo(text: str) -> dict:\n"
        "    return {'n': len(text)}\n"
        "table = Registry({'echo': Tool(echo, description='echo')})\n"
        "assert table.dispatch('echo', {'text': 'ab'}).ok\n"
        "assert table.dispatch('nope', {}).error is not None\n"
    )
    modules = _modules_after(code)
    assert not [m for m in modules if m.split(".")[0] == "opentelemetry"]


def test_the_timeline_imports_only_stdlib_and_our_code(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    session.write_text(
        '{"timestamp": "2026-01-01T00:00:00.000Z", "type": "session_meta", "payload": {}}\n'
    )
    code = (
        "import io, contextlib\n"
        "from boring_dispatch.surfaces.cli.main import main\n"
        "out, err = io.StringIO(), io.StringIO()\n"
        "with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):\n"
        f"    rc = main(['timeline', {str(session)!r}, '--logs', {str(tmp_path)!r},"
        " '--format', 'html'])\n"
        "assert rc == 1, rc\n"  # no call of ours in that session
    )
    modules = _modules_after(code)
    assert _heavy(modules) == []
    third_party = {
        m.split(".")[0]
        for m in modules
        if m.split(".")[0] not in sys.stdlib_module_names
        and not m.startswith(("boring_dispatch", "_"))
    }
    assert third_party == set()


_DRY_RUNS = [
    ("get-weather", ("get-weather._rtx.interface.scripts-weather",)),  # R1: the fast YAML parser
    ("daily-plan", ("list-manager._rtx.interface.read-list", "/tmp/todo.yaml")),  # R3: PyYAML too
]


def _top_level(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


@pytest.mark.skipif(not CONFIG.is_file(), reason="famulus corpus not found")
@pytest.mark.parametrize(("caller", "target"), _DRY_RUNS)
def test_a_cli_dry_run_adds_only_allowlisted_stdlib_modules(
    caller: str, target: tuple[str, ...]
) -> None:
    scaffold = "import io, contextlib\n"
    code = (
        scaffold + "from boring_dispatch.surfaces.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    rc = main(['--config', {str(CONFIG)!r}, '--caller-skill', {caller!r}, '--dry-run',"
        f" *{list(target)!r}])\n"
        "assert rc == 0, rc\n"
    )
    modules = _modules_after(code)
    added = _top_level(modules) - _top_level(_modules_after(scaffold))
    stdlib = {m for m in added if m in sys.stdlib_module_names}
    assert sorted(stdlib - DRY_RUN_STDLIB) == []
    ours = {m.split(".")[1] for m in modules if m.startswith("boring_dispatch.")}
    assert sorted(ours - DRY_RUN_OURS) == []


@pytest.mark.skipif(not CONFIG.is_file(), reason="famulus corpus not found")
def test_a_warm_mcp_dry_run_imports_nothing_per_call() -> None:
    # The calls a server makes for one dry run, after its first: no import at all.
    code = textwrap.dedent(
        f"""
        import sys
        from boring_dispatch.repository.repository import Repository
        from boring_dispatch.surfaces.mcp import server, _transport
        from boring_dispatch.surfaces.mcp._calls import RepositoryCalls
        from boring_dispatch.surfaces.mcp._telemetry import traced_call
        import mcp_types as types

        calls = RepositoryCalls(Repository.open({str(CONFIG)!r}))
        args = {{"caller": "get-weather", "interface": "get-weather._rtx.interface.scripts-weather",
                "arguments": {{}}, "dry_run": True}}
        line = ('{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":'
                '"invoke_security_1","arguments":{{"caller":"get-weather"}}}}}}').encode()

        def one_call():
            from boring_dispatch.surfaces.mcp._wire import read_message
            read_message(line, max_line_bytes=1 << 20)
            with traced_call("invoke_security_1", 1, None, repository=True):
                for tier in range(3):
                    outcome = calls.prepare(f"invoke_security_{{tier}}", args, trace_id="0" * 32)
                    result = server._call_tool_result(outcome)
                    message = types.JSONRPCResponse(
                        jsonrpc="2.0", id=1, result=result.model_dump(by_alias=True, mode="json")
                    )
                    _transport._encode(message)
            return outcome

        one_call()
        before = set(sys.modules)
        assert not one_call().is_error
        print(sorted(set(sys.modules) - before))
        """
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env=plain_environment(),
    )
    assert done.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.skipif(not CONFIG.is_file(), reason="famulus corpus not found")
@pytest.mark.parametrize(("caller", "target"), _DRY_RUNS)
def test_a_dry_run_imports_neither_tomllib_nor_typing(caller: str, target: tuple[str, ...]) -> None:
    # officina.toml is inside the small TOML reader's subset, so tomllib's import is not
    # paid; our modules import typing for type checkers only, so typing is not either.
    code = (
        "import io, contextlib\n"
        "from boring_dispatch.surfaces.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    rc = main(['--config', {str(CONFIG)!r}, '--caller-skill', {caller!r}, '--dry-run',"
        f" *{list(target)!r}])\n"
        "assert rc == 0, rc\n"
    )
    unwanted = {"tomllib", "typing", "_typing"}
    assert sorted(m for m in _modules_after(code) if m.split(".")[0] in unwanted) == []
