"""Start ``dispatcher serve`` as a real process on a free loopback port, and read from it.

``serving(*args)`` yields a :class:`Served` (base URL, token, process) and
stops the process at the end. ``get(url, ...)`` is one HTTP GET (or another
method) with a bounded timeout, returning ``(status, headers, body)``.
``chromium_dom(url)`` loads a page in headless Chromium and returns its DOM.
"""

from __future__ import annotations

import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = ["Served", "chromium_dom", "get", "serving"]

TESTS = Path(__file__).resolve().parents[1]
_WAIT_S = 30.0


@dataclass(frozen=True)
class Served:
    url: str
    token: str | None
    process: subprocess.Popen[str]


@contextmanager
def serving(*args: str) -> Iterator[Served]:
    """Run ``dispatcher serve --port 0 ARGS`` from ``tests/`` until the block ends."""
    process = subprocess.Popen(
        [sys.executable, "-m", "boring_dispatch", "serve", "--port", "0", *args],
        cwd=TESTS,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    assert process.stderr is not None
    stream = process.stderr

    def pump() -> None:
        for line in stream:
            lines.put(line)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    token = url = None
    try:
        while url is None:
            line = lines.get(timeout=_WAIT_S)
            if line.startswith("token: "):
                token = line.split(" ", 1)[1].strip()
            elif line.startswith("serving "):
                url = line.split(" ")[1]
            else:
                pytest.fail(f"dispatcher serve said: {line}")
        yield Served(url, token, process)
    finally:
        process.terminate()
        try:
            process.wait(timeout=_WAIT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=_WAIT_S)
        reader.join(timeout=_WAIT_S)
        stream.close()


def get(
    url: str, headers: dict[str, str] | None = None, method: str = "GET"
) -> tuple[int, dict[str, str], bytes]:
    """One request; HTTP errors are returned, not raised."""
    request = urllib.request.Request(url, headers=headers or {}, method=method)  # noqa: S310 - loopback test URL
    try:
        with urllib.request.urlopen(request, timeout=_WAIT_S) as response:  # noqa: S310
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def chromium_dom(url: str) -> str:
    """The DOM of ``url`` in headless Chromium with a fresh profile (Debian ``chromium``)."""
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("chromium is not installed (Debian package chromium)")
        pytest.skip("chromium is not installed")
    with tempfile.TemporaryDirectory(prefix="bd-chromium-") as profile:
        done = subprocess.run(
            [
                binary,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                f"--user-data-dir={profile}",
                "--dump-dom",
                url,
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout
