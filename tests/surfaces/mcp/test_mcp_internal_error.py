"""A bug inside the dispatcher, met during an MCP call, is reported and logged without its text."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from boring_dispatch.repository.repository import Repository
from boring_dispatch.surfaces.mcp._calls import RepositoryCalls
from kits.mcp import projection, write_tools_repository

CANARY = "CANARY-internal-7e1"


def test_an_unexpected_exception_becomes_internal_error_with_a_logged_correlation_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    repository = Repository.open(write_tools_repository(tmp_path))

    def broken(*_: object, **__: object) -> object:
        raise RuntimeError(f"bug while holding {CANARY}")

    monkeypatch.setattr(Repository, "resolve_live", broken)  # the live path of MCP calls
    with caplog.at_level(logging.ERROR, logger="boring_dispatch"):
        outcome = RepositoryCalls(repository).call(
            "invoke_security_0", projection("echo", positionals=[CANARY]), trace_id="t" * 32
        )
    result = outcome.structured["result"]
    assert isinstance(result, dict)
    error = result["dispatcher"]["error"]
    assert error["code"] == "dispatcher.internal_error"
    found = re.search(r"correlation id ([0-9A-Z]{26})", error["message"])
    assert found is not None
    assert outcome.is_error is True
    assert outcome.texts == ("",)
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert found.group(1) in logged
    assert "RuntimeError" in logged
    assert "broken" in logged  # the frames are there
    assert CANARY not in logged
    assert CANARY not in str(outcome.structured)
