"""A caller that is not a module ID is ``dispatcher.invalid_module_id``, on every surface.

The existing v6 implementation parses the caller as a module ID, so an empty
caller is ``invalid_module_id`` like any other malformed one; it was
``invalid_request`` here. The family: empty, whitespace, padded, look-alike,
upper case, over-long and structurally broken IDs, through the Python API,
the CLI (run and dry run) and the MCP tools.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

from boring_dispatch.errors import RouteError
from boring_dispatch.records import RouteRequest
from boring_dispatch.repository.repository import Repository
from kits.mcp import McpServer

CONFIG: Final = Path(__file__).resolve().parents[2] / "examples/repository/officina.toml"
TARGET: Final = "notes.interface.list-notes"
CODE: Final = "dispatcher.invalid_module_id"
CALLERS: Final = [
    "",
    " ",
    "\t",
    "\n",
    "notes ",
    " notes",
    "no tes",
    "Notes",
    "NOTES",
    "\uff4eotes",  # fullwidth n
    "n\u043etes",  # Cyrillic o
    "notes\u200b",  # zero-width space
    "not\u00e9s",
    "a" * 513,
    "a" * 5000,
    ".",
    "..",
    "notes.",
    ".notes",
    "a..b",
    "_rtx",
    "notes.interface",
    "notes/x",
    "notes\\x",
    "notes@1",
]


@pytest.mark.parametrize("caller", CALLERS)
def test_the_python_api_refuses_a_malformed_caller_as_an_invalid_module_id(caller: str) -> None:
    request = RouteRequest(caller=caller, target=TARGET)
    for attempt in (Repository.open(CONFIG).dry_run, Repository.open(CONFIG).invoke):
        with pytest.raises(RouteError) as caught:
            attempt(request)
        assert caught.value.code == CODE


def _cli(caller: str, *flags: str) -> dict[str, object]:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "boring_dispatch",
            "--config",
            str(CONFIG),
            "--caller-skill",
            caller,
            "--error-format",
            "json",
            *flags,
            TARGET,
        ],
        input=b"",
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == b""
    error = json.loads(done.stderr.decode().splitlines()[-1])
    assert isinstance(error, dict)
    return error


@pytest.mark.parametrize("caller", ["", " ", "\t", "notes ", "\uff4eotes", "Notes", "a" * 600])
@pytest.mark.parametrize("flags", [(), ("--dry-run",)])
def test_the_cli_refuses_a_malformed_caller_as_an_invalid_module_id(
    caller: str, flags: tuple[str, ...]
) -> None:
    assert _cli(caller, *flags)["code"] == CODE


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpServer]:
    log = tmp_path_factory.mktemp("mcp-caller") / "server.log"
    with (
        log.open("w+", encoding="utf-8") as errlog,
        McpServer(["mcp", "--config", str(CONFIG)], env={}, cwd=CONFIG.parent, errlog=errlog) as s,
    ):
        yield s


@pytest.mark.parametrize("caller", CALLERS)
def test_mcp_refuses_a_malformed_caller_as_an_invalid_module_id(
    server: McpServer, caller: str
) -> None:
    call = {
        "caller": caller,
        "interface": TARGET,
        "version": 1,
        "arguments": {"positionals": [], "options": {}, "stdin": None},
    }
    for dry_run in (False, True):
        result = server.call("invoke_security_0", {**call, "dry_run": dry_run})
        dispatcher = result["structuredContent"]["result"]["dispatcher"]
        assert dispatcher["error"]["code"] == CODE
        assert result["isError"] is True
