"""The embedded ledger: a 0600 WAL file, FULL sync, one active flow enforced by the database."""

from __future__ import annotations

import sqlite3
import stat
from pathlib import Path

import pytest

from boring_dispatch.errors import RuntimeMisconfigured, SetupBusy, SetupRequired, SetupUnavailable
from boring_dispatch.records import RouteRequest
from boring_dispatch.repository.repository import Repository
from boring_dispatch.setup.ledger import ops
from boring_dispatch.setup.ledger._schema import SCHEMA_VERSION
from boring_dispatch.setup.ledger.opening import open_ledger
from boring_dispatch.setup.ledger.paths import default_ledger_path
from boring_dispatch.setup.ledger.sqlite import open_sqlite
from kits.setup_repo import CALLER, write_setup_repository


def _touch(path: Path) -> None:
    ledger = open_sqlite(path)
    with ledger.transaction() as tx:
        ops.append_event(tx, "test")
    ledger.close()


def test_the_file_is_private_wal_and_versioned(tmp_path: Path) -> None:
    path = tmp_path / "state" / "boring-dispatch" / "ledger.sqlite3"
    _touch(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        version = connection.execute(
            "SELECT value FROM ledger_meta WHERE key = 'schema_version'"
        ).fetchone()
    assert version == (str(SCHEMA_VERSION),)


def test_synchronous_full_and_immediate_transactions(tmp_path: Path) -> None:
    ledger = open_sqlite(tmp_path / "l.sqlite3")
    with ledger.transaction() as tx:
        assert tx.one("PRAGMA synchronous") == (2,)  # FULL
    # A second connection cannot write while the first holds BEGIN IMMEDIATE.
    other = sqlite3.connect(tmp_path / "l.sqlite3", timeout=0, isolation_level=None)
    with ledger.transaction(), pytest.raises(sqlite3.OperationalError, match="locked"):
        other.execute("BEGIN IMMEDIATE")
    other.close()
    ledger.close()


def test_a_newer_schema_is_refused_and_left_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite3"
    _touch(path)
    with sqlite3.connect(path) as connection:
        connection.execute(
            "UPDATE ledger_meta SET value = ? WHERE key = 'schema_version'",
            (str(SCHEMA_VERSION + 1),),
        )
    before = path.read_bytes()
    with pytest.raises(RuntimeMisconfigured), open_sqlite(path).transaction():
        pass
    with sqlite3.connect(path) as connection:
        events = connection.execute("SELECT count(*) FROM events").fetchone()
    assert events == (1,)
    assert len(before) > 0


def test_the_database_allows_one_active_flow_only(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite3"
    ledger = open_sqlite(path)
    with ledger.transaction() as tx:
        flow = ops.create_flow(tx, "a.interface.setup", ["a.interface.setup@1"], "{}")
    with pytest.raises(SetupBusy) as busy, ledger.transaction() as tx:
        ops.create_flow(tx, "b.interface.setup", ["b.interface.setup@1"], "{}")
    assert busy.value.flow_id == flow.flow_id
    # Even a raw insert that skips the code's check is refused by the partial unique index.
    with sqlite3.connect(path) as connection, pytest.raises(sqlite3.IntegrityError):
        connection.execute(
            "INSERT INTO flows (id, root, state, steps, current, step_state, resume,"
            " created_at, updated_at) VALUES ('x', 'r', 'active', '[]', 0, 'pending', '{}', 0, 0)"
        )
    ledger.close()


def test_an_unusable_file_fails_closed(tmp_path: Path) -> None:
    path = tmp_path / "garbage.sqlite3"
    path.write_bytes(b"not a database" * 100)
    path.chmod(0o600)
    with pytest.raises(SetupUnavailable), open_sqlite(path).transaction():
        pass
    target = tmp_path / "real"
    target.write_bytes(b"")
    link = tmp_path / "link.sqlite3"
    link.symlink_to(target)
    with pytest.raises(SetupUnavailable), open_sqlite(link).transaction():
        pass


def test_one_default_file_per_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    a = default_ledger_path(Path("/r/a/officina.toml"))
    b = default_ledger_path(Path("/r/b/officina.toml"))
    assert a != b
    assert a.parent == tmp_path / "xdg" / "boring-dispatch"
    monkeypatch.setenv("XDG_STATE_HOME", "relative/dir")
    assert default_ledger_path(Path("/r/a/officina.toml")).parent == (
        Path.home() / ".local" / "state" / "boring-dispatch"
    )


def test_ledger_choice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BORING_DISPATCH_LEDGER", raising=False)
    for bad in ("relative.sqlite3", "mysql://x", "./x"):
        with pytest.raises(RuntimeMisconfigured):
            open_ledger(tmp_path / "officina.toml", bad)
    assert open_ledger(tmp_path / "o.toml", str(tmp_path / "x.sqlite3")).backend_name == "sqlite"
    monkeypatch.setenv("BORING_DISPATCH_LEDGER", "postgresql://127.0.0.1:1/none")
    assert open_ledger(tmp_path / "o.toml").backend_name == "postgresql"


# --------------------------------------------------------------------------- #
# The ledger decides whether a managed setup is ready: whoever can swap or
# write the file can open the gate. What is already at the path is held to the
# rule the safe appender uses: the directory and the file are the effective
# user's, reached without a symlink at either, the directory writable by no one
# else, the file regular with one link (and made 0600).

_OTHER_UID = 65534


def _planted(tmp_path: Path, case: str) -> Path:
    """A ledger path with ``case`` already in place; its directory is ``tmp_path/dir``."""
    import os

    directory = tmp_path / "dir"
    directory.mkdir(mode=0o700)
    path = directory / "ledger.sqlite3"
    if case == "directory_symlink":
        real = tmp_path / "elsewhere"
        real.mkdir(mode=0o700)
        directory.rmdir()
        directory.symlink_to(real, target_is_directory=True)
    elif case == "world_writable_directory":
        directory.chmod(0o777)
    elif case == "group_writable_directory":
        directory.chmod(0o770)
    elif case == "directory_of_another_user":
        os.chown(directory, _OTHER_UID, _OTHER_UID)
    elif case == "file_of_another_user":
        _touch(path)
        os.chown(path, _OTHER_UID, _OTHER_UID)
    elif case == "hard_link":
        _touch(path)
        os.link(path, tmp_path / "second-name")
    elif case == "fifo":
        os.mkfifo(path, 0o600)
    return path


@pytest.mark.parametrize(
    "case",
    [
        "directory_symlink",
        "world_writable_directory",
        "group_writable_directory",
        "directory_of_another_user",
        "file_of_another_user",
        "hard_link",
        "fifo",
    ],
)
def test_a_ledger_someone_else_can_swap_or_write_is_refused(tmp_path: Path, case: str) -> None:
    import os

    if os.geteuid() != 0 and "another_user" in case:
        pytest.skip("giving a file to another user needs root")
    path = _planted(tmp_path, case)
    with pytest.raises(SetupUnavailable), open_sqlite(path).transaction() as tx:
        ops.append_event(tx, "test")


def test_an_existing_ledger_of_ours_loses_group_and_other_bits(tmp_path: Path) -> None:
    path = _planted(tmp_path, "plain")
    _touch(path)
    path.chmod(0o666)
    _touch(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    "spelling",
    [
        "//r/a/officina.toml",
        "/r//a/./officina.toml",
        "/r/a/./officina.toml",
        "///r/a/officina.toml",
    ],
)
def test_every_spelling_of_one_configuration_shares_one_default_ledger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spelling: str
) -> None:
    # load_config reads the same file for each spelling: a second ledger would keep
    # its own setup states (a teardown recorded in one, still "ready" in the other).
    from boring_dispatch.repository.repository import Repository

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    canonical = default_ledger_path(Path("/r/a/officina.toml"))
    assert default_ledger_path(Path(spelling)) == canonical
    assert default_ledger_path(spelling) == canonical  # type: ignore[arg-type]
    gate = Repository(Path(spelling)).setup_gate()
    assert gate.ledger()._backend.path == canonical  # type: ignore[attr-defined]


# A row no dispatcher writes (a bug, a hand edit, a newer client on a shared
# ledger): the ledger is unusable for that call, ``setup_unavailable``, never a
# raw ValueError or TypeError out of the gate (internal_error) and never a pass.
_BAD_FLOW_COLUMNS = [
    ("steps", "not json"),
    ("steps", "{}"),
    ("steps", "null"),
    ("steps", '"app.interface.setup@1"'),
    ("steps", "[[1]]"),
    ("current", "x"),
    ("current", "1.5"),
    ("current", "-1"),
    ("current", "2"),
    ("lease_expires_at", "soon"),
    ("created_at", "yesterday"),
]


@pytest.mark.parametrize(("column", "value"), _BAD_FLOW_COLUMNS)
def test_a_malformed_flow_row_makes_the_ledger_unavailable(
    tmp_path: Path, column: str, value: str
) -> None:
    config = write_setup_repository(tmp_path / "repo")
    path = tmp_path / "ledger.sqlite3"
    repository = Repository.open(config, ledger=str(path))
    with pytest.raises(SetupRequired):
        repository.invoke(RouteRequest(CALLER, "app.interface.read"))
    connection = sqlite3.connect(path)
    try:
        with connection:
            connection.execute(
                "INSERT INTO flows (id, root, state, steps, current, step_state, resume,"
                " created_at, updated_at) VALUES ('f0', 'app.interface.setup', 'active',"
                " '[\"app.interface.setup@1\"]', 0, 'pending', '{}', 0, 0)"
            )
            connection.execute(f"UPDATE flows SET {column} = ?", (value,))  # noqa: S608
    finally:
        connection.close()
    with pytest.raises(SetupUnavailable):
        repository.invoke(RouteRequest(CALLER, "app.interface.read"))


@pytest.mark.parametrize("version", ["x", "1.5", ""])
def test_a_malformed_setup_row_makes_the_ledger_unavailable(tmp_path: Path, version: str) -> None:
    config = write_setup_repository(tmp_path / "repo")
    path = tmp_path / "ledger.sqlite3"
    repository = Repository.open(config, ledger=str(path))
    with pytest.raises(SetupRequired):
        repository.invoke(RouteRequest(CALLER, "app.interface.read"))
    connection = sqlite3.connect(path)
    try:
        with connection:
            connection.execute(
                "INSERT INTO setups (id, version, state, fingerprint, flow_id, updated_at)"
                " VALUES ('base.interface.setup', ?, 'ready', 'f', NULL, 0)",
                (version,),
            )
    finally:
        connection.close()
    with pytest.raises(SetupUnavailable):
        repository.invoke(RouteRequest(CALLER, "app.interface.read"))
