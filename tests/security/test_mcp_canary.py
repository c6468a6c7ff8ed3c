"""Canary secrets through a real ``dispatcher mcp`` process: where they may and may not appear.

A canary is passed as a gateway argument, on stdin, in the server's
environment and inside a gateway's exception. Machine-audience output may
carry it in ``structuredContent`` (that is who it is for), but it must never
reach text content, a span file or the server's own log; the environment
canary must not reach the gateway at all.
"""

from __future__ import annotations

import os
from typing import Any, Final

import pytest

from kits.mcp import McpServer, projection, span_text, write_tools_repository

ARGUMENT: Final = "canary-argument-" + os.urandom(8).hex()
STDIN: Final = "canary-stdin-" + os.urandom(8).hex()
ENVIRONMENT: Final = "canary-environment-" + os.urandom(8).hex()
EXCEPTION: Final = "canary-exception-" + os.urandom(8).hex()
CANARIES: Final = (ARGUMENT, STDIN, ENVIRONMENT, EXCEPTION)


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Run every canary call once; return the results, the logs directory and the server log."""
    base = tmp_path_factory.mktemp("canary")
    config = write_tools_repository(base / "repo")
    logs = base / "logs"
    env = {
        "ASSISTANT_LOGS": str(logs),
        "BORING_DISPATCH_TEST_TOKEN": ENVIRONMENT,
        "OPENAI_API_KEY": ENVIRONMENT,
        "PYTHONSTARTUP": ENVIRONMENT,
    }
    errlog_path = base / "server.log"
    calls = {
        "argument": projection("echo", positionals=[ARGUMENT], options={"name": "x"}),
        "stdin": projection("echo", stdin=STDIN),
        "environment": projection("env"),
        "exception": projection("raise", positionals=[EXCEPTION]),
        "denied-argument": projection("private", positionals=[ARGUMENT], stdin=STDIN),
        "refused-option": projection("echo", options={"name": 1.5, "tag": ARGUMENT}),
        "dry-run": projection("echo", positionals=[ARGUMENT], stdin=STDIN, dry_run=True),
    }
    with (
        errlog_path.open("w", encoding="utf-8") as errlog,
        McpServer(["mcp", "--config", str(config)], env=env, cwd=base, errlog=errlog) as server,
    ):
        results = {name: server.call("invoke_security_0", args) for name, args in calls.items()}
    return {"results": results, "logs": logs, "errlog": errlog_path.read_text(encoding="utf-8")}


def _texts(result: dict[str, Any]) -> str:
    return "".join(block["text"] for block in result["content"])


def test_no_canary_reaches_text_content_of_machine_output_or_refusals(
    places: dict[str, Any],
) -> None:
    for name, result in places["results"].items():
        shown = _texts(result)
        assert not any(canary in shown for canary in CANARIES), name


def test_the_structured_result_keeps_machine_output_that_carries_a_canary(
    places: dict[str, Any],
) -> None:
    results = places["results"]
    assert ARGUMENT in results["argument"]["structuredContent"]["result"]["stdout"]
    assert STDIN in results["stdin"]["structuredContent"]["result"]["stdout"]
    assert EXCEPTION in results["exception"]["structuredContent"]["result"]["stderr"]


def test_refusals_never_echo_argument_values(places: dict[str, Any]) -> None:
    for name in ("denied-argument", "refused-option"):
        structured = repr(places["results"][name]["structuredContent"])
        assert ARGUMENT not in structured, name
        assert STDIN not in structured, name


def test_the_environment_canary_never_reaches_the_gateway(places: dict[str, Any]) -> None:
    assert places["results"]["environment"]["isError"] is False
    for result in places["results"].values():
        assert ENVIRONMENT not in repr(result)


def test_no_canary_is_written_to_a_span_file_or_the_server_log(places: dict[str, Any]) -> None:
    spans = span_text(places["logs"])
    assert '"name":"gateway.interface"' in spans  # spans were written at all
    for canary in CANARIES:
        assert canary not in spans
        assert canary not in places["errlog"]
