"""What a repository server accepts as a call: the bound callers and the optional arguments.

- The projection's ``caller`` is asserted by the model. ``dispatcher mcp
  --caller SKILL`` binds a server to the skills it may act for: any other
  caller (a look-alike included) is ``dispatcher.host_caller_invalid`` before
  anything is resolved, and the values are checked when the server starts.
- ``arguments`` and each of its members may be left out (none given), while
  the input schema stays closed (``additionalProperties: false``).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kits.mcp import CALLER, projection, read_spans, write_tools_repository
from kits.mcpcalls import BoundedServer

#: A second skill the server is bound to, and a third it is not.
SECOND: Final = "second"
UNBOUND: Final = "third"
REFUSAL: Final = "this server does not act for that caller (see dispatcher mcp --caller)"
_SKILL: Final = {
    "schema_version": 6,
    "node_type": "module",
    "version": 1,
    "children": {},
    "namespace_exports": {},
    "sources": {},
    "exports": {},
    "discovery": {"mechanism": "skill"},
}


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    config = write_tools_repository(tmp_path_factory.mktemp("repo"))
    for skill in (SECOND, UNBOUND):
        (config.parent / "skills" / skill).mkdir()
        document = json.dumps({**_SKILL, "id": skill})  # JSON is YAML
        (config.parent / "skills" / skill / "blueprint.yaml").write_text(document, "utf-8")
    return config


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("logs")


@pytest.fixture(scope="module")
def errlog(tmp_path_factory: pytest.TempPathFactory) -> Iterator[io.TextIOWrapper]:
    with (tmp_path_factory.mktemp("stderr") / "server.log").open("w+", encoding="utf-8") as log:
        yield log


@pytest.fixture(scope="module")
def bound(config: Path, logs: Path, errlog: io.TextIOWrapper) -> Iterator[BoundedServer]:
    args = ["mcp", "--config", str(config), "--caller", CALLER, "--caller", SECOND]
    env = {"ASSISTANT_LOGS": str(logs)}
    with BoundedServer(args, env=env, cwd=config.parent, errlog=errlog) as server:
        yield server


@pytest.fixture(scope="module")
def unbound(config: Path, logs: Path, errlog: io.TextIOWrapper) -> Iterator[BoundedServer]:
    env = {"ASSISTANT_LOGS": str(logs)}
    with BoundedServer(
        ["mcp", "--config", str(config)], env=env, cwd=config.parent, errlog=errlog
    ) as server:
        yield server


def _error_code(result: dict[str, Any]) -> str | None:
    error = result["structuredContent"]["result"]["dispatcher"].get("error")
    return None if error is None else error["code"]


def _resolve_spans(logs: Path) -> int:
    return sum(1 for s in read_spans(logs) if s["name"] == "dispatcher.resolve")


# --------------------------------------------------------------------------- #
# --caller


@pytest.mark.parametrize("caller", [CALLER, SECOND])
@pytest.mark.parametrize("dry_run", [False, True])
def test_a_bound_caller_is_served(bound: BoundedServer, caller: str, dry_run: bool) -> None:
    result = bound.call("invoke_security_0", projection("echo", caller=caller, dry_run=dry_run))
    assert result["isError"] is False
    assert result["structuredContent"]["result"]["dispatcher"]["caller_module_id"] == caller


#: Callers that are not exactly a bound skill: another real skill and look-alikes of each kind.
LOOK_ALIKES: Final = [
    UNBOUND,
    "other",  # a module that is not a skill
    "Host",
    "HOST",
    "host ",
    " host",
    "host\n",
    "host\t",
    "host\u200b",  # zero-width space
    "h\u043est",  # Cyrillic o
    "\uff48\uff4f\uff53\uff54",  # fullwidth
    "ho\u0301st",  # combining accent
    "host.",
    "host._rtx",
    "host.child",
    "second._rtx",
    "tools",
    "",
    "host\x00",
]


@pytest.mark.parametrize("dry_run", [False, True])
@pytest.mark.parametrize("caller", LOOK_ALIKES)
def test_any_other_caller_is_refused_before_resolution(
    bound: BoundedServer, logs: Path, caller: str, dry_run: bool
) -> None:
    before = _resolve_spans(logs)
    result = bound.call("invoke_security_0", projection("echo", caller=caller, dry_run=dry_run))
    assert result["isError"] is True
    assert _error_code(result) == "dispatcher.host_caller_invalid"
    dispatcher = result["structuredContent"]["result"]["dispatcher"]
    assert dispatcher["caller_module_id"] is None  # nothing of the refused call is echoed
    assert dispatcher["target"] is None
    assert dispatcher["error"]["message"] == REFUSAL  # the same for every caller: no echo
    assert result["structuredContent"]["result"]["exit_code"] is None
    assert _resolve_spans(logs) == before


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(caller=st.text(max_size=24).filter(lambda text: text not in {CALLER, SECOND}))
def test_every_string_but_a_bound_skill_is_refused(bound: BoundedServer, caller: str) -> None:
    result = bound.call("invoke_security_0", projection("echo", caller=caller, dry_run=True))
    assert _error_code(result) == "dispatcher.host_caller_invalid"


def test_without_caller_binding_any_discoverable_skill_is_accepted(
    unbound: BoundedServer,
) -> None:
    for caller in (CALLER, SECOND, UNBOUND):
        result = unbound.call("invoke_security_0", projection("echo", caller=caller))
        assert result["isError"] is False, caller


@pytest.mark.parametrize(
    "extra",
    [
        pytest.param(["--caller", "other"], id="not-a-skill"),
        pytest.param(["--caller", "nosuch"], id="no-such-module"),
        pytest.param(["--caller", "host._rtx"], id="child-module"),
        pytest.param(["--caller", "Host"], id="wrong-case"),
        pytest.param(["--caller", "host "], id="trailing-space"),
        pytest.param(["--caller", ""], id="empty"),
        pytest.param(["--caller", "host", "--caller", "h\u043est"], id="one-of-two-bad"),
    ],
)
def test_a_caller_binding_that_names_no_skill_fails_at_start(
    config: Path, extra: list[str]
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "boring_dispatch", "mcp", "--config", str(config), *extra],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "is not a discoverable top-level skill of the repository" in done.stderr
    assert done.stdout == ""


def test_a_caller_binding_with_a_registry_fails_at_start() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "boring_dispatch",
            "mcp",
            "--registry",
            "examples.support_and_billing.support:SUPPORT",
            "--caller",
            "host",
        ],
        cwd=Path(__file__).resolve().parents[2],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "--caller binds a repository server (--config) only" in done.stderr


# --------------------------------------------------------------------------- #
# Optional arguments


def _without_arguments(**fields: object) -> dict[str, object]:
    return {"caller": CALLER, "interface": "tools.interface.echo", "version": 1, **fields}


#: arguments given (or not) -> what the echo gateway must see.
PARTIAL: Final = [
    pytest.param(None, [], "", id="no-arguments-member"),
    pytest.param({}, [], "", id="empty-arguments"),
    pytest.param({"positionals": ["a", "b"]}, ["a", "b"], "", id="positionals-only"),
    pytest.param({"options": {"name": "x"}}, ["--name", "x"], "", id="options-only"),
    pytest.param({"stdin": "s"}, [], "s", id="stdin-only"),
    pytest.param({"stdin": None}, [], "", id="stdin-null-only"),
    pytest.param({"positionals": ["a"], "stdin": "s"}, ["a"], "s", id="positionals-and-stdin"),
    pytest.param(
        {"options": {"tag": ["a", "b"]}, "stdin": "s"},
        ["--tag", "a", "b"],
        "s",
        id="options-and-stdin",
    ),
    pytest.param(
        {"positionals": ["-x"], "options": {"name": "y"}},
        ["--name", "y", "--", "-x"],
        "",
        id="positionals-and-options",
    ),
]


@pytest.mark.parametrize(("arguments", "argv", "stdin"), PARTIAL)
def test_left_out_arguments_mean_none(
    unbound: BoundedServer, arguments: dict[str, object] | None, argv: list[str], stdin: str
) -> None:
    call = _without_arguments() if arguments is None else _without_arguments(arguments=arguments)
    result = unbound.call("invoke_security_0", call)
    assert result["isError"] is False, result
    assert json.loads(result["structuredContent"]["result"]["stdout"]) == {
        "argv": argv,
        "stdin": stdin,
    }
    dry = unbound.call("invoke_security_0", {**call, "dry_run": True})
    assert dry["isError"] is False
    assert dry["structuredContent"]["result"]["dispatcher"]["dry_run"]["command"] == argv


@pytest.mark.parametrize(
    "arguments",
    [
        pytest.param(None, id="null"),
        pytest.param([], id="a-list"),
        pytest.param("", id="a-string"),
        pytest.param({"argv": ["a"]}, id="unknown-member"),
        pytest.param({"positionals": None}, id="positionals-null"),
        pytest.param({"options": None}, id="options-null"),
    ],
)
def test_given_arguments_are_still_checked_strictly(
    unbound: BoundedServer, arguments: object
) -> None:
    result = unbound.call("invoke_security_0", _without_arguments(arguments=arguments))
    assert _error_code(result) == "dispatcher.invalid_request"


def test_the_input_schema_no_longer_requires_arguments_and_stays_closed(
    unbound: BoundedServer,
) -> None:
    for tool in unbound.list_tools():
        schema = tool["inputSchema"]
        assert schema["required"] == ["caller", "interface"]
        assert schema["additionalProperties"] is False
        assert schema["properties"]["arguments"]["additionalProperties"] is False
