"""Headless Chromium from the machine's Debian package: screenshots and DOM dumps of a page.

:func:`chromium_or_skip` finds the browser; with ``CI=true`` a missing browser
fails the test instead of skipping it (``.ci/run`` installs the ``chromium``
package). Each run gets a fresh profile directory and no network features.
:func:`png_pixels` decodes the screenshot (8-bit RGB or RGBA PNG, stdlib only)
so a test can check what was drawn.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path
from typing import Final

import pytest

__all__ = ["chromium_or_skip", "dump_dom", "png_pixels", "screenshot"]

_FLAGS: Final = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
)


def chromium_or_skip() -> str:
    """The Chromium executable; skip without it, or fail when ``CI=true``."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found is not None:
            return found
    message = "headless Chromium is not installed (Debian package: chromium)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


def _run(browser: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [browser, *_FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env={**os.environ, "HOME": str(profile)},
    )


def screenshot(browser: str, page: Path, out: Path, size: tuple[int, int] = (1200, 700)) -> Path:
    """A PNG of ``page`` at ``size`` (width, height), taken with a fresh profile."""
    profile = out.parent / f"{out.stem}-profile"
    profile.mkdir()
    _run(
        browser, profile, f"--window-size={size[0]},{size[1]}", f"--screenshot={out}", page.as_uri()
    )
    return out


def dump_dom(browser: str, page: Path, scratch: Path) -> str:
    """The DOM of ``page`` after loading, serialized (``--dump-dom``)."""
    profile = scratch / "dom-profile"
    profile.mkdir()
    return _run(browser, profile, "--dump-dom", page.as_uri()).stdout


def png_pixels(data: bytes) -> tuple[int, int, list[tuple[int, int, int]]]:
    """``(width, height, pixels)`` of an 8-bit RGB/RGBA, non-interlaced PNG (alpha dropped)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    position, idat = 8, b""
    width = height = channels = 0
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        chunk = data[position + 4 : position + 8]
        body = data[position + 8 : position + 8 + length]
        if chunk == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8, depth
            assert interlace == 0
            channels = {2: 3, 6: 4}[color]
        elif chunk == b"IDAT":
            idat += body
        position += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    previous = bytearray(stride)
    pixels: list[tuple[int, int, int]] = []
    for row in range(height):
        start = row * (stride + 1)
        line = bytearray(raw[start + 1 : start + 1 + stride])
        _unfilter(raw[start], line, previous, channels)
        pixels.extend((line[i], line[i + 1], line[i + 2]) for i in range(0, stride, channels))
        previous = line
    return width, height, pixels


def _unfilter(kind: int, line: bytearray, previous: bytearray, bpp: int) -> None:
    for i in range(len(line)):
        left = line[i - bpp] if i >= bpp else 0
        up = previous[i]
        corner = previous[i - bpp] if i >= bpp else 0
        if kind == 1:
            line[i] = (line[i] + left) & 0xFF
        elif kind == 2:
            line[i] = (line[i] + up) & 0xFF
        elif kind == 3:
            line[i] = (line[i] + (left + up) // 2) & 0xFF
        elif kind == 4:
            estimate = left + up - corner
            pa, pb, pc = abs(estimate - left), abs(estimate - up), abs(estimate - corner)
            best = left if pa <= pb and pa <= pc else up if pb <= pc else corner
            line[i] = (line[i] + best) & 0xFF
