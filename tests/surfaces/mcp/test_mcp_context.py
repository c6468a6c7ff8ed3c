"""``dispatcher mcp --registry ... --context pkg.module:NAME``: injected arguments over MCP."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from kits.mcp import McpServer

CANARY = "mcp-canary-9d2f4e"

TABLE = textwrap.dedent(
    """
    import os
    from typing import Annotated
    from boring_dispatch import Injected, Registry, Sensitive, Tool, ToolError

    def lookup(invoice_id: int, api_token: Annotated[str, Sensitive, Injected]) -> dict:
        if invoice_id < 0:
            raise ToolError("token " + api_token + " refused")
        return {"invoice_id": invoice_id, "token_length": len(api_token)}

    TABLE = Registry({"lookup": Tool(lookup, description="Look up one invoice.")})

    def secrets():
        return {"api_token": os.environ["BILLING_TOKEN"]}

    def broken():
        raise RuntimeError("vault unreachable: " + os.environ["BILLING_TOKEN"])

    NOT_A_FUNCTION = 3
    """
)


@pytest.fixture
def table_dir(tmp_path: Path) -> Path:
    (tmp_path / "injected_table.py").write_text(TABLE, encoding="utf-8")
    return tmp_path


@pytest.fixture
def errlog(tmp_path: Path) -> Iterator[io.TextIOWrapper]:
    with (tmp_path / "stderr.log").open("w", encoding="utf-8") as log:
        yield log


def serve(directory: Path, errlog: io.TextIOWrapper, context: str) -> McpServer:
    return McpServer(
        ["mcp", "--registry", "injected_table:TABLE", "--context", context],
        env={"BILLING_TOKEN": CANARY},
        cwd=directory,
        errlog=errlog,
    )


def test_the_context_function_supplies_the_secret_the_model_never_sees(
    table_dir: Path, errlog: io.TextIOWrapper
) -> None:
    with serve(table_dir, errlog, "injected_table:secrets") as server:
        listed = server.list_tools()
        ok = server.call_wire("lookup", {"invoice_id": 7})
        sent = server.call_wire("lookup", {"invoice_id": 7, "api_token": "x"})
        failed = server.call_wire("lookup", {"invoice_id": -1})
    assert "api_token" not in json.dumps(listed)
    assert ok["structuredContent"]["result"] == {
        "ok": True,
        "result": {"invoice_id": 7, "token_length": len(CANARY)},
    }
    assert sent["_meta"]["boring-dispatch/code"] == "invalid_arguments"
    assert failed["_meta"]["boring-dispatch/code"] == "tool_error"
    assert CANARY not in json.dumps([listed, ok, sent, failed])
    errlog.flush()
    assert CANARY not in (table_dir / "stderr.log").read_text(encoding="utf-8")


def test_a_failing_context_function_is_internal_error_and_logs_no_text(
    table_dir: Path, errlog: io.TextIOWrapper
) -> None:
    with serve(table_dir, errlog, "injected_table:broken") as server:
        result = server.call_wire("lookup", {"invoice_id": 7})
    assert result["_meta"]["boring-dispatch/code"] == "internal_error"
    errlog.flush()
    log = (table_dir / "stderr.log").read_text(encoding="utf-8")
    assert "RuntimeError" in log
    assert CANARY not in log + json.dumps(result)


def test_without_a_context_the_injected_tool_is_internal_error(
    table_dir: Path, errlog: io.TextIOWrapper
) -> None:
    with McpServer(
        ["mcp", "--registry", "injected_table:TABLE"], env={}, cwd=table_dir, errlog=errlog
    ) as server:
        result = server.call_wire("lookup", {"invoice_id": 7})
    assert result["_meta"]["boring-dispatch/code"] == "internal_error"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--context", "injected_table:NOT_A_FUNCTION"], "not a function"),
        (["--context", "injected_table:missing"], "no top-level name"),
        (["--context", "not a spec"], "must look like pkg.module:NAME"),
    ],
)
def test_a_bad_context_spec_fails_before_the_session(
    table_dir: Path, arguments: list[str], message: str
) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "boring_dispatch",
            "mcp",
            "--registry",
            "injected_table:TABLE",
            *arguments,
        ],
        cwd=table_dir,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode != 0
    assert message in done.stderr


def test_context_with_a_repository_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "officina.toml"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "boring_dispatch",
            "mcp",
            "--config",
            str(config),
            "--context",
            "x:y",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode != 0
    assert "--context supplies a Python table (--registry) only" in done.stderr
