"""Text and HTML of a timeline: what a session names is shown quoted or escaped, never raw."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Final

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from boring_dispatch.observe.timeline import Timeline, build_timeline, render_html, render_text
from kits.sessions import HostCall, Turn, write_claude, write_codex

T0: Final = 1_780_000_000.0
TRACE: Final = "0123456789abcdef0123456789abcdef"
HOSTILE: Final = st.sampled_from(
    ["<script>alert(1)</script>", "\x1b[31mred", "a\u202eb", "x\ny", '"><img src=x>', "&amp;"]
) | st.text(min_size=1, max_size=30)


def _wire() -> dict[str, Any]:
    return {
        "content": [],
        "structuredContent": {"result": {"dispatcher": {"trace_id": TRACE}}},
        "_meta": {"dev.boring-dispatch/trace_id": TRACE},
        "isError": False,
    }


def _timeline(path: Path, tool: str, server: str, *, claude: bool) -> Timeline:
    call = HostCall("call_1", tool, {}, _wire(), T0 + 1, T0 + 2)
    turns = [Turn(T0, [call], T0 + 3)]
    if claude:
        write_claude(path, turns, server=server)
    else:
        write_codex(path, turns, server=server, namespaced=True)
    return build_timeline(path, path.parent)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
@given(
    tool=HOSTILE,
    # Claude Code's ``mcp__<server>__<tool>`` cannot tell server "0_" and tool "x" from
    # server "0" and tool "_x": a server name that starts or ends with "_" is ambiguous.
    server=HOSTILE.filter(
        lambda s: "__" not in s and not s.startswith("_") and not s.endswith("_")
    ),
    claude=st.booleans(),
)
@example(tool="<", server="<script>alert(1)</script>", claude=False)  # "<" is in our markup too
def test_session_strings_never_reach_the_output_raw(
    tmp_path: Path, tool: str, server: str, claude: bool
) -> None:
    timeline = _timeline(tmp_path / "s.jsonl", tool, server, claude=claude)
    assert [c.tool for c in timeline.calls] == [tool]
    text = render_text(timeline, 1000.0)
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]", text)
    html = render_html(timeline, 1000.0)
    assert "<script" not in html
    assert "<img" not in html
    assert "\x1b" not in html
    body = html.split("<body>", 1)[1]
    # The same session with plain names: what its page contains is our own markup, so a
    # fragment found there (a lone "<", say) proves nothing by being found again.
    plain = _timeline(tmp_path / "plain.jsonl", "plaintool", "plainserver", claude=claude)
    markup = render_html(plain, 1000.0).split("<body>", 1)[1]
    for fragment in (tool, server):
        if any(ch in fragment for ch in '<>"') and fragment not in markup:
            assert fragment not in body
