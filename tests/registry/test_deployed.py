from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boring_dispatch import Registry, Tool
from boring_dispatch.errors import RegistryInvalid, UnknownTool
from boring_dispatch.registry._database import connect
from boring_dispatch.registry.deployed import (
    DatabaseUnavailable,
    deploy,
    load_deployed,
    schema_hash,
)
from kits import fixture_tables
from kits.postgres import postgres_server, postgres_url  # noqa: F401 - fixtures

CODE = fixture_tables.TABLE  # finish, get_job, refund (hidden is disabled)


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite://{tmp_path}/deployed.db"
    else:
        yield request.getfixturevalue("postgres_url")


def _deploy(database: str, names: list[str], surface: str = "support") -> int:
    return deploy(CODE, names, surface=surface, database=database, deployed_by="alice")


def _rows(database: str) -> list[tuple[object, ...]]:
    connection = connect(database, write=False)
    try:
        return connection.execute(
            "SELECT surface, name, schema_hash, deployed_by FROM boring_dispatch_deployed"
            " ORDER BY surface, name"
        )
    finally:
        connection.close()


def test_a_deployed_surface_is_the_code_restricted_to_its_rows(database: str) -> None:
    assert _deploy(database, ["get_job", "finish", "get_job"]) == 2
    table = load_deployed(CODE, surface="support", database=database)
    assert table.names() == ("finish", "get_job")
    assert table.dispatch("refund", {"invoice_id": 1, "api_token": "x"}).code == "unknown_tool"
    assert table.dispatch("get_job", {"job_id": 7}).ok
    assert _rows(database) == [
        ("support", "finish", schema_hash(CODE, "finish"), "alice"),
        ("support", "get_job", schema_hash(CODE, "get_job"), "alice"),
    ]
    with pytest.raises(UnknownTool):
        table.restrict(["refund"])  # a session still only shrinks


def test_deploy_replaces_a_surface_and_leaves_the_others(database: str) -> None:
    _deploy(database, ["get_job", "finish"])
    _deploy(database, ["refund"], surface="billing")
    _deploy(database, ["finish"])
    assert load_deployed(CODE, surface="support", database=database).names() == ("finish",)
    assert load_deployed(CODE, surface="billing", database=database).names() == ("refund",)


def test_deploy_refuses_names_the_code_lacks_and_writes_nothing(database: str) -> None:
    _deploy(database, ["get_job"])
    for names in (["get_job", "os.system"], ["hidden"]):  # unknown; disabled in code
        with pytest.raises(RegistryInvalid, match="nothing deployed"):
            _deploy(database, names)
    assert [row[1] for row in _rows(database)] == ["get_job"]


def test_a_row_naming_no_handler_fails_the_load(database: str) -> None:
    _deploy(database, ["get_job"])
    smaller = Registry({"finish": CODE.tools["finish"]}, name="support")
    with pytest.raises(RegistryInvalid, match="a row names tool 'get_job', which the code"):
        load_deployed(smaller, surface="support", database=database)


def test_a_schema_hash_mismatch_fails_the_load(database: str) -> None:
    _deploy(database, ["get_job"])

    def get_job(job_id: str) -> dict[str, object]:
        return {}

    changed = Registry({"get_job": Tool(get_job, description="Look up one job.")})
    with pytest.raises(RegistryInvalid, match="another argument schema"):
        load_deployed(changed, surface="support", database=database)


def test_a_surface_without_rows_fails_the_load(database: str) -> None:
    _deploy(database, ["get_job"])
    with pytest.raises(RegistryInvalid, match="no deployed tool for surface 'suport'"):
        load_deployed(CODE, surface="suport", database=database)


def test_a_database_of_a_newer_schema_is_refused(database: str) -> None:
    _deploy(database, ["get_job"])
    connection = connect(database, write=True)
    connection.execute("UPDATE boring_dispatch_schema SET version = 2")
    connection.close()
    with pytest.raises(RegistryInvalid, match="schema version 2, newer"):
        load_deployed(CODE, surface="support", database=database)
    with pytest.raises(RegistryInvalid, match="schema version 2, newer"):
        _deploy(database, ["finish"])


def test_an_empty_database_is_not_a_deployed_table(database: str) -> None:
    connect(database, write=True).close()
    with pytest.raises(RegistryInvalid, match="no schema version"):
        load_deployed(CODE, surface="support", database=database)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=25)
@given(
    deployed=st.lists(st.sampled_from(["get_job", "finish", "refund"]), min_size=1, max_size=4),
    extra=st.sampled_from(["", "os.system", "hidden", "GET_JOB"]),
)
def test_the_loaded_set_is_exactly_the_deployed_set(
    tmp_path: Path, deployed: list[str], extra: str
) -> None:
    url = f"sqlite://{tmp_path}/{len(list(tmp_path.iterdir()))}.db"
    _deploy(url, deployed)
    if extra:
        with pytest.raises(RegistryInvalid):
            _deploy(url, [*deployed[:1], extra])
    assert load_deployed(CODE, surface="support", database=url).names() == tuple(
        sorted(set(deployed))
    )


def test_a_failed_deploy_rolls_back_the_whole_surface(tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path}/deployed.db"
    _deploy(url, ["get_job", "finish"])
    raw = sqlite3.connect(tmp_path / "deployed.db")
    raw.execute(
        "CREATE TRIGGER no_refund BEFORE INSERT ON boring_dispatch_deployed"
        " WHEN NEW.name = 'refund' BEGIN SELECT RAISE(ABORT, 'refused'); END"
    )
    raw.commit()
    raw.close()
    with pytest.raises(DatabaseUnavailable, match="IntegrityError"):
        _deploy(url, ["finish", "refund"])
    assert load_deployed(CODE, surface="support", database=url).names() == ("finish", "get_job")


@pytest.mark.parametrize(
    "url",
    [
        "sqlite:///nonexistent-dir/x/deployed.db",
        "postgresql://nobody@127.0.0.1:1/none?connect_timeout=2",
    ],
)
def test_an_unreachable_database_is_a_clear_error_without_the_url(url: str) -> None:
    with pytest.raises(DatabaseUnavailable, match="cannot") as caught:
        load_deployed(CODE, surface="support", database=url)
    assert "nonexistent" not in str(caught.value)
    assert "nobody" not in str(caught.value)
    with pytest.raises(DatabaseUnavailable):
        _deploy(url, ["get_job"])


@pytest.mark.parametrize(
    "url", ["mysql://x/y", "sqlite://host/x.db", "sqlite:relative.db", "/tmp/x.db", ""]
)
def test_only_sqlite_and_postgresql_urls_are_accepted(url: str) -> None:
    with pytest.raises(RegistryInvalid, match="sqlite:///"):
        load_deployed(CODE, surface="support", database=url)


@pytest.mark.parametrize("surface", ["", "a b", "x" * 65, "s\n"])
def test_a_bad_surface_name_is_refused(tmp_path: Path, surface: str) -> None:
    with pytest.raises(RegistryInvalid, match="surface name"):
        _deploy(f"sqlite://{tmp_path}/d.db", ["get_job"], surface=surface)


@pytest.mark.parametrize("who", ["", "a\nb", "x" * 129])
def test_deployed_by_is_plain_text(tmp_path: Path, who: str) -> None:
    with pytest.raises(RegistryInvalid, match="deployed_by"):
        deploy(
            CODE, ["get_job"], surface="s", database=f"sqlite://{tmp_path}/d.db", deployed_by=who
        )


@pytest.mark.parametrize(
    "who",
    [
        "bob\x9b31m",  # 8-bit CSI: a terminal escape
        "\x85next",  # NEL: a line break
        "\u202eecila",  # bidi override: "alice" shown reversed
        "al\u200bice",  # zero-width space: two names that look alike
        "a\u2028b",  # line separator
        "a\ufeffb",  # BOM
        "\udcffx",  # a lone surrogate (a non-UTF-8 login name through os.environ)
    ],
)
def test_deployed_by_has_no_control_format_or_separator_character(tmp_path: Path, who: str) -> None:
    """The name is printed by ``dispatcher deploy`` and served in the allowlist:
    whatever another reader sees must be what was recorded."""
    with pytest.raises(RegistryInvalid, match="deployed_by"):
        deploy(
            CODE, ["get_job"], surface="s", database=f"sqlite://{tmp_path}/d.db", deployed_by=who
        )


@pytest.mark.parametrize(("ci", "outcome"), [("true", "1 error"), ("", "1 skipped")])
def test_without_postgresql_the_kit_fails_in_ci_and_skips_elsewhere(
    tmp_path: Path, ci: str, outcome: str
) -> None:
    probe = tmp_path / "test_probe.py"
    probe.write_text(
        "import kits.postgres\n"
        "from kits.postgres import postgres_server, postgres_url  # noqa: F401\n"
        "kits.postgres.postgres_bin = lambda: None  # as on a machine without PostgreSQL\n"
        "def test_needs_postgres(postgres_url: str) -> None:\n"
        "    assert postgres_url\n"
    )
    tests = Path(__file__).resolve().parents[1]
    environment = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(tests),
        "CI": ci,
        "HOME": str(tmp_path),
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(tmp_path),
            "-c",
            "/dev/null",
            str(probe),
        ],
        env=environment,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert outcome in done.stdout, done.stdout[-2000:]
    assert done.returncode == (1 if ci else 0)
    assert ("PostgreSQL is required in CI" in done.stdout) == bool(ci)
