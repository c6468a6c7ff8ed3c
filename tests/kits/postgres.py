"""A throwaway PostgreSQL server for the tests: initdb + pg_ctl, loopback, unprivileged.

``postgres_server`` (session scope) starts one server in a fresh data directory
on a free loopback port, as the user running the tests or, under root, as
``nobody`` (PostgreSQL refuses to run as root); it is stopped and its data
directory removed at the end of the session. ``postgres_url`` (function
scope) creates a fresh database on it for one test and yields its URL.

Without PostgreSQL (no ``initdb``/``pg_ctl`` on ``PATH`` or under
``/usr/lib/postgresql/*/bin``) or psycopg, the tests skip, except under
``CI=true``, where they fail: CI must install ``postgresql`` (Debian) and
``boring-dispatch[postgres]``.

Use in a test module::

    from kits.postgres import postgres_server, postgres_url  # noqa: F401 - fixtures
"""

from __future__ import annotations

import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final

import pytest

__all__ = ["postgres_server", "postgres_url"]

_START_TIMEOUT_S: Final = 60
_COUNTER = itertools.count()


def _tool(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"), reverse=True)
    return str(candidates[0]) if candidates else None


def _missing(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"PostgreSQL tests cannot run in CI: {reason}")
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The admin URL of a running throwaway server (database ``postgres``)."""
    initdb, pg_ctl = _tool("initdb"), _tool("pg_ctl")
    if initdb is None or pg_ctl is None:
        _missing("initdb/pg_ctl not found (Debian package postgresql)")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _missing("psycopg is not installed (boring-dispatch[postgres])")
    assert initdb is not None
    assert pg_ctl is not None
    user = "nobody" if os.geteuid() == 0 else None
    base = Path(tempfile.mkdtemp(prefix="bd-pg-"))
    data, sockets = base / "data", base / "sockets"
    sockets.mkdir()
    if user is not None:
        entry = pwd.getpwnam(user)
        for path in (base, sockets):
            os.chown(path, entry.pw_uid, entry.pw_gid)
    port = _free_port()
    run = _runner(user)
    try:
        run([initdb, "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"])
        options = (
            f"-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories={sockets} "
            "-c fsync=off -c full_page_writes=off"
        )
        run(
            [
                pg_ctl,
                "-D",
                str(data),
                "-o",
                options,
                "-l",
                str(base / "log"),
                "-w",
                "-t",
                str(_START_TIMEOUT_S),
                "start",
            ]
        )
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        if (data / "postmaster.pid").exists():
            run([pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"], check=False)
        shutil.rmtree(base, ignore_errors=True)


def _runner(user: str | None) -> Callable[..., None]:
    def run(argv: list[str], *, check: bool = True) -> None:
        done = subprocess.run(
            argv,
            user=user,
            cwd="/",
            capture_output=True,
            text=True,
            timeout=_START_TIMEOUT_S + 30,
            check=False,
        )
        if check and done.returncode != 0:
            pytest.fail(f"{Path(argv[0]).name} failed: {done.stdout}{done.stderr}")

    return run


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """The URL of a fresh, empty database on the throwaway server."""
    import psycopg

    name = f"t{os.getpid()}_{next(_COUNTER)}"
    with psycopg.connect(postgres_server, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")  # a name of our own making
    yield postgres_server.rsplit("/", 1)[0] + f"/{name}"
    with psycopg.connect(postgres_server, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
