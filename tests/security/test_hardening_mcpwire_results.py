"""A handler's result that no surface could write is ``internal_error`` on every surface.

Findings: a result holding a lone surrogate (``os.listdir()`` of a file whose
name is not UTF-8) passed the pipeline's ASCII JSON check, and the MCP
server's writer then died on it, losing every call in flight; a 600-deep
result gave a bare JSON-RPC error instead of a structured observation. Now the
pipeline's result check refuses both (a lone surrogate anywhere, or nesting
deeper than ``MAX_RESULT_DEPTH``), so the Python API, ``dispatch_json``,
replay (API and CLI) and MCP all return ``internal_error`` with a correlation
id; a ``ToolError`` message keeps its text with each lone surrogate escaped.
Gateway output that is not UTF-8 reaches repository results as U+FFFD.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final, TextIO

import pytest
from hypothesis import given
from hypothesis import strategies as st

from boring_dispatch import Registry, Tool
from boring_dispatch.records import RouteRequest
from boring_dispatch.registry.pipeline import MAX_RESULT_DEPTH
from boring_dispatch.registry.replay import replay_lines
from boring_dispatch.registry.spec import load_registry
from boring_dispatch.repository.repository import Repository
from kits.cases import RepositorySpec, _write
from kits.mcp import gateway_module
from kits.mcpwire import BoundedMcpServer, write_hostile_table
from kits.strategies import json_values

CORRELATION_ID: Final = re.compile(r"[0-9A-Z]{26}")

#: Code points that make a string no UTF-8 writer can write, and some that are fine.
LONE: Final = [
    [0xD800],
    [0xDFFF],
    [0xDBFF],
    [0xDC00],
    [0x63, 0x61, 0x66, 0xDCE9, 0x2E, 0x74],
    [0xDC00, 0xD800],  # a pair in the wrong order is two lone surrogates
    [0x1F600, 0xD83D],  # a valid astral character, then half of one
]
FINE: Final = [[0x63, 0x61, 0x66, 0xE9], [0x1F600], [0xFFFD], [0x0], [0x10FFFF]]
#: File names that are not UTF-8; ``os.listdir()`` returns them with surrogate escapes.
NOT_UTF8_NAMES: Final = [b"caf\xe9.txt", b"\xff\xfe", b"\xed\xa0\x80", b"\xc0\xaf", b"ok-\x80"]


def assert_internal_error(envelope: dict[str, Any]) -> None:
    assert envelope["ok"] is False, envelope
    assert envelope["error"]["code"] == "internal_error"
    assert envelope["error"]["message"] == "internal error"
    assert CORRELATION_ID.fullmatch(envelope["error"]["correlation_id"])
    json.dumps(envelope, ensure_ascii=False).encode("utf-8")


@pytest.fixture(scope="module")
def table_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("table")
    write_hostile_table(directory)
    return directory


@pytest.fixture(scope="module")
def not_utf8_dirs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """One folder per name, each holding one real file named so."""
    folders = []
    for index, name in enumerate(NOT_UTF8_NAMES):
        folder = tmp_path_factory.mktemp(f"names{index}")
        # os.open: a bytes path, exactly these bytes as the file name.
        os.close(os.open(bytes(folder) + b"/" + name, os.O_CREAT | os.O_WRONLY, 0o600))
        folders.append(folder)
    return folders


@pytest.fixture
def table(table_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Registry:
    monkeypatch.syspath_prepend(str(table_dir))
    return load_registry("hostile_table:TABLE")


@pytest.fixture(scope="module")
def errlog(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TextIO]:
    with (tmp_path_factory.mktemp("stderr") / "server.log").open("w+", encoding="utf-8") as log:
        yield log


@pytest.fixture(scope="module")
def mcp_table(table_dir: Path, errlog: TextIO) -> Iterator[BoundedMcpServer]:
    with BoundedMcpServer(
        ["mcp", "--registry", "hostile_table:TABLE"], env={}, cwd=table_dir, errlog=errlog
    ) as server:
        yield server


def _hostile_calls(folders: list[Path]) -> list[tuple[str, dict[str, object]]]:
    calls: list[tuple[str, dict[str, object]]] = []
    calls += [("listdir", {"path": str(folder)}) for folder in folders]
    calls += [("raw_text", {"code_points": points}) for points in LONE]
    calls += [("raw_key", {"code_points": points}) for points in LONE]
    levels = [MAX_RESULT_DEPTH, MAX_RESULT_DEPTH + 10, 255, 600]
    calls += [("deep", {"levels": n, "kind": kind}) for n in levels for kind in ("list", "dict")]
    return calls


# --------------------------------------------------------------------------- #
# The pipeline: Python API, dispatch_json, replay


def test_every_hostile_result_is_internal_error_through_the_python_api_and_dispatch_json(
    table: Registry, not_utf8_dirs: list[Path]
) -> None:
    for name, arguments in _hostile_calls(not_utf8_dirs):
        assert_internal_error(table.dispatch(name, arguments).to_dict())
        request = json.dumps({"name": name, "args": arguments})
        assert_internal_error(table.dispatch_json(request).to_dict())


def test_the_same_tools_are_ok_when_the_result_is_writable(table: Registry) -> None:
    for points in FINE:
        observation = table.dispatch("raw_text", {"code_points": points})
        assert observation.ok, observation
        observation.to_json().encode("utf-8")
    deepest = MAX_RESULT_DEPTH - 1  # the outer [] adds one level
    for kind in ("list", "dict"):
        assert table.dispatch("deep", {"levels": deepest, "kind": kind}).ok


@pytest.mark.parametrize("points", LONE + FINE)
def test_a_tool_error_message_keeps_its_text_and_is_always_utf8(
    table: Registry, points: list[int]
) -> None:
    observation = table.dispatch("fail_with", {"code_points": points})
    envelope = observation.to_dict()
    assert envelope["ok"] is False
    error = envelope["error"]
    assert isinstance(error, dict)
    assert error["code"] == "tool_error"
    text = "".join(map(chr, points))
    assert error["message"] == "failed on " + text.encode("utf-8", "backslashreplace").decode()
    observation.to_json().encode("utf-8")


#: What the ``give`` tool returns next (one table for every example).
_GIVEN: list[object] = [None]
_GIVE: Final = Registry({"give": Tool(lambda: _GIVEN[0], description="Give.")})


@given(st.data())
def test_any_result_with_a_lone_surrogate_somewhere_is_internal_error(data: st.DataObject) -> None:
    value = data.draw(json_values(max_leaves=8).filter(_finite))
    points = data.draw(st.sampled_from(LONE))
    _GIVEN[0] = _spoil(copy.deepcopy(value), points, data.draw(st.randoms()))
    assert_internal_error(_GIVE.dispatch("give", {}).to_dict())
    _GIVEN[0] = value
    clean = _GIVE.dispatch("give", {})
    assert clean.ok
    clean.to_json().encode("utf-8")


def _finite(value: object) -> bool:
    return "Infinity" not in json.dumps(value) and "NaN" not in json.dumps(value)


def _spoil(value: object, points: list[int], rng: Any) -> object:
    """``value`` with a lone-surrogate string put in one place (a key, a member, or the root)."""
    bad = "".join(map(chr, points))
    containers = _containers(value)
    if not containers:
        return [value, bad]
    target = rng.choice(containers)
    if isinstance(target, list):
        target.insert(rng.randrange(len(target) + 1), bad)
    elif rng.random() < 0.5:
        target[bad] = 0
    else:
        target[rng.choice(list(target) or ["k"])] = bad
    return value


def _containers(value: object) -> list[Any]:
    found: list[Any] = []
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            found.append(item)
            pending.extend(item.values())
        elif isinstance(item, list):
            found.append(item)
            pending.extend(item)
    return found


def test_replay_api_and_cli_report_internal_error(
    table: Registry, table_dir: Path, not_utf8_dirs: list[Path], tmp_path: Path
) -> None:
    calls = _hostile_calls(not_utf8_dirs)
    lines = [json.dumps({"name": name, "args": arguments}) for name, arguments in calls]
    for entry in replay_lines(table, lines):
        assert_internal_error(entry.observation)
    trace = tmp_path / "trace.jsonl"
    trace.write_text("\n".join(lines) + "\n", encoding="utf-8")
    replay = ["replay", "--registry", "hostile_table:TABLE", "--live", str(trace)]
    done = subprocess.run(
        [sys.executable, "-m", "boring_dispatch", *replay],
        cwd=table_dir,
        capture_output=True,
        timeout=120,
        check=False,
    )
    printed = done.stdout.decode("utf-8").splitlines()
    assert len(printed) == len(calls), done.stderr
    for line in printed:
        assert_internal_error(json.loads(line))


# --------------------------------------------------------------------------- #
# MCP: a structured internal_error result, and the server lives on


def test_mcp_returns_a_structured_internal_error_and_keeps_serving(
    mcp_table: BoundedMcpServer, not_utf8_dirs: list[Path]
) -> None:
    for name, arguments in _hostile_calls(not_utf8_dirs):
        result = mcp_table.call(name, arguments)
        assert result["isError"] is True, (name, arguments)
        envelope = result["structuredContent"]["result"]
        assert_internal_error(envelope)
        assert json.loads(result["content"][0]["text"]) == envelope
        # The same session still answers: nothing in flight was lost.
        assert mcp_table.call("echo", {"text": "still here"})["isError"] is False


@pytest.mark.parametrize("points", LONE)
def test_mcp_tool_error_with_a_lone_surrogate_is_answered_escaped(
    mcp_table: BoundedMcpServer, points: list[int]
) -> None:
    result = mcp_table.call("fail_with", {"code_points": points})
    assert result["isError"] is True
    error = result["structuredContent"]["result"]["error"]
    assert error["code"] == "tool_error"
    assert error["message"].startswith("failed on ")
    assert "\\ud" in error["message"] or "\\U" in error["message"]


# --------------------------------------------------------------------------- #
# Repository results: gateway bytes that are not UTF-8

RAW_GATEWAY: Final = textwrap.dedent(
    """
    import sys
    from boring_dispatch.gateway import ArgvInterface


    class Raw(ArgvInterface):
        def run(self, argv):
            data = bytes.fromhex(argv[0])
            sys.stdout.buffer.write(data)
            sys.stderr.buffer.write(data)
            return 0


    class Relay(ArgvInterface):
        def run(self, argv):
            result = self.dispatch("tools.interface.raw", version=1, positionals=argv)
            sys.stdout.write(result.stdout)
            return 0
    """
)
RAW_BYTES: Final = [
    b"caf\xe9\n",
    b"\xed\xa0\x80",
    b"\xff\xfe\xfd",
    b"\xc0\xaf",
    b"ok \xe2\x82",  # a character cut in the middle
    b"\xf4\x90\x80\x80",  # beyond U+10FFFF
]


@pytest.fixture(scope="module")
def raw_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tools, source = gateway_module(
        "tools", {"raw": ("Raw", 0, None), "relay": ("Relay", 0, None)}, skill=True
    )
    spec = RepositorySpec(
        roots=("skills",),
        modules={"tools": tools},
        sources={"tools.source.main": source},
        files={"skills/tools/main.py": RAW_GATEWAY},
    )
    return _write(spec, tmp_path_factory.mktemp("raw"))


@pytest.mark.parametrize("data", RAW_BYTES)
def test_gateway_bytes_that_are_not_utf8_reach_results_as_replacement_characters(
    raw_config: Path, data: bytes
) -> None:
    expected = data.decode("utf-8", "replace")
    repository = Repository.open(raw_config)
    for target in ("raw", "relay"):
        request = RouteRequest(
            caller="tools", target=f"tools.interface.{target}", argv=(data.hex(),)
        )
        result = repository.invoke(request)
        assert result.exit_code == 0, result.stderr
        assert result.stdout == expected
        json.dumps(result.to_dict(), ensure_ascii=False).encode("utf-8")


def test_mcp_repository_results_with_gateway_bytes_that_are_not_utf8(
    raw_config: Path, errlog: TextIO
) -> None:
    with BoundedMcpServer(
        ["mcp", "--config", str(raw_config)], env={}, cwd=raw_config.parent, errlog=errlog
    ) as server:
        for data in RAW_BYTES:
            for target in ("raw", "relay"):
                result = server.call(
                    "invoke_security_0",
                    {
                        "caller": "tools",
                        "interface": f"tools.interface.{target}",
                        "version": 1,
                        "arguments": {"positionals": [data.hex()]},
                    },
                )
                assert result["isError"] is False, result
                streams = result["structuredContent"]["result"]
                assert streams["stdout"] == data.decode("utf-8", "replace")


# --------------------------------------------------------------------------- #
# Requests: a lone surrogate is not text, so a strict request refuses it


REQUESTS: Final = [
    '{{"name":"echo{e}","args":{{}}}}',
    '{{"name":"echo","args":{{"{e}":"x"}}}}',
    '{{"name":"echo","args":{{"text":"{e}"}}}}',
    '{{"name":"echo","args":{{"a":[["{e}"]]}}}}',
]


@pytest.mark.parametrize("escape", [r"\ud800", r"\udfff", r"\udbff\u0041", r"\ude00\ud83d"])
@pytest.mark.parametrize("template", REQUESTS)
def test_a_request_with_a_lone_surrogate_is_an_invalid_request(
    table: Registry, escape: str, template: str
) -> None:
    request = template.format(e=escape)
    for text in (request, request.encode()):
        envelope = table.dispatch_json(text).to_dict()
        assert envelope["ok"] is False
        assert envelope["error"] == {
            "code": "invalid_request",
            "message": "request is not valid Unicode text",
        }
    (entry,) = replay_lines(table, [request])
    assert entry.malformed


def test_a_request_with_a_raw_lone_surrogate_or_a_valid_pair_escape(table: Registry) -> None:
    raw = '{"name":"echo","args":{"text":"\ud800"}}'
    refused = table.dispatch_json(raw)
    assert refused.error is not None
    assert refused.error.code == "invalid_request"
    pair = table.dispatch_json(r'{"name":"echo","args":{"text":"\ud83d\ude00"}}')
    assert pair.ok
    assert pair.result == {"text": "\U0001f600"}
