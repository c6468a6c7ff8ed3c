"""The HTML timeline rendered in headless Chromium: self-contained, drawn, readable.

The session is written from real MCP calls (``kits.sessions``) and joined to
their real spans; the page is opened from a file with the network features
off, then checked through its DOM and a screenshot's pixels.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Final

import pytest

from kits.chromium import chromium_or_skip, dump_dom, png_pixels, screenshot
from kits.mcp import McpServer, projection, write_tools_repository
from kits.plain_env import plain_environment
from kits.sessions import Turn, host_call, write_codex

#: The segment colors of the page (decision, execution, dispatcher, response).
COLORS: Final = {
    "decision": (0x8A, 0xB4, 0xF8),
    "execution": (0xFB, 0xBC, 0x04),
    "dispatcher": (0xE8, 0x71, 0x0A),
    "response": (0x34, 0xA8, 0x53),
}


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The HTML report of a two-turn Codex session of real calls (one slow decision)."""
    base = tmp_path_factory.mktemp("html")
    logs = base / "logs"
    config = write_tools_repository(base / "repo")
    with (
        (base / "server.log").open("w+", encoding="utf-8") as errlog,
        McpServer(
            ["mcp", "--config", str(config)],
            env={"ASSISTANT_LOGS": str(logs)},
            cwd=config.parent,
            errlog=errlog,
        ) as server,
    ):
        calls = [
            host_call(server, "invoke_security_0", projection(name))
            for name in ("streams-machine", "nested", "fail")
        ]
    turns = [
        Turn(calls[0].called_at - 0.2, calls[:2], calls[1].returned_at + 0.1),
        Turn(calls[2].called_at - 1.5, calls[2:], calls[2].returned_at + 0.3),
    ]
    session = write_codex(base / "rollout-x.jsonl", turns)
    out = base / "timeline.html"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "boring_dispatch",
            "timeline",
            str(session),
            "--logs",
            str(logs),
            "--format",
            "html",
            "--out",
            str(out),
            "--slow",
            "1000",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env=plain_environment(),
    )
    assert done.returncode == 0, done.stderr
    return out


def test_the_page_is_self_contained(page: Path) -> None:
    html = page.read_text(encoding="utf-8")
    assert "<script" not in html
    assert "<link" not in html
    assert not re.search(r"\b(src|href)=", html)
    # The one URL is the SVG namespace, which is a name, never fetched.
    assert re.findall(r"https?://[^\"' ]+", html) == ["http://www.w3.org/2000/svg"]


def test_the_dom_holds_the_svg_timeline(page: Path, tmp_path: Path) -> None:
    dom = dump_dom(chromium_or_skip(), page, tmp_path)
    assert "<svg" in dom
    assert 'id="timeline"' in dom
    for kind in ("decision", "execution", "dispatcher", "gateway", "response"):
        assert f'class="{kind}"' in dom, kind
    assert dom.count('class="execution"') == 3
    assert dom.count('class="response"') == 2  # the last call of each turn
    assert dom.count('stroke="#c5221f"') == 1  # the 1.5 s decision is slow
    assert dom.count('<td class="slow">') == 1


def test_the_screenshot_shows_every_segment(page: Path, tmp_path: Path) -> None:
    png = screenshot(chromium_or_skip(), page, tmp_path / "shot.png")
    width, height, pixels = png_pixels(png.read_bytes())
    assert (width, height) == (1200, 700)
    counts: dict[tuple[int, int, int], int] = {}
    for pixel in pixels:
        counts[pixel] = counts.get(pixel, 0) + 1
    assert max(counts.values()) < len(pixels) * 0.98  # not a blank page
    for name, color in COLORS.items():
        assert counts.get(color, 0) > 20, name
