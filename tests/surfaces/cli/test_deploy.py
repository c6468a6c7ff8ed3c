from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from boring_dispatch.registry.deployed import load_deployed
from boring_dispatch.surfaces.cli.main import main
from kits import fixture_tables
from kits.postgres import postgres_server, postgres_url  # noqa: F401 - fixtures

TABLE = "kits.fixture_tables:TABLE"
TESTS = Path(__file__).resolve().parents[2]


def _golden(tmp_path: Path, *names: str) -> Path:
    path = tmp_path / "support.golden"
    path.write_text("# reviewed\n" + "".join(f"{name}\n" for name in names))
    return path


def _deploy(
    capsys: pytest.CaptureFixture[str], golden: Path, url: str, *extra: str
) -> tuple[int, str, str]:
    status = main(
        [
            "deploy",
            "--registry",
            TABLE,
            "--golden",
            str(golden),
            "--surface",
            "support",
            "--database",
            url,
            "--deployed-by",
            "ci",
            *extra,
        ]
    )
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_deploy_writes_the_golden_names_as_the_surface_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest, backend: str
) -> None:
    url = (
        f"sqlite://{tmp_path}/t.db"
        if backend == "sqlite"
        else request.getfixturevalue("postgres_url")
    )
    status, out, err = _deploy(capsys, _golden(tmp_path, "get_job", "finish"), url)
    assert (status, out, err) == (0, "deployed 2 tools to surface support by ci\n", "")
    loaded = load_deployed(fixture_tables.TABLE, surface="support", database=url)
    assert loaded.names() == ("finish", "get_job")


@pytest.mark.parametrize("name", ["os.system", "hidden", "get_job "])
def test_deploy_refuses_a_name_the_code_lacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    url = f"sqlite://{tmp_path}/t.db"
    _deploy(capsys, _golden(tmp_path, "finish"), url)
    golden = tmp_path / "bad.golden"
    golden.write_text(f"finish\n{name}x\n")
    status, out, err = _deploy(capsys, golden, url, "--error-format", "json")
    assert (status, out) == (2, "")
    assert json.loads(err)["code"] == "registry_invalid"
    assert "nothing deployed" in json.loads(err)["message"]
    assert load_deployed(fixture_tables.TABLE, surface="support", database=url).names() == (
        "finish",
    )


def test_deploy_to_an_unreachable_database_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = _deploy(capsys, _golden(tmp_path, "finish"), "postgresql://u:pw@127.0.0.1:1/x")
    assert status == 2
    assert err.startswith("error: cannot reach the PostgreSQL database")
    assert "pw" not in err


def test_deploy_reports_an_unreadable_golden_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, _, err = _deploy(capsys, Path("/dev/zero"), f"sqlite://{tmp_path}/t.db")
    assert status == 2
    assert "cannot read the golden file" in err


def test_the_installed_command_deploys(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "boring_dispatch",
            "deploy",
            "--registry",
            TABLE,
            "--golden",
            str(_golden(tmp_path, "refund")),
            "--surface",
            "billing",
            "--database",
            f"sqlite://{tmp_path}/t.db",
        ],
        cwd=TESTS,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("deployed 1 tools to surface billing by ")
