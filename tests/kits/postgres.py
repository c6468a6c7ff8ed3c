"""A throwaway PostgreSQL server for the ledger tests: initdb + pg_ctl, loopback, stopped after.

The server refuses to run as root, so under root it runs as the ``postgres``
user (or ``nobody``) through ``setpriv``. Binaries come from the machine's
PostgreSQL packages (``/usr/lib/postgresql/<major>/bin``, Debian's
``postgresql``). When they are missing the tests skip, except under
``CI=true``, where a missing or failing PostgreSQL fails the run loudly.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

__all__ = ["PostgresServer", "postgres_bin", "postgres_server", "postgres_url", "start_postgres"]

_TIMEOUT_S: Final = 60


def postgres_bin() -> Path | None:
    """The newest ``/usr/lib/postgresql/<major>/bin`` holding initdb and pg_ctl."""
    root = Path("/usr/lib/postgresql")
    found = sorted(
        (p for p in root.glob("*/bin") if (p / "initdb").exists() and (p / "pg_ctl").exists()),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    )
    return found[-1] if found else None


class PostgresServer:
    """A running server; :meth:`new_database` gives each test its own database URL."""

    def __init__(self, base: Path, bin_dir: Path, port: int, prefix: list[str]) -> None:
        self.base = base
        self.bin_dir = bin_dir
        self.port = port
        self._prefix = prefix

    @property
    def admin_url(self) -> str:
        return f"postgresql://boring@127.0.0.1:{self.port}/postgres"

    def new_database(self) -> str:
        import psycopg

        name = "t_" + secrets.token_hex(6)
        with psycopg.connect(self.admin_url, autocommit=True) as connection:
            connection.execute(f"CREATE DATABASE {name}")
        return f"postgresql://boring@127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        subprocess.run(
            [
                *self._prefix,
                str(self.bin_dir / "pg_ctl"),
                "-D",
                str(self.base / "data"),
                "-m",
                "immediate",
                "-w",
                "stop",
            ],
            capture_output=True,
            timeout=_TIMEOUT_S,
            check=False,
        )
        shutil.rmtree(self.base, ignore_errors=True)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"PostgreSQL is required in CI: {reason}", pytrace=False)
    pytest.skip(f"PostgreSQL is not available: {reason}")


def start_postgres() -> Iterator[PostgresServer]:
    """Start a server (a generator for a fixture); stop it and remove its files after."""
    bin_dir = postgres_bin()
    if bin_dir is None:
        _unavailable("no /usr/lib/postgresql/*/bin/initdb (apt-get install postgresql)")
        return
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _unavailable("psycopg is not installed (pip install 'boring-dispatch[ledger-postgres]')")
        return
    base = Path(tempfile.mkdtemp(prefix="bd-pg-"))
    prefix: list[str] = []
    if os.geteuid() == 0:
        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            user = pwd.getpwnam("nobody")
        base.chmod(0o755)
        os.chown(base, user.pw_uid, user.pw_gid)
        prefix = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups"]
    port = _free_port()
    env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C"}
    steps = [
        [
            str(bin_dir / "initdb"),
            "-D",
            str(base / "data"),
            "-U",
            "boring",
            "--auth=trust",
            "--no-sync",
            "-E",
            "UTF8",
        ],
        [
            str(bin_dir / "pg_ctl"),
            "-D",
            str(base / "data"),
            "-l",
            str(base / "log"),
            "-w",
            "-t",
            "30",
            "-o",
            f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off",
            "start",
        ],
    ]
    for step in steps:
        done = subprocess.run(
            [*prefix, *step],
            capture_output=True,
            text=True,
            timeout=_TIMEOUT_S,
            env=env,
            cwd=base,
            check=False,
        )
        if done.returncode != 0:
            shutil.rmtree(base, ignore_errors=True)
            _unavailable(f"{Path(step[0]).name} failed: {done.stderr[-500:]}")
            return
    server = PostgresServer(base, bin_dir, port, prefix)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One throwaway PostgreSQL for the session (the ledger and deployed-table tests share it)."""
    yield from start_postgres()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """A fresh database on the throwaway server, as a ``postgresql://`` URL."""
    return postgres_server.new_database()
