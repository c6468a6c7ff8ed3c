from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boring_dispatch import Registry, Sensitive, Tool, ToolError
from boring_dispatch._files import FileRefused
from boring_dispatch.errors import RegistryInvalid
from boring_dispatch.registry.fixture_files import FixtureRecorder, read_fixtures
from kits import fixture_tables
from kits.fixture_tables import RAN, UNFIXTURED

_LINE = {"fixture": 1, "tool": "get_job", "args": {"job_id": 7, "verbose": False}, "result": 1}


@pytest.fixture(autouse=True)
def _no_marks() -> Iterator[None]:
    RAN.clear()
    yield
    RAN.clear()


def _recording(path: Path) -> tuple[Registry, FixtureRecorder]:
    recorder = FixtureRecorder(path)
    return Registry(fixture_tables.tools(with_fixtures=False), sinks=[recorder]), recorder


def test_real_calls_become_a_fixture_file_that_answers_them_in_a_world(tmp_path: Path) -> None:
    path = tmp_path / "support.fixtures.jsonl"
    table, recorder = _recording(path)
    calls: list[tuple[str, dict[str, object]]] = [
        ("get_job", {"job_id": 7}),
        ("get_job", {"job_id": -3}),
        ("get_job", {"job_id": 7, "verbose": False}),  # the same key: recorded once
        ("get_job", {"job_id": "x"}),  # refused before the handler: not an outcome
        ("finish", {"answer": "bye"}),
        ("nope", {}),
    ]
    real = [table.dispatch(name, args).to_dict() for name, args in calls]
    real.append(
        table.dispatch("refund", {"invoice_id": 2, "api_token": "s3cr3t"}, confirmed=True).to_dict()
    )
    recorder.close()
    lines = path.read_text().splitlines()
    assert [json.loads(line)["tool"] for line in lines] == [
        "get_job",
        "get_job",
        "finish",
        "refund",
    ]
    assert json.loads(lines[0]) == {
        "fixture": 1,
        "tool": "get_job",
        "args": {"job_id": 7, "verbose": False},
        "result": {"job_id": 7, "status": "scheduled", "verbose": False},
    }
    assert "s3cr3t" not in path.read_text()
    assert json.loads(lines[3])["args"] == {"api_token": "[redacted]", "invoice_id": 2}
    RAN.clear()
    world = UNFIXTURED.fixture_world(read_fixtures(path, UNFIXTURED.names()))
    replayed = [world.dispatch(name, args).to_dict() for name, args in calls]
    replayed.append(
        world.dispatch("refund", {"invoice_id": 2, "api_token": "other"}, confirmed=True).to_dict()
    )
    assert replayed == real
    assert RAN == []


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=30)
@given(token=st.text(min_size=1, max_size=30))
def test_a_secret_never_lands_in_a_fixture_file(tmp_path: Path, token: str) -> None:
    path = tmp_path / f"{len(list(tmp_path.iterdir()))}.jsonl"
    table, recorder = _recording(path)
    table.dispatch("refund", {"invoice_id": 1, "api_token": token}, confirmed=True)
    recorder.close()
    # The whole file: the token's place holds the placeholder; a result whose text
    # happens to hold the token ("1") is withheld whole, as in the audit.
    record = json.loads(path.read_text())
    result = record.pop("result")
    assert record == {
        "fixture": 1,
        "tool": "refund",
        "args": {"api_token": "[redacted]", "invoice_id": 1},
    }
    assert result in ({"refunded": 1, "token_length": len(token)}, "[redacted]")


def test_a_result_or_message_holding_a_secret_is_withheld_in_the_file(tmp_path: Path) -> None:
    def echo(token: Annotated[str, Sensitive], fail: bool) -> str:
        if fail:
            raise ToolError(f"bad token {token}")
        return f"your token is {token}"

    path = tmp_path / "f.jsonl"
    recorder = FixtureRecorder(path)
    table = Registry({"echo": Tool(echo, description="x")}, sinks=[recorder])
    table.dispatch("echo", {"token": "hunter2-secret", "fail": False})
    table.dispatch("echo", {"token": "hunter2-secret", "fail": True})
    recorder.close()
    text = path.read_text()
    assert "hunter2" not in text
    assert len(text.splitlines()) == 2


def test_a_recorder_appends_to_an_existing_file_without_duplicating(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    for _ in range(2):
        table, recorder = _recording(path)
        table.dispatch("get_job", {"job_id": 7})
        recorder.close()
    assert len(path.read_text().splitlines()) == 1


def _write(tmp_path: Path, *lines: object, end: str = "\n") -> Path:
    path = tmp_path / "f.jsonl"
    texts = [line if isinstance(line, str) else json.dumps(line) for line in lines]
    path.write_text("\n".join(texts) + end)
    return path


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([_LINE, _LINE], "line 2: the same tool and arguments as line 1"),
        ([{**_LINE, "tool": "nope"}], "line 1: the table has no tool 'nope'"),
        ([{**_LINE, "fixture": 2}], "line 1: fixture format 2 is newer"),
        ([{**_LINE, "fixture": "1"}], "line 1: no fixture format number"),
        ([{**_LINE, "extra": 1}], "line 1: members other than"),
        ([{**_LINE, "error": "x"}], "exactly one of result and error"),
        ([{k: v for k, v in _LINE.items() if k != "result"}], "exactly one of result and error"),
        ([{**_LINE, "args": []}], "args must be an object"),
        ([_LINE, '{"fixture": 1, "tool": "get_job", "args": {}, "res'], "line 2: not one JSON"),
        (['{"fixture": 1, "fixture": 1, "tool": "get_job", "args": {}, "result": 1}'], "line 1"),
        (["[1]"], "line 1: not a JSON object"),
    ],
)
def test_a_bad_fixture_file_is_a_clear_error_and_no_world(
    tmp_path: Path, lines: list[object], message: str
) -> None:
    path = _write(tmp_path, *lines)
    with pytest.raises(RegistryInvalid, match=message):
        UNFIXTURED.fixture_world(read_fixtures(path, UNFIXTURED.names()), allow_missing=True)


def test_a_torn_last_line_is_an_error_too(tmp_path: Path) -> None:
    path = _write(tmp_path, _LINE, '{"fixture": 1, "tool": "get', end="")
    with pytest.raises(RegistryInvalid, match="line 2: not one JSON object"):
        read_fixtures(path)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"invoice_id": 1, "api_token": "real-secret"}, "unredacted sensitive value"),
        ({"invoice_id": 1, "api_token": "[redacted]", "zz": 1}, "does not accept"),
    ],
)
def test_file_arguments_must_be_canonical_and_redacted(
    tmp_path: Path, args: dict[str, object], message: str
) -> None:
    path = _write(tmp_path, {"fixture": 1, "tool": "refund", "args": args, "result": 1})
    with pytest.raises(RegistryInvalid, match=message):
        UNFIXTURED.fixture_world(read_fixtures(path), allow_missing=True)


@pytest.mark.parametrize("bad", ["\u202e", "\u2028", "\x00", "\x1b", "\ufeff"])
def test_a_refused_character_is_a_file_refusal(tmp_path: Path, bad: str) -> None:
    path = tmp_path / "f.jsonl"
    path.write_text(json.dumps({**_LINE, "result": "@"}).replace("@", bad) + "\n")
    with pytest.raises(FileRefused):
        read_fixtures(path)


def test_a_world_writable_or_special_file_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, _LINE)
    path.chmod(0o666)
    with pytest.raises(FileRefused, match="world-writable"):
        read_fixtures(path)
    with pytest.raises(FileRefused):
        read_fixtures("/dev/zero")


def test_a_file_line_is_validated_except_where_a_secret_was_redacted(tmp_path: Path) -> None:
    def charge(amount: int, pin: Annotated[int, Sensitive], note: str = "") -> dict[str, object]:
        return {}

    table = Registry({"charge": Tool(charge, description="x")})
    line = {"fixture": 1, "tool": "charge", "result": 1}
    good = _write(tmp_path, {**line, "args": {"amount": 5, "pin": "[redacted]"}})
    world = table.fixture_world(read_fixtures(good, table.names()))
    # The placeholder cannot be an int: the line is kept as written, defaults filled in.
    assert world.dispatch("charge", {"amount": 5, "pin": 1234}).ok
    assert world.dispatch("charge", {"amount": 5, "pin": 1, "note": "x"}).code == "no_fixture"
    for args in ({"amount": "5", "pin": "[redacted]"}, {"amount": 5.5, "pin": "[redacted]"}):
        with pytest.raises(RegistryInvalid, match=r"do not fit the schema at \['amount'\]"):
            table.fixture_world(read_fixtures(_write(tmp_path, {**line, "args": args})))
