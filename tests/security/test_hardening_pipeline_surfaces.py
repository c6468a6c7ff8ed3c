"""The pipeline findings hold on every surface that reaches a Python table.

Python ``dispatch`` and ``dispatch_json`` in process; ``dispatcher mcp
--registry`` as a real server spoken to over stdio. Each surface sees the same
observation for: a secret-bearing ``tool_error`` (withheld whole), a handler
that writes into its arguments (records unchanged), a result the handler
changes after returning (observation unchanged).
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

from boring_dispatch.registry.pipeline import WITHHELD_MESSAGE
from boring_dispatch.registry.spec import load_registry
from hardening_pipeline_kit import RawMcp, write_module

TABLE_SOURCE = textwrap.dedent(
    """
    from pathlib import Path
    from typing import Annotated, Any

    from boring_dispatch import Registry, Sensitive, Tool, ToolError
    from boring_dispatch.observe.audit import JsonLinesAuditSink, TraceRecorder

    HERE = Path(__file__).parent
    KEPT = []

    def login(user: str, password: Annotated[str, Sensitive]) -> str:
        raise ToolError(f"the provider refused {user}: wrong password")

    def meddle(payload: dict[str, Any]) -> str:
        payload.setdefault("inner", {})["token"] = "WRITTEN-BY-HANDLER"
        return "done"

    def keep() -> dict:
        result = {"small": [1]}
        KEPT.append(result)
        return result

    def grow() -> str:
        for kept in KEPT:
            kept["small"].append("x" * 100_000)
        return "grown"

    TABLE = Registry(
        {
            "login": Tool(login, description="Log in."),
            "meddle": Tool(meddle, description="Meddle."),
            "keep": Tool(keep, description="Keep."),
            "grow": Tool(grow, description="Grow."),
        },
        sinks=[
            JsonLinesAuditSink(HERE / "audit.jsonl"),
            TraceRecorder(HERE / "trace.jsonl"),
        ],
    )
    """
)

CALLS: list[tuple[str, dict[str, object]]] = [
    ("login", {"user": "ada", "password": "refused"}),
    ("login", {"user": "ada", "password": "o"}),
    ("meddle", {"payload": {"inner": {"a": 1}}}),
    ("keep", {}),
    ("grow", {}),
]


def _expected_login() -> dict[str, object]:
    return {"ok": False, "error": {"code": "tool_error", "message": WITHHELD_MESSAGE}}


def test_python_dispatch_json_and_mcp_agree_and_leak_nothing(tmp_path: Path) -> None:
    write_module(tmp_path, "surface_table", TABLE_SOURCE)
    in_process = tmp_path / "in_process"
    in_process.mkdir()
    write_module(in_process, "surface_table_local", TABLE_SOURCE)
    sys.path.insert(0, str(in_process))
    try:
        local = load_registry("surface_table_local:TABLE")
    finally:
        sys.path.remove(str(in_process))
    python = [local.dispatch(name, dict(args)).to_dict() for name, args in CALLS]
    from_json = [
        local.dispatch_json(json.dumps({"name": name, "args": args})).to_dict()
        for name, args in CALLS
    ]
    with RawMcp(["mcp", "--registry", "surface_table:TABLE"], cwd=tmp_path) as server:
        mcp = [server.call_raw(name, json.dumps(args)) for name, args in CALLS]
    structured = []
    for response in mcp:
        result = response["result"]
        assert isinstance(result, dict)
        structured.append(result["structuredContent"]["result"])

    for observations in (python, from_json, structured):
        assert observations[0] == _expected_login()
        assert observations[1] == _expected_login()
        assert observations[2] == {"ok": True, "result": "done"}
        assert observations[3] == {"ok": True, "result": {"small": [1]}}
    # The in-process observations of `keep` were taken before `grow` ran and did not grow.
    assert python[3] == {"ok": True, "result": {"small": [1]}}

    for directory in (tmp_path, in_process):
        for name in ("audit.jsonl", "trace.jsonl"):
            text = (directory / name).read_text(encoding="utf-8")
            assert "WRITTEN-BY-HANDLER" not in text
            assert "refused" not in text
            assert "wr[redacted]ng" not in text
        trace = [
            json.loads(line)
            for line in (directory / "trace.jsonl").read_text(encoding="utf-8").splitlines()
        ]
        meddled = [line for line in trace if line["name"] == "meddle"]
        assert all(line["args"] == {"payload": {"inner": {"a": 1}}} for line in meddled)
