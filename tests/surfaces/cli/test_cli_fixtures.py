from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boring_dispatch import Registry, TraceRecorder
from boring_dispatch.registry.fixture_files import FixtureRecorder
from boring_dispatch.surfaces.cli.main import main
from kits import fixture_tables
from kits.fixture_tables import RAN

TABLE = "kits.fixture_tables:TABLE"
UNFIXTURED = "kits.fixture_tables:UNFIXTURED"
TESTS = Path(__file__).resolve().parents[2]
CALLS: list[tuple[str, dict[str, object]]] = [
    ("get_job", {"job_id": 7}),
    ("get_job", {"job_id": -2}),
    ("get_job", {"job_id": "7"}),
    ("finish", {"answer": "bye"}),
    ("refund", {"invoice_id": 3, "api_token": "tok-123456"}),
    ("os.system", {"command": "id"}),
]


@pytest.fixture(autouse=True)
def _no_marks() -> Iterator[None]:
    RAN.clear()
    yield
    RAN.clear()


def _record(
    tmp_path: Path, calls: list[tuple[str, dict[str, object]]] = CALLS
) -> tuple[Path, Path]:
    """Real calls, recorded twice: as fixtures and as a trace."""
    fixtures, trace = tmp_path / "support.fixtures.jsonl", tmp_path / "trace.jsonl"
    with FixtureRecorder(fixtures) as recorder, TraceRecorder(trace) as tracer:
        table = Registry(fixture_tables.tools(with_fixtures=False), sinks=[recorder, tracer])
        for name, args in calls:
            table.dispatch(name, args, confirmed=True)
    RAN.clear()
    return fixtures, trace


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_a_recorded_session_replays_against_its_fixtures_with_no_difference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fixtures, trace = _record(tmp_path)
    # refund was called confirmed; replay never confirms: recorded as ok, replayed as denied.
    status, out, err = _run(
        capsys, "replay", "--registry", UNFIXTURED, "--fixtures", str(fixtures), str(trace)
    )
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line.get("error", {}).get("code", "ok") for line in lines] == [
        "ok",
        "tool_error",
        "invalid_arguments",
        "ok",
        "denied",
        "unknown_tool",
    ]
    differences = [json.loads(line) for line in err.splitlines() if "difference" in line]
    assert [(d["line"], d["tool"]) for d in differences] == [(5, "refund")]
    assert '"unused_fixture": "refund"' in err
    assert status == 1
    assert RAN == []


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=15)
@given(job_ids=st.lists(st.integers(-50, 50), min_size=1, max_size=6))
def test_replay_of_what_was_recorded_never_differs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], job_ids: list[int]
) -> None:
    run = tmp_path / str(len(list(tmp_path.iterdir())))
    run.mkdir()
    calls: list[tuple[str, dict[str, object]]] = [("get_job", {"job_id": n}) for n in job_ids]
    fixtures, trace = _record(run, [*calls, ("finish", {"answer": "x"})])
    status, out, err = _run(
        capsys,
        "replay",
        "--registry",
        UNFIXTURED,
        "--fixtures",
        str(fixtures),
        "--allow-missing-fixtures",
        str(trace),
    )
    assert (status, err) == (0, "")
    assert len(out.splitlines()) == len(calls) + 1
    assert RAN == []


def test_a_changed_fixture_is_a_difference_and_a_failed_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fixtures, trace = _record(tmp_path, [("get_job", {"job_id": 7}), ("finish", {"answer": "x"})])
    text = fixtures.read_text().replace('"scheduled"', '"cancelled"')
    fixtures.write_text(text)
    status, _, err = _run(
        capsys,
        "replay",
        "--registry",
        UNFIXTURED,
        "--fixtures",
        str(fixtures),
        "--allow-missing-fixtures",
        str(trace),
    )
    assert status == 1
    difference = json.loads(err.splitlines()[0])
    assert difference["now"]["result"]["status"] == "cancelled"
    assert difference["recorded"]["result"]["status"] == "scheduled"


def test_a_world_missing_a_fixture_is_refused_unless_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fixtures, trace = _record(tmp_path, [("get_job", {"job_id": 7})])
    args = ("replay", "--registry", UNFIXTURED, "--fixtures", str(fixtures))
    status, out, err = _run(capsys, *args, str(trace))
    assert (status, out) == (2, "")
    assert "no fixture for tools ['finish', 'refund']" in err
    assert _run(capsys, *args, "--allow-missing-fixtures", str(trace))[0] == 0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"fixture": 9, "tool": "get_job", "args": {}, "result": 1}\n', "format 9 is newer"),
        ('{"fixture": 1, "tool": "os.system", "args": {}, "result": 1}\n', "no tool 'os.system'"),
        ('{"fixture": 1, "tool": "get_job", "ar', "not one JSON object"),
    ],
)
def test_a_bad_fixture_file_fails_the_replay_before_any_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    _, trace = _record(tmp_path, [("get_job", {"job_id": 7})])
    bad = tmp_path / "bad.jsonl"
    bad.write_text(content)
    status, out, err = _run(
        capsys, "replay", "--registry", TABLE, "--fixtures", str(bad), str(trace)
    )
    assert (status, out) == (2, "")
    assert message in err


def test_an_unreadable_fixture_file_is_an_unreadable_file_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, trace = _record(tmp_path, [("get_job", {"job_id": 7})])
    status, _, err = _run(
        capsys,
        "replay",
        "--registry",
        TABLE,
        "--fixtures",
        "/dev/null",
        "--error-format",
        "json",
        str(trace),
    )
    assert status == 2
    assert json.loads(err)["code"] == "unreadable_file"
    assert json.loads(err)["file"] == "fixtures"


def test_names_require_fixtures_fails_on_a_tool_without_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    golden = tmp_path / "support.golden"
    golden.write_text("finish\nget_job\nrefund\n")
    assert _run(capsys, "names", "--registry", UNFIXTURED, "--golden", str(golden))[0] == 0
    status, _, err = _run(
        capsys, "names", "--registry", UNFIXTURED, "--golden", str(golden), "--require-fixtures"
    )
    assert status == 1
    assert err == "no fixture: finish\nno fixture: get_job\nno fixture: refund\n"
    assert _run(capsys, "names", "--registry", TABLE, "--require-fixtures")[0] == 0
    fixtures, _ = _record(tmp_path, [("get_job", {"job_id": 7}), ("finish", {"answer": "x"})])
    status, _, err = _run(
        capsys, "names", "--registry", UNFIXTURED, "--require-fixtures", "--fixtures", str(fixtures)
    )
    assert (status, err) == (1, "no fixture: refund\n")


def test_fixture_options_need_a_python_table(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _run(
        capsys, "names", "--config", "/nonexistent/officina.toml", "--require-fixtures"
    )
    assert status == 2
    assert "need --registry" in err


def test_the_installed_command_replays_against_fixtures(tmp_path: Path) -> None:
    fixtures, trace = _record(tmp_path, [("get_job", {"job_id": 7}), ("get_job", {"job_id": 8})])
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "boring_dispatch",
            "replay",
            "--registry",
            TABLE,
            "--fixtures",
            str(fixtures),
            str(trace),
        ],
        cwd=TESTS,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count('"ok": true') == 2
    assert done.stderr.count("unused_fixture") == 1  # refund: its own fixture, never called


def test_names_with_a_fixture_file_checks_that_it_fits_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"fixture": 1, "tool": "get_job", "args": {"job_id": "7"}, "result": 1}\n')
    status, out, err = _run(capsys, "names", "--registry", UNFIXTURED, "--fixtures", str(bad))
    assert (status, out) == (2, "")
    assert "error: " in err
