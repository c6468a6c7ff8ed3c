"""The child-side runner: its fixed command line, the confined importer, exit statuses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from boring_dispatch.observe.trace import new_trace_id
from boring_dispatch.process.child.runner import (
    OPTIONS,
    RunnerError,
    exit_code,
    parse_spec,
    scrub_sys_path,
)
from boring_dispatch.process.launch import child_argv, run_captured
from boring_dispatch.records import ExecLimits, ExecutionResult, Route
from kits.gateways import ECHO_GATEWAY, Repo, make_repo, make_route, report

LIMITS = ExecLimits(timeout_s=30.0)


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    made = make_repo(tmp_path)
    made.write("gateway.py", ECHO_GATEWAY)
    return made


def _run(route: Route, stdin: bytes | None = None) -> ExecutionResult:
    return run_captured(route, stdin=stdin, limits=LIMITS, trace_id=None)


def _runner_args(route: Route) -> list[str]:
    argv = child_argv(route)
    return list(argv[argv.index("boring_dispatch.process.child.runner") + 1 :])


# --------------------------------------------------------------------------- #
# The command line


def test_the_runner_takes_its_options_at_fixed_positions_and_the_command_verbatim(
    repo: Repo,
) -> None:
    command = ["--module-id=evil", "--", "--gateway=../../x.py", "-h", "--entry=Os"]
    spec = parse_spec(_runner_args(make_route(repo, command)))
    assert spec.command == tuple(command)
    assert spec.module_id == repo.module_id
    assert spec.gateway_path == "gateway.py"
    assert spec.entry == "Echo"


def test_a_missing_separator_is_misuse(repo: Repo) -> None:
    args = _runner_args(make_route(repo))
    with pytest.raises(RunnerError):
        parse_spec(args[: len(OPTIONS)])


def test_options_out_of_order_are_misuse(repo: Repo) -> None:
    args = _runner_args(make_route(repo))
    args[0], args[1] = args[1], args[0]
    with pytest.raises(RunnerError):
        parse_spec(args)


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("module-root", "relative/root"),
        ("config", "officina.toml"),
        ("module-roots", "not json"),
        ("module-roots", '["relative"]'),
        ("logical-package", "not-an-identifier"),
        ("entry", "os.system"),
        ("entry", ""),
        ("gateway", "../escape.py"),
        ("gateway", "/abs/gateway.py"),
        ("gateway", "gateway.txt"),
        ("gateway", "sub/../gateway.py"),
        ("logical-entrypoint", "_officina_module_00.other"),
        ("limits", "timeout=1"),
        ("limits", "timeout=0,output=1,stdin=1,cpu=-,nofile=-,fsize=-,as=-"),
        ("limits", "timeout=1,output=-1,stdin=1,cpu=-,nofile=-,fsize=-,as=-"),
        ("limits", "timeout=nan,output=1,stdin=1,cpu=-,nofile=-,fsize=-,as=-"),
        ("module-id", ""),
        ("broker-fd", ""),
        ("broker-fd", "1"),
        ("broker-fd", "-3"),
        ("broker-fd", "x7"),
        ("broker-fd", "99999999999"),
    ],
)
def test_malformed_options_are_misuse(repo: Repo, option: str, value: str) -> None:
    args = _runner_args(make_route(repo))
    args[OPTIONS.index(option)] = f"--{option}={value}"
    with pytest.raises(RunnerError):
        parse_spec(args)


def test_entrypoints_derive_from_gateway_paths(repo: Repo) -> None:
    nested = parse_spec(_runner_args(make_route(repo, gateway_path="a/b.py")))
    assert nested.entrypoint.endswith(".a.b")
    package = parse_spec(_runner_args(make_route(repo, gateway_path="__init__.py")))
    assert package.entrypoint == package.package


# --------------------------------------------------------------------------- #
# Pure helpers


def test_sys_path_entries_related_to_a_root_are_removed(tmp_path: Path) -> None:
    root = tmp_path / "repo" / "skills"
    inside = root / "mod" / "lib"
    outside = tmp_path / "site-packages"
    for path in (inside, outside):
        path.mkdir(parents=True)
    link = tmp_path / "link-to-inside"
    link.symlink_to(inside)
    entries = ["", str(root), str(inside), str(tmp_path), str(link), str(outside)]
    assert scrub_sys_path(entries, [str(root)]) == [str(outside)]


@pytest.mark.parametrize(
    ("value", "code"), [(None, 0), (True, 0), (False, 1), (0, 0), (3, 3), (255, 255)]
)
def test_return_values_map_to_exit_statuses(value: object, code: int) -> None:
    assert exit_code(value) == code


@pytest.mark.parametrize("value", [256, -1])
def test_exit_statuses_the_os_would_truncate_are_refused(value: int) -> None:
    with pytest.raises(ValueError, match=r"0\.\.255"):
        exit_code(value)


@pytest.mark.parametrize("value", ["0", 1.0, [], object()])
def test_other_return_values_are_a_type_error(value: object) -> None:
    with pytest.raises(TypeError):
        exit_code(value)


# --------------------------------------------------------------------------- #
# In the child


def test_the_child_runs_isolated_in_the_module_root_with_the_command_as_argv(repo: Repo) -> None:
    seen = report(_run(make_route(repo, ["a", "--b"])))
    assert seen["isolated"] == 1
    assert seen["cwd"] == str(repo.module_root)
    assert seen["argv"] == ["a", "--b"]
    assert seen["sys_argv"] == [str(repo.module_root / "gateway.py"), "a", "--b"]
    assert seen["file"] == str(repo.module_root / "gateway.py")


def test_the_child_loads_only_light_modules(repo: Repo) -> None:
    listed = report(_run(make_route(repo)))["modules"]
    assert isinstance(listed, list)
    modules = set(listed)
    ours = {m for m in modules if m.startswith("boring_dispatch")}
    assert ours <= {
        "boring_dispatch",
        "boring_dispatch._limits",
        "boring_dispatch._value",
        "boring_dispatch._static",
        "boring_dispatch.gateway",
        "boring_dispatch.observe",
        "boring_dispatch.observe.trace",
        "boring_dispatch.process",
        "boring_dispatch.process._command",
        "boring_dispatch.process.child",
        "boring_dispatch.process.child._confined",
        "boring_dispatch.process.child._spec",
        "boring_dispatch.process.child.interface",
        "boring_dispatch.process.context",
        "boring_dispatch.process.child._deadline",
        "boring_dispatch.process.child._reaper",
        "boring_dispatch.process._reach",
    }
    heavy = {"pydantic", "mcp", "yaml", "opentelemetry", "anyio"}
    assert not {m.split(".")[0] for m in modules} & heavy
    assert not {
        m
        for m in modules
        if m.startswith(("boring_dispatch.repository", "boring_dispatch.registry"))
    }
    # Start-up cost an argv gateway does not pay (dataclass creation loads inspect).
    assert not modules & {"argparse", "dataclasses", "inspect", "importlib.abc", "tempfile"}


def test_the_runtime_context_carries_the_running_module_and_trace(repo: Repo) -> None:
    trace_id = new_trace_id()
    result = run_captured(make_route(repo), stdin=None, limits=LIMITS, trace_id=trace_id)
    seen = report(result)
    assert seen["context_module_id"] == repo.module_id
    assert seen["context_trace_id"] == trace_id


@pytest.mark.parametrize(
    ("body", "code"),
    [("return None", 0), ("return True", 0), ("return False", 1), ("return 7", 7)],
)
def test_the_run_value_becomes_the_exit_status(repo: Repo, body: str, code: int) -> None:
    repo.write(
        "gateway.py",
        f"""
        from boring_dispatch.gateway import ArgvInterface
        class Echo(ArgvInterface):
            def run(self, argv):
                {body}
        """,
    )
    assert _run(make_route(repo)).exit_code == code


@pytest.mark.parametrize("body", ["return 'ok'", "return 256"])
def test_an_unusable_run_value_is_a_traceback_and_status_1(repo: Repo, body: str) -> None:
    repo.write(
        "gateway.py",
        f"""
        from boring_dispatch.gateway import ArgvInterface
        class Echo(ArgvInterface):
            def run(self, argv):
                {body}
        """,
    )
    result = _run(make_route(repo))
    assert result.exit_code == 1
    assert "Traceback" in result.stderr


def test_a_parsed_interface_gets_its_namespace_and_argparse_usage_errors_exit_2(
    repo: Repo,
) -> None:
    repo.write(
        "gateway.py",
        """
        import argparse
        from boring_dispatch.gateway import Interface
        class Greet(Interface):
            def build_parser(self):
                parser = argparse.ArgumentParser(prog="greet")
                parser.add_argument("--name", required=True)
                return parser
            def run(self, args):
                print(f"hello {args.name}")
                return 0
        """,
    )
    good = _run(make_route(repo, ["--name", "Ada"], entry="Greet"))
    assert (good.exit_code, good.stdout) == (0, "hello Ada\n")
    bad = _run(make_route(repo, ["--nope"], entry="Greet"))
    assert bad.exit_code == 2
    assert bad.stderr.startswith("usage: greet")


def test_build_parser_must_return_an_argparse_parser(repo: Repo) -> None:
    repo.write(
        "gateway.py",
        """
        from boring_dispatch.gateway import Interface
        class Odd(Interface):
            def build_parser(self):
                return object()
            def run(self, args):
                return 0
        """,
    )
    result = _run(make_route(repo, entry="Odd"))
    assert result.exit_code == 1
    assert "TypeError" in result.stderr


@pytest.mark.parametrize(
    "source",
    [
        "class Echo:\n    def run(self, argv):\n        return 0\n",
        "Echo = 3\n",
        "import os\nclass Other: pass\n",
        (
            "from boring_dispatch.gateway import Interface, ArgvInterface\n"
            "class Echo(Interface, ArgvInterface):\n"
            "    def build_parser(self): ...\n"
            "    def run(self, args): ...\n"
        ),
    ],
)
def test_an_entry_that_is_not_one_gateway_class_is_misuse(repo: Repo, source: str) -> None:
    repo.write("gateway.py", source)
    result = _run(make_route(repo))
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ")


def test_an_entry_is_taken_from_the_module_dict_not_by_attribute_lookup(repo: Repo) -> None:
    repo.write(
        "gateway.py",
        """
        from boring_dispatch.gateway import ArgvInterface
        class Real(ArgvInterface):
            def run(self, argv):
                return 0
        def __getattr__(name):
            return Real
        """,
    )
    assert _run(make_route(repo, entry="Ghost")).exit_code == 2


def test_a_missing_gateway_file_is_misuse(repo: Repo) -> None:
    result = _run(make_route(repo, gateway_path="absent.py"))
    assert result.exit_code == 2
    assert result.stderr.startswith("error: gateway module refused")


@pytest.mark.parametrize(
    "statement",
    ["from . import missing_helper", "import no_such_third_party_module", "raise ImportError('x')"],
)
def test_an_import_error_raised_by_gateway_code_is_a_traceback_not_a_refusal(
    repo: Repo, statement: str
) -> None:
    repo.write("gateway.py", statement + "\n")
    result = _run(make_route(repo))
    assert result.exit_code == 1
    assert "Traceback" in result.stderr


def test_a_failing_package_init_is_a_traceback(repo: Repo) -> None:
    repo.write("__init__.py", "raise RuntimeError('init failed')\n")
    result = _run(make_route(repo))
    assert result.exit_code == 1
    assert "RuntimeError: init failed" in result.stderr


def test_gateways_in_subpackages_and_package_inits_load(repo: Repo) -> None:
    repo.write("tools/__init__.py", "")
    repo.write("tools/deep.py", ECHO_GATEWAY)
    seen = report(_run(make_route(repo, gateway_path="tools/deep.py")))
    assert seen["file"] == str(repo.module_root / "tools" / "deep.py")
    repo.write("__init__.py", ECHO_GATEWAY)
    assert report(_run(make_route(repo, gateway_path="__init__.py")))["argv"] == []


def test_relative_imports_inside_the_module_work(repo: Repo) -> None:
    repo.write("helper.py", "VALUE = 'from helper'\n")
    repo.write("lib/__init__.py", "PACKAGE_VALUE = 'from lib'\n")
    repo.write("lib/inner.py", "from .. import helper\nINNER = helper.VALUE + ' via inner'\n")
    repo.write(
        "gateway.py",
        """
        from boring_dispatch.gateway import ArgvInterface
        from .helper import VALUE
        from .lib import PACKAGE_VALUE
        from .lib.inner import INNER
        class Echo(ArgvInterface):
            def run(self, argv):
                print(VALUE, PACKAGE_VALUE, INNER, __package__, sep="|")
        """,
    )
    result = _run(make_route(repo))
    assert result.exit_code == 0, result.stderr
    parts = result.stdout.strip().split("|")
    assert parts[:3] == ["from helper", "from lib", "from helper via inner"]
    assert parts[3] == make_route(repo).python_target.logical_package


def _import_probe(statement: str) -> str:
    return f"""
        import json
        from boring_dispatch.gateway import ArgvInterface
        class Echo(ArgvInterface):
            def run(self, argv):
                try:
                    {statement}
                except ImportError as error:
                    print(json.dumps({{"error": type(error).__name__, "name": error.name}}))
                    return 0
                print(json.dumps({{"error": None}}))
                return 0
        """


def test_a_module_and_a_package_of_the_same_name_are_ambiguous(repo: Repo) -> None:
    repo.write("twin.py", "")
    repo.write("twin/__init__.py", "")
    repo.write("gateway.py", _import_probe("from . import twin"))
    assert json.loads(_run(make_route(repo)).stdout)["error"] == "ConfinedImportError"


def test_a_directory_without_init_is_not_a_package(repo: Repo) -> None:
    repo.write("plain/mod.py", "")
    repo.write("gateway.py", _import_probe("from .plain import mod"))
    assert json.loads(_run(make_route(repo)).stdout)["error"] == "ModuleNotFoundError"


def test_packages_get_an_empty_path_so_submodules_come_only_from_the_finder(repo: Repo) -> None:
    repo.write("lib/__init__.py", "")
    repo.write(
        "gateway.py",
        """
        from boring_dispatch.gateway import ArgvInterface
        from . import lib
        class Echo(ArgvInterface):
            def run(self, argv):
                print(list(lib.__path__), __spec__.parent == lib.__name__.rpartition(".")[0])
        """,
    )
    assert _run(make_route(repo)).stdout == "[] True\n"


def test_without_an_init_the_logical_package_is_synthetic(repo: Repo) -> None:
    repo.write(
        "gateway.py",
        """
        import sys
        from boring_dispatch.gateway import ArgvInterface
        class Echo(ArgvInterface):
            def run(self, argv):
                package = sys.modules[__package__]
                print(getattr(package, "__file__", None), list(package.__path__))
        """,
    )
    assert _run(make_route(repo)).stdout == "None []\n"


def test_a_gateway_that_mutates_sys_path_while_importing_is_refused(repo: Repo) -> None:
    repo.write(
        "gateway.py",
        """
        import sys
        sys.path.insert(0, "/tmp")
        from boring_dispatch.gateway import ArgvInterface
        class Echo(ArgvInterface):
            def run(self, argv):
                return 0
        """,
    )
    result = _run(make_route(repo))
    assert result.exit_code != 0
    assert "gateway mutated sys.path" in result.stderr


def test_rlimits_are_set_before_the_gateway_runs(repo: Repo) -> None:
    limits = ExecLimits(timeout_s=30.0, max_open_files=64, max_file_bytes=4096, max_cpu_seconds=20)
    seen = report(run_captured(make_route(repo), stdin=None, limits=limits, trace_id=None))
    rlimits = seen["rlimits"]
    assert isinstance(rlimits, dict)
    assert rlimits["core"] == [0, 0]
    assert rlimits["nofile"] == [64, 64]
    assert rlimits["fsize"] == [4096, 4096]
    assert rlimits["cpu"] == [20, 20]


def test_writing_past_the_file_size_limit_fails_in_the_child(repo: Repo) -> None:
    repo.write(
        "gateway.py",
        """
        import errno, os, tempfile
        from boring_dispatch.gateway import ArgvInterface
        class Echo(ArgvInterface):
            def run(self, argv):
                with tempfile.TemporaryFile() as handle:
                    try:
                        handle.write(b"x" * 100_000)
                        handle.flush()
                    except OSError as error:
                        return 3 if error.errno == errno.EFBIG else 4
                return 0
        """,
    )
    limits = ExecLimits(timeout_s=30.0, max_file_bytes=4096)
    assert run_captured(make_route(repo), stdin=None, limits=limits, trace_id=None).exit_code == 3


def test_the_runner_refuses_to_run_without_isolation(repo: Repo) -> None:
    argv = list(child_argv(make_route(repo)))
    argv.remove("-I")
    done = subprocess.run(argv, cwd=repo.module_root, capture_output=True, timeout=60, check=False)
    assert done.returncode == 2
    assert done.stderr.startswith(b"error: ")


def test_the_runner_refuses_a_working_directory_other_than_the_module_root(repo: Repo) -> None:
    argv = child_argv(make_route(repo))
    done = subprocess.run(argv, cwd=repo.root, capture_output=True, timeout=60, check=False)
    assert done.returncode == 2
    assert done.stderr.startswith(b"error: ")


def test_the_runner_without_options_is_misuse(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-I", "-m", "boring_dispatch.process.child.runner", "gateway.py", "Echo"],
        cwd=tmp_path,
        capture_output=True,
        timeout=60,
        check=False,
        env={"PATH": os.defpath},
    )
    assert done.returncode == 2
    assert done.stderr.startswith(b"error: ")


def test_the_interface_body_writes_a_span_with_identifiers_only(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    logs = tmp_path / "logs"
    monkeypatch.setenv("ASSISTANT_LOGS", str(logs))
    trace_id = new_trace_id()
    run_captured(
        make_route(repo, ["canary-argument"]), stdin=None, limits=LIMITS, trace_id=trace_id
    )
    lines = [
        json.loads(line)
        for path in (logs / "dispatch").iterdir()
        for line in path.read_text().splitlines()
    ]
    names = sorted(line["name"] for line in lines)
    assert names == ["dispatcher.process", "gateway.interface"]
    assert {line["trace_id"] for line in lines} == {trace_id}
    assert all(line["status"] == "ok" for line in lines)
    text = "".join(path.read_text() for path in (logs / "dispatch").iterdir())
    assert "canary-argument" not in text
    assert str(repo.module_root) not in text
