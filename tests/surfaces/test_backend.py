"""The backend protocol: a Python table and a repository behind the same front-end code.

Both implementations are built on real tables (``kits.fixture_tables:TABLE`` and
the example repository). The CLI's ``names``, ``describe`` and ``replay`` run
in-process through ``_commands.run`` for either, and each gives what its own
table says, for a family of names that includes unknown ones. The MCP half
(tools, instructions, one call) is driven through the same protocol methods
the server uses.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Final

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boring_dispatch._quote import shown
from boring_dispatch.errors import DispatchError, RouteError, UnknownTool
from boring_dispatch.registry.replay import replay_lines
from boring_dispatch.repository.offline.describe import describe, render_description
from boring_dispatch.repository.offline.replay_lines import replay_repository
from boring_dispatch.repository.repository import Repository
from boring_dispatch.surfaces._backend import Backend, ToolListing
from boring_dispatch.surfaces._repository_backend import REPOSITORY_INSTRUCTIONS, RepositoryBackend
from boring_dispatch.surfaces._table_backend import TableBackend
from boring_dispatch.surfaces.cli._commands import run
from boring_dispatch.surfaces.mcp._tools import TIER_TOOLS
from boring_dispatch.surfaces.mcp.server import _listed_tools
from kits.fixture_tables import TABLE

EXAMPLE: Final = Path(__file__).resolve().parents[2] / "examples" / "repository" / "officina.toml"
TABLE_SPEC: Final = "kits.fixture_tables:TABLE"
KINDS: Final = ("table", "repository")

#: Names each kind knows, and names it does not (wrong kind, disabled, near misses, junk).
KNOWN: Final = {
    "table": ("finish", "get_job", "refund"),
    "repository": (
        "notes._rtx.interface.list-notes",
        "notes._rtx.interface.read-note",
        "textkit.interface.word-count",
        "vault.interface.setup",
    ),
}
UNKNOWN: Final = {
    "table": ("hidden", "nope", "", "get_job ", "GET_JOB", "notes._rtx.interface.list-notes"),
    "repository": (
        "notes._rtx.interface.nope",
        "nope",
        "",
        "notes._rtx.interface.list-notes@9",
        "ghost._rtx.interface.list-notes",
        "get_job",
    ),
}


def _table_option(kind: str) -> list[str]:
    return ["--registry", TABLE_SPEC] if kind == "table" else ["--config", str(EXAMPLE)]


def _backend(kind: str) -> Backend:
    if kind == "table":
        return TableBackend(TABLE)
    return RepositoryBackend(Repository.open(str(EXAMPLE)))


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_both_implementations_satisfy_the_protocol(kind: str) -> None:
    backend: Backend = _backend(kind)  # mypy checks the structure; isinstance the members
    assert isinstance(backend, Backend)
    assert type(backend.tool_spans) is bool
    assert backend.names() == tuple(sorted(backend.names()))
    assert all(isinstance(tool, ToolListing) for tool in backend.tools())


def test_only_the_table_backend_has_fixture_files_and_only_the_repository_instructions() -> None:
    table, repository = _backend("table"), _backend("repository")
    assert table.fixture_table() is TABLE
    assert repository.fixture_table() is None
    assert table.instructions is None
    assert repository.instructions == REPOSITORY_INSTRUCTIONS
    assert (table.tool_spans, repository.tool_spans) == (False, True)


def test_names_through_the_cli_are_each_tables_allowlist(
    kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = (
        TABLE.names() if kind == "table" else Repository.open(str(EXAMPLE)).exported_interfaces()
    )
    assert run("names", _table_option(kind)) == 0
    out = capsys.readouterr().out
    assert tuple(out.splitlines()) == expected
    assert set(KNOWN[kind]) <= set(expected)
    assert not set(UNKNOWN[kind]) & set(expected)


def _expected_description(kind: str, name: str) -> str | type[DispatchError]:
    """What the table itself says about ``name``, without the backend."""
    if kind == "table":
        schemas = [s for s in TABLE.tool_schemas("mcp") if s["name"] == name]
        if not schemas:
            return UnknownTool
        return json.dumps(schemas[0], indent=2, sort_keys=True) + "\n"
    try:
        return render_description(describe(Repository.open(str(EXAMPLE)), name))
    except RouteError as error:
        return type(error)


@pytest.mark.parametrize(
    ("kind", "name"),
    [(k, n) for k in KINDS for n in (*KNOWN[k], *UNKNOWN[k])],
)
def test_describe_through_the_cli_prints_each_tables_own_answer(
    kind: str, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = _expected_description(kind, name)
    status = run("describe", [*_table_option(kind), "--error-format", "json", "--", name])
    captured = capsys.readouterr()
    if isinstance(expected, str):
        assert name in KNOWN[kind]
        assert (status, captured.out, captured.err) == (0, expected, "")
        return
    assert name in UNKNOWN[kind]
    assert captured.out == ""
    error = json.loads(captured.err)
    assert error["code"] == expected.code
    assert status == expected.exit_code == 2


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(KINDS),
    name=st.one_of(
        st.sampled_from([*KNOWN["table"], *KNOWN["repository"]]),
        st.text(max_size=40),
        st.from_regex(r"[a-z]{1,6}(\._rtx)?\.interface\.[a-z-]{1,10}", fullmatch=True),
    ),
)
def test_describe_knows_exactly_the_allowlist_and_refuses_the_rest_with_a_code(
    kind: str, name: str
) -> None:
    backend = _backend(kind)
    expected = _expected_description(kind, name)
    if isinstance(expected, str):
        assert backend.describe(name) == expected
        assert name in backend.names()
    else:
        with pytest.raises(expected):
            backend.describe(name)
        assert name not in backend.names()


@given(name=st.text(min_size=121, max_size=5000).filter(lambda n: n not in KNOWN["table"]))
@settings(max_examples=30, deadline=None)
def test_an_unknown_name_is_quoted_in_the_message_cut_like_every_untrusted_value(
    name: str,
) -> None:
    with pytest.raises(UnknownTool) as refused:
        _backend("table").describe(name)
    message = str(refused.value)
    assert message == f"no tool named {shown(name)}"
    assert len(message) <= len("no tool named ...") + 2 + 120 * 10  # 120 characters, escaped


#: Recorded lines per kind: calls that succeed, an unknown name, a malformed line,
#: and a line whose recorded outcome no longer matches.
TRACES: Final = {
    "table": [
        {"name": "get_job", "args": {"job_id": 7}},
        {"name": "nope", "args": {}},
        "not json",
        {"name": "get_job", "args": {"job_id": 8}, "observation": {"ok": True, "result": {}}},
        {"name": "hidden", "args": {"answer": "x"}},
    ],
    "repository": [
        {"caller": "notes", "interface": "notes._rtx.interface.list-notes", "argv": []},
        {"caller": "notes", "interface": "notes._rtx.interface.nope", "argv": []},
        "not json",
        {
            "caller": "notes",
            "interface": "notes._rtx.interface.list-notes",
            "argv": [],
            "expected": {"command": ["something", "else"]},
        },
        {"caller": "nobody", "interface": "notes._rtx.interface.read-note", "argv": ["x"]},
    ],
}


def _trace_lines(kind: str) -> list[str]:
    return [line if isinstance(line, str) else json.dumps(line) for line in TRACES[kind]]


def _expected_replay(kind: str) -> tuple[list[dict[str, object]], bool]:
    """The records the table's own replay gives, and whether any line differs."""
    lines = _trace_lines(kind)
    if kind == "table":
        table_lines = list(replay_lines(TABLE, lines))
        return [e.observation for e in table_lines], any(e.differs for e in table_lines)
    repository = Repository.open(str(EXAMPLE))
    repo_lines = list(replay_repository(repository, lines, dry_run=True))
    return [e.outcome for e in repo_lines], any(e.differs for e in repo_lines)


def _without_correlation(record: object) -> object:
    if isinstance(record, dict):
        return {k: _without_correlation(v) for k, v in record.items() if k != "correlation_id"}
    return record


def test_replay_through_the_cli_gives_each_tables_own_records(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = tmp_path / "trace.jsonl"
    trace.write_text("\n".join(_trace_lines(kind)) + "\n")
    expected, differs = _expected_replay(kind)
    assert differs  # the stale line
    flag = "--live" if kind == "table" else "--dry-run"  # a table has no dry run
    status = run("replay", [*_table_option(kind), flag, str(trace)])
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert status == 1
    assert len(printed) == len(TRACES[kind])
    assert [_without_correlation(p) for p in printed] == [
        _without_correlation(json.loads(json.dumps(e, sort_keys=True))) for e in expected
    ]
    codes = [_error_code(record) for record in printed]
    if kind == "table":
        assert codes == [None, "unknown_tool", "invalid_request", None, "unknown_tool"]
    else:
        assert codes == [
            None,
            "dispatcher.interface_not_found",
            "dispatcher.invalid_request",
            None,
            codes[4],
        ]
        assert codes[4] is not None


def _error_code(record: dict[str, object]) -> str | None:
    error = record.get("error")
    return str(error["code"]) if isinstance(error, dict) else None


def test_each_backend_lists_its_own_tools_through_the_server(kind: str) -> None:
    tools = _listed_tools(_backend(kind))
    if kind == "table":
        schemas = TABLE.tool_schemas("mcp")
        assert [t.name for t in tools] == [s["name"] for s in schemas]
        assert [t.input_schema for t in tools] == [s["inputSchema"] for s in schemas]
        assert all(t.title is None and t.annotations is None for t in tools)
    else:
        assert [t.name for t in tools] == list(TIER_TOOLS)
        assert all(t.title and t.annotations is not None for t in tools)


_Asked = list[tuple[str, str]]


def _call(backend: Backend, name: str, arguments: dict[str, object], asked: _Asked) -> object:
    async def confirm(tool: str, shown: str) -> bool:
        asked.append((tool, shown))
        return False

    async def main() -> object:
        slots = anyio.CapacityLimiter(1)
        outcome = await backend.call(
            name, arguments, trace_id="0" * 32, slots=slots, confirm=confirm
        )
        assert slots.borrowed_tokens == 0  # the slot is given back
        return outcome.structured

    return anyio.run(main)


CALLS: Final[
    dict[str, list[tuple[str, dict[str, object], Callable[[dict[str, object]], bool]]]]
] = {
    "table": [
        ("get_job", {"job_id": 7}, lambda r: r["ok"] is True),
        ("nope", {}, lambda r: _code(r) == "unknown_tool"),
        ("get_job", {"job_id": "7"}, lambda r: _code(r) == "invalid_arguments"),
        ("refund", {"invoice_id": 1, "api_token": "s3cr3t-canary"}, lambda r: _code(r) == "denied"),
    ],
    "repository": [
        (
            "invoke_security_0",
            {
                "caller": "notes",
                "interface": "notes._rtx.interface.list-notes",
                "arguments": {},
                "dry_run": True,
            },
            lambda r: r["exit_code"] is None and "command" in _dispatcher(r)["dry_run"],
        ),
        ("get_job", {}, lambda r: _code(r) == "dispatcher.invalid_request"),
        (
            "invoke_security_0",
            {"caller": "notes", "interface": "notes._rtx.interface.nope", "dry_run": True},
            lambda r: _code(r) == "dispatcher.interface_not_found",
        ),
    ],
}


def _dispatcher(result: dict[str, object]) -> dict[str, dict[str, object]]:
    dispatcher = result["dispatcher"]
    assert isinstance(dispatcher, dict)
    return dispatcher


def _code(result: dict[str, object]) -> str | None:
    error = result.get("error")
    if not isinstance(error, dict):
        dispatcher = result.get("dispatcher")
        error = dispatcher.get("error") if isinstance(dispatcher, dict) else None
    return str(error["code"]) if isinstance(error, dict) else None


@pytest.mark.parametrize(("kind", "index"), [(k, i) for k in KINDS for i in range(len(CALLS[k]))])
def test_one_call_through_the_protocol_gives_each_tables_outcome(kind: str, index: int) -> None:
    name, arguments, check = CALLS[kind][index]
    asked: _Asked = []
    structured = _call(_backend(kind), name, arguments, asked)
    assert isinstance(structured, dict)
    result = structured["result"]
    assert isinstance(result, dict)
    assert check(result), result
    # Only a confirm=True table tool asks a person, and never with the secret in view.
    if kind == "table" and name == "refund":
        assert [tool for tool, _ in asked] == ["refund"]
        assert "s3cr3t-canary" not in asked[0][1]
    else:
        assert asked == []
