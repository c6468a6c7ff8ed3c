"""Suite-wide configuration.

Hypothesis profiles: ``ci`` (loaded when ``CI=true``) is deterministic and
bounded; ``dev`` (the default) explores more. Neither has a deadline, since
tests must not assert on wall-clock time.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# The throwaway PostgreSQL fixtures, for every test module.
from kits.postgres import postgres_server, postgres_url  # noqa: F401

settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    max_examples=60,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=150, deadline=None)
settings.load_profile("ci" if os.environ.get("CI", "").lower() == "true" else "dev")


@pytest.fixture
def tiny_fs(tmp_path: Path) -> Iterator[Path]:
    """A real 64 KiB tmpfs (for full-disk tests); skipped where mounting is not permitted."""
    mount, umount = shutil.which("mount"), shutil.which("umount")
    if os.geteuid() != 0 or mount is None or umount is None:
        pytest.skip("mounting a 64 KiB tmpfs needs root and mount(8)")
    directory = tmp_path / "tiny"
    directory.mkdir()
    done = subprocess.run(
        [mount, "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", str(directory)],
        capture_output=True,
        timeout=10,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"mount is not permitted here: {done.stderr.decode(errors='replace')}")
    try:
        yield directory
    finally:
        # Lazy: a descriptor a failed test left open must not leave the mount behind.
        subprocess.run([umount, "-l", str(directory)], timeout=10, check=True)
