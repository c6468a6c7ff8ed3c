"""Over MCP: the outcome code in ``_meta``, and confirm tools approved through elicitation.

A real ``dispatcher mcp --registry`` process and the official SDK client,
which declares elicitation only when it is given a callback.
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kits.mcp import McpServer

TABLE = textwrap.dedent(
    """
    from pathlib import Path
    from typing import Annotated
    from boring_dispatch import Registry, Sensitive, Tool, ToolError

    RUNS = Path(__file__).with_name("runs.txt")

    def refund(invoice_id: int) -> dict:
        with RUNS.open("a") as runs:
            runs.write(f"refund {invoice_id}\\n")
        return {"refunded": invoice_id}

    def look(invoice_id: int) -> dict:
        if invoice_id < 0:
            raise ToolError("no such invoice")
        return {"invoice_id": invoice_id}

    def pay(card: Annotated[str, Sensitive], amount: int) -> dict:
        return {"paid": amount}

    TABLE = Registry({
        "pay": Tool(pay, description="Pay with a card.", confirm=True),
        "refund": Tool(refund, description="Refund one invoice.", confirm=True),
        "look": Tool(look, description="Look up one invoice."),
    })
    """
)

Answer = Callable[[str, dict[str, Any]], tuple[str, dict[str, Any] | None]]


@pytest.fixture
def table_dir(tmp_path: Path) -> Path:
    (tmp_path / "confirm_table.py").write_text(TABLE, encoding="utf-8")
    return tmp_path


def serve(directory: Path, errlog: io.TextIOWrapper, answer: Answer | None) -> McpServer:
    return McpServer(
        ["mcp", "--registry", "confirm_table:TABLE"],
        env={},
        cwd=directory,
        errlog=errlog,
        elicitation=answer,
    )


@pytest.fixture
def errlog(tmp_path: Path) -> Iterator[io.TextIOWrapper]:
    with (tmp_path / "stderr.log").open("w", encoding="utf-8") as log:
        yield log


def runs(directory: Path) -> list[str]:
    path = directory / "runs.txt"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def code_of(result: dict[str, Any]) -> str:
    return str(result["structuredContent"]["result"].get("error", {}).get("code", "ok"))


def test_meta_carries_the_code_and_whether_a_retry_can_help(
    table_dir: Path, errlog: io.TextIOWrapper
) -> None:
    cases: list[tuple[str, dict[str, object], str, bool]] = [
        ("look", {"invoice_id": 7}, "ok", False),
        ("look", {"invoice_id": "7"}, "invalid_arguments", True),
        ("look", {"invoice_id": 7, "x": 1}, "invalid_arguments", True),
        ("look", {"invoice_id": -1}, "tool_error", False),
        ("nope", {}, "unknown_tool", False),
        ("refund", {"invoice_id": 7}, "denied", False),
    ]
    with serve(table_dir, errlog, None) as server:
        for name, arguments, code, retryable in cases:
            result = server.call_wire(name, arguments)
            assert result["_meta"] == {
                "boring-dispatch/code": code,
                "boring-dispatch/retryable": retryable,
            }
            assert code_of(result) == code
            assert result.get("isError", False) is (code != "ok")


def test_without_the_capability_a_confirm_tool_stays_denied(
    table_dir: Path, errlog: io.TextIOWrapper
) -> None:
    with serve(table_dir, errlog, None) as server:
        assert code_of(server.call_wire("refund", {"invoice_id": 7})) == "denied"
        assert server.elicited == []
    assert runs(table_dir) == []


def test_an_accepted_elicitation_runs_the_call_once(
    table_dir: Path, errlog: io.TextIOWrapper
) -> None:
    with serve(table_dir, errlog, lambda *_: ("accept", {"approve": True})) as server:
        result = server.call_wire("refund", {"invoice_id": 7})
        assert result["structuredContent"]["result"] == {"ok": True, "result": {"refunded": 7}}
        ((message, schema),) = server.elicited
        assert "'refund'" in message
        assert '"invoice_id": 7' in message
        assert schema["required"] == ["approve"]
        # A tool without confirm never asks.
        assert code_of(server.call_wire("look", {"invoice_id": 1})) == "ok"
        assert len(server.elicited) == 1
    assert runs(table_dir) == ["refund 7"]


NOT_A_CLEAR_YES: list[tuple[str, dict[str, Any] | None]] = [
    ("accept", {"approve": False}),
    ("accept", {"approve": "true"}),
    ("accept", {"approve": 1}),
    ("accept", {}),
    ("accept", None),
    ("accept", {"approve": True, "also": "x"}),
    ("decline", None),
    ("cancel", None),
    ("decline", {"approve": True}),
]


def test_anything_but_a_clear_yes_leaves_the_call_denied(
    table_dir: Path, errlog: io.TextIOWrapper
) -> None:
    pending = list(NOT_A_CLEAR_YES)
    with serve(table_dir, errlog, lambda *_: pending.pop(0)) as server:
        for answer in NOT_A_CLEAR_YES:
            result = server.call_wire("refund", {"invoice_id": 7})
            assert code_of(result) == "denied", answer
        assert len(server.elicited) == len(NOT_A_CLEAR_YES)
    assert runs(table_dir) == []


def test_bad_arguments_are_refused_after_the_approval_without_running(
    table_dir: Path, errlog: io.TextIOWrapper
) -> None:
    with serve(table_dir, errlog, lambda *_: ("accept", {"approve": True})) as server:
        assert code_of(server.call_wire("refund", {"invoice_id": "7"})) == "invalid_arguments"
    assert runs(table_dir) == []


def test_the_prompt_shows_no_sensitive_argument(table_dir: Path, errlog: io.TextIOWrapper) -> None:
    card = "4111-1111-canary-1111"
    with serve(table_dir, errlog, lambda *_: ("accept", {"approve": True})) as server:
        result = server.call_wire("pay", {"card": card, "amount": 5, "extra": card})
        assert code_of(result) == "invalid_arguments"
        result = server.call_wire("pay", {"card": card, "amount": 5})
        assert result["structuredContent"]["result"] == {"ok": True, "result": {"paid": 5}}
        messages = [message for message, _ in server.elicited]
    assert len(messages) == 2
    assert all(card not in message for message in messages)
    assert '"card": "[redacted]"' in messages[1]
    assert '"amount": 5' in messages[1]
