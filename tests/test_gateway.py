"""The gateway authoring API: base classes, runtime context and nested dispatch identity."""

from __future__ import annotations

import argparse
import inspect
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from boring_dispatch.errors import RuntimeMisconfigured
from boring_dispatch.gateway import (
    ArgvInterface,
    Interface,
    NestedResult,
    runtime_context,
)
from boring_dispatch.process.launch import run_captured
from boring_dispatch.records import ExecLimits
from kits.gateways import Repo, make_repo, make_route


class Greet(Interface):
    def build_parser(self) -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(prog="greet")
        parser.add_argument("--name", required=True)
        return parser

    def run(self, args: argparse.Namespace) -> int | None:
        return 0 if args.name else 1


class Raw(ArgvInterface):
    def run(self, argv: list[str]) -> int | bool | None:
        return len(argv)


def test_the_documented_gateway_shapes_can_be_written_and_instantiated() -> None:
    greet = Greet()
    assert greet.run(greet.build_parser().parse_args(["--name", "Ada"])) == 0
    assert Raw().run(["a", "b"]) == 2


def test_a_gateway_missing_its_methods_cannot_be_instantiated() -> None:
    class Incomplete(Interface):
        def run(self, args: argparse.Namespace) -> None:
            del args

    with pytest.raises(TypeError):
        Incomplete()  # type: ignore[abstract]


def test_nested_dispatch_has_no_parameter_to_claim_a_caller() -> None:
    parameters = list(inspect.signature(Interface.dispatch).parameters)
    assert parameters == ["self", "interface", "version", "positionals", "options", "stdin"]


def test_nested_dispatch_outside_a_gateway_process_is_refused() -> None:
    assert runtime_context() is None
    with pytest.raises(RuntimeMisconfigured) as caught:
        Raw().dispatch("other.interface.run")
    assert caught.value.code == "dispatcher.runtime_misconfigured"


def test_a_nested_result_is_ok_only_for_a_clean_exit() -> None:
    assert NestedResult(0, "", "").ok
    assert not NestedResult(1, "", "").ok
    assert not NestedResult(0, "", "", stdout_truncated=True).ok
    assert not NestedResult(None, "", "", timed_out=True).ok


def test_the_runtime_context_can_be_bound_only_once() -> None:
    code = textwrap.dedent(
        """
        import json
        from pathlib import Path
        from boring_dispatch.process.context import (
            RuntimeContext, bind_runtime_context, runtime_context)
        context = RuntimeContext("m", "m", "m.interface.x", Path("/r"), Path("/r/officina.toml"),
                                 None, 0.0, 1, 1)
        bind_runtime_context(context)
        try:
            bind_runtime_context(context)
        except RuntimeError:
            print(json.dumps({"second": "refused", "module": runtime_context().module_id}))
        """
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(done.stdout) == {"second": "refused", "module": "m"}


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return make_repo(tmp_path, module_id="caller-mod._rtx")


def test_inside_a_gateway_the_context_names_the_running_module_and_cannot_be_rebound(
    repo: Repo,
) -> None:
    repo.write(
        "gateway.py",
        """
        import json
        from boring_dispatch import gateway
        from boring_dispatch.process.context import bind_runtime_context
        class Echo(gateway.ArgvInterface):
            def run(self, argv):
                context = gateway.runtime_context()
                try:
                    bind_runtime_context(context)
                    rebound = True
                except RuntimeError:
                    rebound = False
                print(json.dumps({"module": context.module_id, "source": context.source_id,
                                  "interface": context.interface_id, "rebound": rebound}))
        """,
    )
    result = run_captured(
        make_route(repo), stdin=None, limits=ExecLimits(timeout_s=30.0), trace_id=None
    )
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == {
        "module": "caller-mod._rtx",
        "source": "caller-mod._rtx",
        "interface": "caller-mod._rtx.interface.run",
        "rebound": False,
    }


CORPUS = Path(__file__).resolve().parent / "corpus" / "famulus"

ORCHESTRATE = """
import json
from boring_dispatch import gateway
from boring_dispatch.errors import RouteError

class Interface(gateway.ArgvInterface):
    def run(self, argv):
        weather = self.dispatch(
            "get-weather._rtx.interface.scripts-weather",
            options={"location": "Berlin; $(touch /tmp/pwned)", "date": "2024-01-02"},
        )
        try:
            self.dispatch("get-weather._rtx.interface.no-such-interface")
            refused = None
        except RouteError as error:
            refused = error.code
        print(json.dumps({
            "me": gateway.runtime_context().module_id,
            "nested": json.loads(weather.stdout),
            "nested_exit": weather.exit_code,
            "refused": refused,
        }))
        return 0
"""

WEATHER = """
import json, sys
from boring_dispatch import gateway

class Interface(gateway.ArgvInterface):
    def run(self, argv):
        context = gateway.runtime_context()
        print(json.dumps({"argv": argv, "module": context.module_id, "trace": context.trace_id,
                          "stdin": sys.stdin.read()}))
        return 0
"""


@pytest.mark.skipif(not CORPUS.is_dir(), reason="famulus corpus not found")
def test_a_nested_call_runs_under_the_running_modules_identity(tmp_path: Path) -> None:
    import shutil

    from boring_dispatch.observe.trace import new_trace_id
    from boring_dispatch.records import RouteRequest
    from boring_dispatch.repository.repository import Repository

    root = tmp_path / "repo"
    for name in ("daily-plan", "get-weather"):
        shutil.copytree(CORPUS / "skills" / name, root / "skills" / name)
    config = root / "officina.toml"
    config.write_text('schema_version = 1\n\n[modules]\nroots = ["skills"]\n', encoding="utf-8")
    (root / "skills/daily-plan/_rtx/_plan_orchestrate.py").write_text(ORCHESTRATE)
    (root / "skills/get-weather/_rtx/_weather_client.py").write_text(WEATHER)
    trace_id = new_trace_id()
    result = Repository.open(config).invoke(
        RouteRequest(caller="daily-plan", target="daily-plan._rtx.interface.orchestrate"),
        limits=ExecLimits(timeout_s=60.0),
        trace_id=trace_id,
    )
    assert result.exit_code == 0, result.stderr
    seen = json.loads(result.stdout)
    assert seen["me"] == "daily-plan._rtx"
    assert seen["nested_exit"] == 0
    assert seen["nested"]["module"] == "get-weather._rtx"
    assert seen["nested"]["trace"] == trace_id
    assert seen["nested"]["stdin"] == ""
    # Values arrive as single, untouched tokens (the flag spelling is the projection's business).
    values = {
        token.partition("=")[2] if token.startswith("--") and "=" in token else token
        for token in seen["nested"]["argv"]
    }
    assert {"Berlin; $(touch /tmp/pwned)", "2024-01-02"} <= values
    assert seen["refused"] == "dispatcher.interface_not_found"


def test_a_nested_call_with_no_time_left_is_invalid_request_as_the_broker_says() -> None:
    # One code for one condition: the child-side check and the parent's broker agree.
    code = textwrap.dedent(
        """
        import json
        from pathlib import Path
        from boring_dispatch.gateway import ArgvInterface
        from boring_dispatch.errors import RouteError
        from boring_dispatch.process.context import RuntimeContext, bind_runtime_context
        bind_runtime_context(RuntimeContext("m", "m", "m.interface.x", Path("/r"),
                                            Path("/r/officina.toml"), None, 0.0, 1, 1,
                                            broker_fd=0))
        class Probe(ArgvInterface):
            def run(self, argv):
                return 0
        try:
            Probe().dispatch("other.interface.y")
        except RouteError as error:
            print(json.dumps({"code": error.code}))
        """
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True, timeout=30
    )
    assert json.loads(done.stdout) == {"code": "dispatcher.invalid_request"}
