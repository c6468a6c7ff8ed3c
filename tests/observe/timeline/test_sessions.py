"""Reading host session files: both shapes, unknown fields and records, and every refusal.

Sessions here are written by ``kits.sessions`` in the hosts' exact shapes,
around results of the dispatcher's wire shape; the end-to-end tests with a
real server are in ``tests/surfaces/cli/test_timeline.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boring_dispatch.observe.timeline import SessionInvalid, build_timeline
from boring_dispatch.observe.timeline._events import mcp_name, parse_time
from kits.sessions import HostCall, Turn, write_claude, write_codex

T0: Final = 1_780_000_000.0
TRACE: Final = "0123456789abcdef0123456789abcdef"
FUNCTION_SCOPED = [HealthCheck.function_scoped_fixture]


def _wire(trace_id: str | None, *, meta: bool = True) -> dict[str, Any]:
    dispatcher: dict[str, Any] = {"target": "tools.interface.echo"}
    if trace_id is not None:
        dispatcher["trace_id"] = trace_id
    wire: dict[str, Any] = {
        "content": [{"type": "text", "text": ""}],
        "structuredContent": {"result": {"stdout": "", "dispatcher": dispatcher}},
        "isError": False,
    }
    if meta and trace_id is not None:
        wire["_meta"] = {"dev.boring-dispatch/trace_id": trace_id}
    return wire


def _call(number: int, at: float, took: float, trace_id: str | None = TRACE) -> HostCall:
    return HostCall(f"call_{number}", "invoke_security_0", {}, _wire(trace_id), at, at + took)


def _turns() -> list[Turn]:
    first = [_call(1, T0 + 1.0, 0.25), _call(2, T0 + 2.0, 0.5)]
    return [Turn(T0, first, T0 + 4.0), Turn(T0 + 10.0, [_call(3, T0 + 12.0, 0.1)], T0 + 12.5)]


def _timeline(path: Path) -> dict[str, Any]:
    return build_timeline(path, path.parent / "no-logs").to_dict()


@pytest.fixture(params=["codex", "codex-namespaced", "claude"])
def writer(request: pytest.FixtureRequest) -> Any:
    if request.param == "claude":
        return write_claude
    return lambda path, turns: write_codex(
        path, turns, namespaced=request.param == "codex-namespaced"
    )


def test_the_three_times_by_their_definitions(tmp_path: Path, writer: Any) -> None:
    rows = _timeline(writer(tmp_path / "s.jsonl", _turns()))["calls"]
    assert [row["call_id"] for row in rows] == ["call_1", "call_2", "call_3"]
    assert [row["decision_ms"] for row in rows] == pytest.approx([1000, 750, 2000])
    assert [row["execution_ms"] for row in rows] == pytest.approx([250, 500, 100])
    assert [row["response_ms"] for row in rows] == [None, pytest.approx(1500), pytest.approx(400)]
    assert all(row["dispatcher_ms"] is None for row in rows)
    assert {row["trace_id"] for row in rows} == {TRACE}


@pytest.mark.parametrize("meta", [True, False])
def test_the_trace_id_is_found_with_or_without_meta(
    tmp_path: Path, writer: Any, meta: bool
) -> None:
    call = HostCall("call_9", "invoke_security_1", {}, _wire(TRACE, meta=meta), T0 + 1, T0 + 2)
    rows = _timeline(writer(tmp_path / "s.jsonl", [Turn(T0, [call], T0 + 3)]))["calls"]
    assert rows[0]["trace_id"] == TRACE


def test_calls_of_other_servers_are_left_out(tmp_path: Path) -> None:
    other = HostCall("call_x", "search", {}, _wire(None), T0 + 1, T0 + 2)
    ours = _call(1, T0 + 3, 0.5)
    path = write_codex(tmp_path / "s.jsonl", [Turn(T0, [ours], T0 + 4)])
    write_codex(tmp_path / "o.jsonl", [Turn(T0, [other], T0 + 3)], server="web")
    lines = path.read_text().splitlines()
    extra = write_codex(tmp_path / "x.jsonl", [Turn(T0, [other], T0 + 3)], server="web")
    lines[3:3] = [line for line in extra.read_text().splitlines() if "call_x" in line]
    path.write_text("\n".join(lines) + "\n")
    timeline = build_timeline(path, tmp_path)
    assert [call.call_id for call in timeline.calls] == ["call_1"]
    assert timeline.servers == ("dispatch",)
    # Named by the caller, the other server counts too.
    named = build_timeline(path, tmp_path, servers=["web"])
    assert [call.call_id for call in named.calls] == ["call_x", "call_1"]


# --------------------------------------------------------------------------- #
# Tolerance


def _with_extra_fields(line: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = {**extra, **line}
    if isinstance(line.get("payload"), dict):
        out["payload"] = {**extra, **line["payload"]}
    if isinstance(line.get("message"), dict):
        out["message"] = {**extra, **line["message"]}
    return out


_EXTRA = st.dictionaries(
    st.text("abcdefghijklmnopqrstuvwxyz_", min_size=3, max_size=12).filter(
        lambda key: key not in {"type", "payload", "message", "timestamp", "role", "content"}
    ),
    st.none() | st.integers() | st.text(max_size=20) | st.lists(st.integers(), max_size=3),
    max_size=4,
)


@settings(suppress_health_check=FUNCTION_SCOPED)
@given(extra=_EXTRA)
def test_unknown_fields_change_nothing(tmp_path: Path, writer: Any, extra: dict[str, Any]) -> None:
    path = writer(tmp_path / "s.jsonl", _turns())
    expected = _timeline(path)["calls"]
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps(_with_extra_fields(line, extra)) + "\n" for line in lines))
    assert _timeline(path)["calls"] == expected


def test_unknown_record_types_are_counted_and_skipped(tmp_path: Path, writer: Any) -> None:
    path = writer(tmp_path / "s.jsonl", _turns())
    expected = _timeline(path)["calls"]
    lines = path.read_text().splitlines()
    unknown = json.dumps({"type": "something_new", "timestamp": "2026-01-01T00:00:00Z"})
    lines[2:2] = [unknown, unknown]
    path.write_text("\n".join(lines) + "\n")
    result = _timeline(path)
    assert result["calls"] == expected
    assert "2 record(s) of an unknown type: skipped" in result["notes"]


def test_a_torn_last_line_is_skipped_and_reported(tmp_path: Path, writer: Any) -> None:
    path = writer(tmp_path / "s.jsonl", _turns())
    text = path.read_text()
    lines = text.splitlines()
    path.write_text(text + lines[-1][: len(lines[-1]) // 2])
    result = _timeline(path)
    assert len(result["calls"]) == 3
    assert f"line {len(lines) + 1} is torn (its writer was interrupted): skipped" in result["notes"]


def test_a_zstd_rollout_reads_like_the_plain_one(tmp_path: Path) -> None:
    zstandard = pytest.importorskip("zstandard")
    path = write_codex(tmp_path / "rollout.jsonl", _turns())
    packed = tmp_path / "rollout.jsonl.zst"
    packed.write_bytes(zstandard.ZstdCompressor().compress(path.read_bytes()))
    assert _timeline(packed)["calls"] == _timeline(path)["calls"]
    packed.write_bytes(b"not zstd at all")
    with pytest.raises(SessionInvalid, match="not valid zstd data"):
        _timeline(packed)


# --------------------------------------------------------------------------- #
# Refusals


def _refusal(path: Path) -> str:
    with pytest.raises(SessionInvalid) as caught:
        _timeline(path)
    return str(caught.value)


@pytest.mark.parametrize(
    ("index", "replacement", "expected"),
    [
        (3, "{not json", "line 4: the line is not a JSON object"),
        (3, "[1, 2]", "line 4: the line is not a JSON object"),
        (3, "\udcff", "line 4: the line is not UTF-8"),
    ],
)
def test_a_malformed_line_refuses_the_file(
    tmp_path: Path, writer: Any, index: int, replacement: str, expected: str
) -> None:
    path = writer(tmp_path / "s.jsonl", _turns())
    lines = path.read_text().splitlines()
    lines[index] = replacement
    path.write_bytes(("\n".join(lines) + "\n").encode("utf-8", "surrogateescape"))
    assert _refusal(path) == expected


@pytest.mark.parametrize("stamp", [None, 12, "yesterday", "2026-01-01T00:00:00", "x" * 100])
def test_a_record_without_a_zoned_time_refuses_the_file(
    tmp_path: Path, writer: Any, stamp: object
) -> None:
    path = writer(tmp_path / "s.jsonl", _turns())
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    lines[3]["timestamp"] = stamp
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert _refusal(path).startswith("line 4: the timestamp ")


def test_a_call_without_its_id_refuses_the_file(tmp_path: Path, writer: Any) -> None:
    path = writer(tmp_path / "s.jsonl", _turns())
    text = path.read_text().replace('"call_2"', '""', 1)
    path.write_text(text)
    assert "has no" in _refusal(path)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("", "the session file holds no complete record"),
        ('{"hello": 1}\n', "neither a Codex rollout nor a Claude Code transcript"),
        ('{"type": "response_item", "payload": {}}\n', "neither a Codex rollout"),
    ],
)
def test_what_is_not_a_session_is_refused(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(content)
    assert expected in _refusal(path)


def test_paths_that_hold_no_session_are_refused(tmp_path: Path) -> None:
    assert _refusal(tmp_path / "missing.jsonl") == "no session file or directory at the given path"
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("not a session")
    with pytest.raises(SessionInvalid, match="holds no session file"):
        build_timeline(tmp_path / "empty", tmp_path)


@settings(suppress_health_check=FUNCTION_SCOPED, max_examples=80)
@given(data=st.binary(max_size=400) | st.text(max_size=400).map(str.encode))
def test_any_bytes_give_a_timeline_or_a_refusal(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(data)
    _timeline_or_refusal(path)


@settings(suppress_health_check=FUNCTION_SCOPED, max_examples=80)
@given(
    lines=st.lists(
        st.fixed_dictionaries(
            {},
            optional={
                "type": st.sampled_from(["user", "assistant", "session_meta", "event_msg", "x"]),
                "timestamp": st.sampled_from(["2026-01-01T00:00:00Z", 3, None]),
                "payload": st.dictionaries(
                    st.sampled_from(["type", "call_id", "name"]), st.text(max_size=5) | st.none()
                ),
                "message": st.fixed_dictionaries(
                    {},
                    optional={
                        "content": st.lists(
                            st.dictionaries(
                                st.sampled_from(["type", "id", "name", "tool_use_id", "text"]),
                                st.sampled_from(
                                    ["tool_use", "tool_result", "text", "mcp__a__b", "x"]
                                ),
                            ),
                            max_size=3,
                        )
                        | st.text(max_size=5)
                    },
                ),
                "sessionId": st.just("s"),
            },
        ),
        max_size=6,
    )
)
def test_any_records_give_a_timeline_or_a_refusal(
    tmp_path: Path, lines: list[dict[str, Any]]
) -> None:
    path = tmp_path / "fuzz.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    _timeline_or_refusal(path)


def _timeline_or_refusal(path: Path) -> None:
    """A timeline, or a refusal with a message; any other exception fails the test."""
    refusal = None
    try:
        build_timeline(path, path.parent)
    except SessionInvalid as error:
        refusal = str(error)
    assert refusal is None or refusal.strip()


# --------------------------------------------------------------------------- #
# Names and times


@pytest.mark.parametrize(
    ("name", "namespace", "expected"),
    [
        ("mcp__dispatch__invoke_security_0", None, ("dispatch", "invoke_security_0")),
        ("mcp__my_server__tool__x", None, ("my_server", "tool__x")),
        ("invoke_security_0", "mcp__dispatch", ("dispatch", "invoke_security_0")),
        ("shell", None, None),
        ("mcp____tool", None, None),
        ("mcp__x", None, None),
        (3, None, None),
        ("shell", "functions", None),
    ],
)
def test_mcp_names(name: object, namespace: object, expected: object) -> None:
    assert mcp_name(name, namespace) == expected


@given(st.datetimes(timezones=st.timezones()))
def test_zoned_times_parse_to_their_instant(moment: Any) -> None:
    assert parse_time(moment.isoformat(), 1) == pytest.approx(moment.timestamp(), abs=1e-6)
