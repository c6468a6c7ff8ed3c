"""``dispatcher mcp``: a real server process driven through the SDK's stdio client.

One repository server (the initialize handshake hosts use today) and one
Python-table server are shared by the module; the orphan tests start their
own. Every call is checked against its exact structured result; trace ids
are matched by shape.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final
from unittest import mock

import pytest

from boring_dispatch import Registry
from boring_dispatch.observe.trace import valid_trace_id
from boring_dispatch.records import RouteRequest
from boring_dispatch.registry.spec import load_registry
from boring_dispatch.repository.repository import Repository
from boring_dispatch.surfaces.mcp._stdin import BoundedLineReader, Oversized
from boring_dispatch.surfaces.mcp._tools import INPUT_SCHEMA, OUTPUT_SCHEMA
from kits.gateways import process_running, wait_until, written
from kits.mcp import CALLER, McpServer, projection, read_spans, write_tools_repository

REPO_ROOT: Final = Path(__file__).resolve().parents[3]
EMPTY: Final = [{"type": "text", "text": ""}]
WARNINGS: Final = [
    {
        "code": "certification-status-unavailable",
        "message": "precomputed certification status is unavailable",
    }
]


class _TraceId:
    """Equal to any well-formed trace id (32 lowercase hex characters)."""

    def __eq__(self, other: object) -> bool:
        return valid_trace_id(other)

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return "<trace id>"


TRACE_ID: Final = _TraceId()
#: Ending gateways walks /proc (Linux); elsewhere they end at their own timeout.
needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")


# --------------------------------------------------------------------------- #
# Fixtures


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("logs")


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tools_repository(tmp_path_factory.mktemp("repo"))


@pytest.fixture(scope="module")
def errlog(tmp_path_factory: pytest.TempPathFactory) -> Iterator[io.TextIOWrapper]:
    with (tmp_path_factory.mktemp("stderr") / "server.log").open("w+", encoding="utf-8") as log:
        yield log


@pytest.fixture(scope="module")
def server(config: Path, logs: Path, errlog: io.TextIOWrapper) -> Iterator[McpServer]:
    env = {"ASSISTANT_LOGS": str(logs)}
    with McpServer(
        ["mcp", "--config", str(config)], env=env, cwd=config.parent, errlog=errlog
    ) as s:
        yield s


@pytest.fixture(scope="module")
def table(errlog: io.TextIOWrapper) -> Iterator[McpServer]:
    args = ["mcp", "--registry", "examples.support_and_billing.support:SUPPORT"]
    with McpServer(args, env={}, cwd=REPO_ROOT, errlog=errlog) as s:
        yield s


# --------------------------------------------------------------------------- #
# Expected results


def meta(
    name: str, *, level: int = 0, audiences: tuple[str, str] = ("machine", "machine")
) -> dict[str, object]:
    """Dispatcher metadata of a resolved route from ``host`` to ``tools.interface.<name>``."""
    return {
        "caller_module_id": CALLER,
        "target": f"tools.interface.{name}",
        "target_module_id": "tools",
        "security_level": level,
        "output_audiences": {"stdout": audiences[0], "stderr": audiences[1]},
        "warnings": WARNINGS,
    }


def ran(
    name: str,
    stdout: str,
    stderr: str,
    exit_code: int = 0,
    *,
    level: int = 0,
    audiences: tuple[str, str] = ("machine", "machine"),
) -> dict[str, object]:
    dispatcher = meta(name, level=level, audiences=audiences)
    dispatcher.update(
        trace_id=TRACE_ID, timed_out=False, stdout_truncated=False, stderr_truncated=False
    )
    return {
        "result": {
            "stdout": stdout,
            "stderr": stderr,
            "exit_code": exit_code,
            "dispatcher": dispatcher,
        }
    }


def refused(
    code: str,
    *,
    target: str | None,
    caller: str | None = CALLER,
    target_module_id: str | None = None,
    interface_id: str | None = None,
    traced: bool = True,
) -> dict[str, object]:
    error: dict[str, object] = {
        "schema_version": 1,
        "code": code,
        "caller_module_id": caller or "",
        "target_module_id": target_module_id or "",
        "message": mock.ANY,
    }
    if interface_id is not None:
        error["interface_id"] = interface_id
    dispatcher: dict[str, object] = {
        "caller_module_id": caller,
        "target": target,
        "target_module_id": target_module_id,
        "security_level": None,
        "output_audiences": {"stdout": "machine", "stderr": "machine"},
        "warnings": [],
        "error": error,
    }
    if traced:
        dispatcher["trace_id"] = TRACE_ID
    return {"result": {"stdout": "", "stderr": "", "exit_code": None, "dispatcher": dispatcher}}


def text(*blocks: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": block} for block in blocks] or EMPTY


# --------------------------------------------------------------------------- #
# Listing


def test_tools_list_shows_exactly_the_three_tier_tools_with_the_projection_schema(
    server: McpServer,
) -> None:
    tools = server.list_tools()
    assert [tool["name"] for tool in tools] == [
        "invoke_security_0",
        "invoke_security_1",
        "invoke_security_2",
    ]
    for level, tool in enumerate(tools):
        assert tool["inputSchema"] == INPUT_SCHEMA
        assert tool["outputSchema"] == OUTPUT_SCHEMA
        assert tool["description"].startswith(f"Security level {level}: ")
        assert f'"Security level: {level}"' in tool["description"]
        assert "dry_run" in tool["description"]
        assert 'then "--", then the positionals' in tool["description"]
    assert tools[0]["annotations"] == {
        "readOnlyHint": True,
        "destructiveHint": False,
        "openWorldHint": False,
    }
    assert "filesystem authority" in tools[1]["description"]
    assert "external requests" in tools[2]["description"]


def test_the_2026_protocol_lists_and_calls_the_same_tools(
    config: Path, logs: Path, errlog: io.TextIOWrapper
) -> None:
    env = {"ASSISTANT_LOGS": str(logs)}
    args = ["mcp", "--config", str(config)]
    with McpServer(args, env=env, cwd=config.parent, errlog=errlog, mode="auto") as modern:
        assert len(modern.list_tools()) == 3
        result = modern.call("invoke_security_0", projection("streams-human"))
    assert result == {
        "content": text("out\n"),
        "structuredContent": ran("streams-human", "out\n", "err\n", audiences=("human", "machine")),
        "isError": False,
    }


# --------------------------------------------------------------------------- #
# Audiences: every row of the seed's table


@pytest.mark.parametrize(
    ("name", "stdout", "stderr", "shown"),
    [
        pytest.param("streams-machine", "machine", "machine", (), id="machine"),
        pytest.param("streams-human", "human", "machine", ("out\n",), id="human"),
        pytest.param("streams-both", "both", "both", ("out\n", "err\n"), id="both"),
        pytest.param("streams-missing", "machine", "machine", (), id="missing"),
        pytest.param("streams-invalid", "machine", "machine", (), id="invalid"),
        pytest.param("streams-conflicting", "machine", "human", ("err\n",), id="conflicting"),
    ],
)
def test_text_content_holds_only_human_and_both_streams_and_structured_holds_everything(
    server: McpServer, name: str, stdout: str, stderr: str, shown: tuple[str, ...]
) -> None:
    result = server.call("invoke_security_0", projection(name))
    assert result == {
        "content": text(*shown),
        "structuredContent": ran(name, "out\n", "err\n", audiences=(stdout, stderr)),
        "isError": False,
    }


# --------------------------------------------------------------------------- #
# Tier gate, caller, authorization


@pytest.mark.parametrize(
    ("tool", "name", "level"),
    [
        pytest.param("invoke_security_1", "streams-human", 0, id="level-0-through-tier-1"),
        pytest.param("invoke_security_2", "write-own", 1, id="level-1-through-tier-2"),
        pytest.param("invoke_security_0", "write-own", 1, id="level-1-through-tier-0"),
        pytest.param("invoke_security_1", "fetch", 2, id="level-2-through-tier-1"),
    ],
)
def test_a_call_through_another_tier_is_a_security_level_mismatch(
    server: McpServer, tool: str, name: str, level: int
) -> None:
    result = server.call(tool, projection(name))
    interface = f"tools.interface.{name}"
    assert result == {
        "content": EMPTY,
        "structuredContent": refused(
            "dispatcher.security_level_mismatch",
            target=interface,
            target_module_id="tools",
            interface_id=interface,
        ),
        "isError": True,
    }
    message = result["structuredContent"]["result"]["dispatcher"]["error"]["message"]
    assert f"call invoke_security_{level}" in message


@pytest.mark.parametrize(("tool", "name", "level"), [(1, "write-own", 1), (2, "fetch", 2)])
def test_the_matching_tier_runs_the_interface(
    server: McpServer, tool: int, name: str, level: int
) -> None:
    result = server.call(f"invoke_security_{tool}", projection(name))
    assert result == {
        "content": text("out\n"),
        "structuredContent": ran(
            name, "out\n", "err\n", level=level, audiences=("human", "machine")
        ),
        "isError": False,
    }


@pytest.mark.parametrize("tool", ["invoke_security_0", "invoke_security_1", "invoke_security_2"])
def test_an_interface_without_a_contract_fails_closed_on_every_tier(
    server: McpServer, tool: str
) -> None:
    result = server.call(tool, projection("no-contract"))
    assert result == {
        "content": EMPTY,
        "structuredContent": refused(
            "dispatcher.security_level_unavailable",
            target="tools.interface.no-contract",
            target_module_id="tools",
        ),
        "isError": True,
    }


def test_a_caller_outside_the_export_policy_is_denied(server: McpServer) -> None:
    result = server.call("invoke_security_0", projection("private"))
    assert result == {
        "content": EMPTY,
        "structuredContent": refused(
            "dispatcher.unauthorized_caller",
            target="tools.interface.private",
            target_module_id="tools",
            interface_id="tools.interface.private",
        ),
        "isError": True,
    }


def test_a_caller_that_is_not_a_discoverable_top_level_skill_is_refused(
    server: McpServer,
) -> None:
    result = server.call("invoke_security_0", projection("streams-human", caller="other"))
    assert result == {
        "content": EMPTY,
        "structuredContent": refused(
            "dispatcher.host_caller_invalid",
            target="tools.interface.streams-human",
            caller="other",
        ),
        "isError": True,
    }


# --------------------------------------------------------------------------- #
# Dry run, live run, nested call, gateway failure


def test_a_dry_run_authorizes_and_compiles_without_launching_or_tracing(
    server: McpServer, config: Path
) -> None:
    arguments = projection("echo", positionals=["a"], options={"name": "x"}, dry_run=True)
    result = server.call("invoke_security_0", arguments)
    request = RouteRequest(CALLER, "tools.interface.echo", 1, ("a", "--name", "x"), tier=0)
    payload = Repository.open(config).dry_run(request)
    assert payload["command"] == ["a", "--name", "x"]
    assert payload["pattern"] == "any"
    dispatcher = meta("echo")
    dispatcher["dry_run"] = payload
    assert result == {
        "content": EMPTY,
        "structuredContent": {
            "result": {"stdout": "", "stderr": "", "exit_code": None, "dispatcher": dispatcher}
        },
        "isError": False,
    }


def test_a_live_run_compiles_options_after_positionals_and_sends_stdin(
    server: McpServer,
) -> None:
    options = {"name": "x", "tag": ["p", "q"], "--loud": True, "quiet": False, "n": None}
    arguments = projection("echo", positionals=["a", "b"], options=options, stdin="hello")
    result = server.call("invoke_security_0", arguments)
    argv = ["a", "b", "--name", "x", "--tag", "p", "q", "--loud"]
    stdout = json.dumps({"argv": argv, "stdin": "hello"}, sort_keys=True) + "\n"
    assert result == {
        "content": EMPTY,
        "structuredContent": ran("echo", stdout, ""),
        "isError": False,
    }


def test_a_positional_that_looks_like_a_flag_goes_after_a_double_dash(
    server: McpServer,
) -> None:
    arguments = projection("echo", positionals=["-b", "a"], options={"name": "x"})
    result = server.call("invoke_security_0", arguments)
    stdout = json.loads(result["structuredContent"]["result"]["stdout"])
    assert stdout == {"argv": ["--name", "x", "--", "-b", "a"], "stdin": ""}


def test_a_nested_call_runs_under_the_same_trace_id(server: McpServer, logs: Path) -> None:
    result = server.call("invoke_security_0", projection("nested"))
    nested = {"exit_code": 0, "stdout": "out\n", "stderr": "err\n"}
    assert result == {
        "content": EMPTY,
        "structuredContent": ran("nested", json.dumps(nested, sort_keys=True) + "\n", ""),
        "isError": False,
    }
    trace_id = result["structuredContent"]["result"]["dispatcher"]["trace_id"]
    spans = [
        (span["name"], span["interface_id"], span["status"])
        for span in read_spans(logs)
        if span["trace_id"] == trace_id
    ]
    assert sorted(spans) == [
        ("dispatcher.process", "tools.interface.nested", "ok"),
        ("dispatcher.process", "tools.interface.streams-both", "ok"),
        ("dispatcher.resolve", "tools.interface.nested", "ok"),
        ("gateway.interface", "tools.interface.nested", "ok"),
        ("gateway.interface", "tools.interface.streams-both", "ok"),
        ("mcp.tool_call", "tools.interface.nested", "ok"),
    ]


def test_a_failing_gateway_is_an_error_whose_text_follows_the_same_filter(
    server: McpServer,
) -> None:
    result = server.call("invoke_security_0", projection("fail"))
    assert result == {
        "content": text("fail: broken\n"),
        "structuredContent": ran(
            "fail", "partial\n", "fail: broken\n", 3, audiences=("machine", "both")
        ),
        "isError": True,
    }


def test_a_gateway_exception_stays_in_the_structured_stderr(server: McpServer) -> None:
    result = server.call("invoke_security_0", projection("raise", positionals=["x"]))
    structured = result["structuredContent"]["result"]
    assert "RuntimeError: gateway failed with x" in structured["stderr"]
    assert result == {
        "content": EMPTY,
        "structuredContent": ran("raise", "", structured["stderr"], 1),
        "isError": True,
    }


def test_every_non_dry_result_has_its_own_trace_id(server: McpServer) -> None:
    first = server.call("invoke_security_0", projection("streams-machine"))
    second = server.call("invoke_security_0", projection("private"))
    ids = {
        first["structuredContent"]["result"]["dispatcher"]["trace_id"],
        second["structuredContent"]["result"]["dispatcher"]["trace_id"],
    }
    assert len(ids) == 2
    assert all(valid_trace_id(trace_id) for trace_id in ids)


# --------------------------------------------------------------------------- #
# Malformed calls


def _without(key: str) -> dict[str, object]:
    value = projection("echo")
    del value[key]
    return value


def _with(path: tuple[str, ...], value: object) -> dict[str, object]:
    """The echo projection with ``value`` placed at ``path``."""
    call = projection("echo")
    place: Any = call
    for key in path[:-1]:
        place = place[key]
    place[path[-1]] = value
    return call


_HUGE_TOKEN: Final = "a" * (64 * 1024 + 1)
_MALFORMED: Final = [
    pytest.param(_without("caller"), id="missing-caller"),
    pytest.param(_without("interface"), id="missing-interface"),
    pytest.param(_with(("caller",), 7), id="caller-not-a-string"),
    pytest.param(_with(("version",), "1"), id="version-a-string"),
    pytest.param(_with(("version",), value=True), id="version-a-boolean"),
    pytest.param(_with(("version",), 0), id="version-zero"),
    pytest.param(_with(("arguments",), []), id="arguments-a-list"),
    pytest.param(_with(("arguments", "positionals"), [1]), id="positional-a-number"),
    pytest.param(_with(("arguments", "positionals"), "a"), id="positionals-a-string"),
    pytest.param(_with(("arguments", "options"), {"name": 1.5}), id="option-a-float"),
    pytest.param(_with(("arguments", "options"), {"name": {"a": 1}}), id="option-an-object"),
    pytest.param(_with(("arguments", "options"), {"--bad flag": "x"}), id="option-bad-name"),
    pytest.param(_with(("arguments", "options"), {"name": [True]}), id="option-list-bool"),
    pytest.param(_with(("arguments", "stdin"), 5), id="stdin-a-number"),
    pytest.param(_with(("dry_run",), "yes"), id="dry-run-a-string"),
    pytest.param(_with(("argv",), ["x"]), id="extra-field"),
    pytest.param(_with(("arguments", "env"), {}), id="extra-argument-field"),
    pytest.param(_with(("arguments", "positionals"), [_HUGE_TOKEN]), id="huge-positional"),
    pytest.param(_with(("arguments", "positionals"), ["b" * 60_000] * 20), id="huge-projection"),
    pytest.param(_with(("arguments", "positionals"), ["c"] * 2000), id="too-many-tokens"),
    pytest.param(_with(("arguments", "options"), {"name": [[[[[["deep"]]]]]]}), id="deep-nesting"),
]


@pytest.mark.parametrize("arguments", _MALFORMED)
def test_a_malformed_projection_is_an_invalid_request_result(
    server: McpServer, arguments: dict[str, object]
) -> None:
    result = server.call("invoke_security_0", arguments)
    assert result == {
        "content": EMPTY,
        "structuredContent": refused("dispatcher.invalid_request", target=None, caller=None),
        "isError": True,
    }


def test_stdin_over_the_cap_is_an_invalid_request_result(server: McpServer) -> None:
    result = server.call("invoke_security_0", projection("echo", stdin="s" * (4 * 1024 * 1024 + 1)))
    assert result == {
        "content": EMPTY,
        "structuredContent": refused("dispatcher.invalid_request", target="tools.interface.echo"),
        "isError": True,
    }


def test_missing_arguments_and_unknown_tools_are_invalid_request_results(
    server: McpServer,
) -> None:
    for name, arguments in (("invoke_security_0", None), ("invoke_security_3", projection("echo"))):
        result = server.call(name, arguments)
        assert result == {
            "content": EMPTY,
            "structuredContent": refused("dispatcher.invalid_request", target=None, caller=None),
            "isError": True,
        }


def test_the_server_keeps_serving_after_bad_calls(server: McpServer) -> None:
    server.call("invoke_security_0", {"caller": [], "interface": {}, "arguments": 3})
    server.call("no such tool", None)
    result = server.call("invoke_security_0", projection("streams-human"))
    assert result["content"] == text("out\n")
    assert result["isError"] is False


def test_a_message_over_the_wire_cap_gets_an_error_response_and_the_server_lives_on(
    server: McpServer,
) -> None:
    from mcp.shared.exceptions import MCPError

    with pytest.raises(MCPError):
        server.call("invoke_security_0", projection("echo", stdin="x" * (33 * 1024 * 1024)))
    assert server.call("invoke_security_0", projection("streams-human"))["isError"] is False


def test_an_oversized_line_is_skipped_and_only_its_edges_are_kept() -> None:
    ended: list[bool] = []
    lines = [
        b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x":"' + b"a" * 100 + b'"}}\n',
        b'{"x":"' + b"c" * 2000 + b'"}\n',
        b'{"jsonrpc":"2.0","id":8,"method":"ping"}\n',
    ]
    source = io.BytesIO(b"".join(lines))
    reader = BoundedLineReader(source, on_eof=lambda: ended.append(True), max_line_bytes=64)
    assert reader.readline() == Oversized(lines[0][:65], lines[0][-512:])
    assert reader.readline() == Oversized(lines[1][:65], lines[1][-512:])
    assert reader.readline() == lines[2]
    assert ended == []
    assert reader.readline() == b""
    assert reader.readline() == b""
    assert ended == [True]


# --------------------------------------------------------------------------- #
# Ending gateways


@needs_proc
def test_a_cancelled_call_ends_its_gateway_and_the_server_keeps_serving(
    server: McpServer, tmp_path: Path
) -> None:
    pid_file = tmp_path / "sleep.pid"
    error = server.call_with_timeout(
        "invoke_security_0", projection("sleep", positionals=[str(pid_file)]), timeout_s=1.0
    )
    assert error is not None
    assert wait_until(lambda: written(pid_file))
    gateway = int(pid_file.read_text().split()[0])
    assert wait_until(lambda: not process_running(gateway))
    assert server.call("invoke_security_0", projection("streams-human"))["isError"] is False


_CLIENT: Final = textwrap.dedent(
    """
    import json, sys
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    command, config, logs, arguments = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    extra = json.loads(sys.argv[5])

    async def main():
        params = StdioServerParameters(
            command=command,
            args=["-m", "boring_dispatch", "mcp", "--config", config, *extra],
            env={"ASSISTANT_LOGS": logs},
        )
        async with Client(params, mode="legacy") as client:
            await client.call_tool("invoke_security_0", json.loads(arguments))

    anyio.run(main)
    """
)


def _pids(path: Path) -> tuple[int, int]:
    gateway, parent = path.read_text().split()
    return int(gateway), int(parent)


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            found.update(int(child) for child in (task / "children").read_text().split())
    return found


@needs_proc
@pytest.mark.parametrize("mode", [(), ("--spawn-gateways",)], ids=["forked", "spawned"])
@pytest.mark.parametrize("ending", ["client-killed", "server-terminated", "server-killed"])
def test_ending_the_session_mid_call_leaves_no_gateway_behind(
    config: Path, logs: Path, tmp_path: Path, ending: str, mode: tuple[str, ...]
) -> None:
    base = tmp_path / "sleep"
    arguments = json.dumps(projection("sleep-nested", positionals=[str(base)]))
    client = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _CLIENT,
            sys.executable,
            str(config),
            str(logs),
            arguments,
            json.dumps(list(mode)),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    outer_file, inner_file = Path(f"{base}.outer"), Path(f"{base}.inner")
    try:
        assert wait_until(lambda: written(outer_file) and written(inner_file), timeout_s=30.0)
        outer, parent = _pids(outer_file)
        inner, _ = _pids(inner_file)
        # The client's one child is the MCP server; a forked gateway's parent is the
        # fork server (the MCP server's child), a spawned one's the MCP server itself.
        (mcp_server,) = _children(client.pid)
        assert parent == mcp_server if mode else parent in _children(mcp_server)
        assert all(process_running(pid) for pid in (outer, inner, mcp_server))
        if ending == "client-killed":
            client.kill()
        elif ending == "server-killed":
            os.kill(mcp_server, signal.SIGKILL)  # no handler runs: the children must end alone
        else:
            os.kill(mcp_server, signal.SIGTERM)
        assert wait_until(lambda: not process_running(outer), timeout_s=10.0)
        assert wait_until(lambda: not process_running(inner), timeout_s=10.0)
        assert wait_until(lambda: not process_running(mcp_server), timeout_s=10.0)
    finally:
        client.kill()
        client.wait(timeout=10)


# --------------------------------------------------------------------------- #
# Python tables


@pytest.fixture
def support(monkeypatch: pytest.MonkeyPatch) -> Registry:
    """The example table, loaded in this process the way the server loads it."""
    monkeypatch.syspath_prepend(str(REPO_ROOT))
    return load_registry("examples.support_and_billing.support:SUPPORT")


def test_a_python_table_lists_its_own_tools_and_schemas(
    table: McpServer, support: Registry
) -> None:
    listed = table.list_tools()
    expected = support.tool_schemas("mcp")
    assert [
        {"name": t["name"], "description": t["description"], "inputSchema": t["inputSchema"]}
        for t in listed
    ] == expected
    assert all(t["outputSchema"] == OUTPUT_SCHEMA for t in listed)


@pytest.mark.parametrize(
    ("name", "arguments", "shown"),
    [
        pytest.param("get_job", {"job_id": 7}, True, id="ok"),
        pytest.param("get_job", {"job_id": 99}, True, id="tool-error"),
        pytest.param("get_job", {"job_id": "7"}, True, id="invalid-arguments"),
        pytest.param("refund", {"invoice_id": "INV-1001"}, False, id="unknown-tool"),
    ],
)
def test_a_python_table_call_returns_the_observation_of_the_same_dispatch(
    table: McpServer, support: Registry, name: str, arguments: dict[str, object], shown: bool
) -> None:
    observation = support.dispatch(name, arguments)
    result = table.call(name, arguments)
    assert result == {
        "content": text(observation.to_json()) if shown else EMPTY,
        "structuredContent": {"result": observation.to_dict()},
        "isError": not observation.ok,
    }


def test_a_machine_audience_tool_shows_no_text(tmp_path: Path, errlog: io.TextIOWrapper) -> None:
    (tmp_path / "machine_table.py").write_text(
        textwrap.dedent(
            """
            from boring_dispatch import Registry, Tool

            def count(word: str) -> dict:
                return {"letters": len(word)}

            TABLE = Registry({"count": Tool(count, description="Count.", audience="machine")})
            """
        ),
        encoding="utf-8",
    )
    with McpServer(
        ["mcp", "--registry", "machine_table:TABLE"], env={}, cwd=tmp_path, errlog=errlog
    ) as machine:
        result = machine.call("count", {"word": "four"})
    assert result == {
        "content": EMPTY,
        "structuredContent": {"result": {"ok": True, "result": {"letters": 4}}},
        "isError": False,
    }
