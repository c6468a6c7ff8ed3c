"""The repository record's JSON line: fixed keys, requested text cut and escaped, one line."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from boring_dispatch.observe.audit import JsonLinesAuditSink, read_records
from boring_dispatch.observe.repository_audit import (
    MAX_TEXT,
    RepositoryAuditEvent,
    RepositoryAuditSink,
    cut,
    minimal,
    repository_line,
)


def _event(caller: str | None, interface: str | None, **fields: object) -> RepositoryAuditEvent:
    values: dict[str, object] = {
        "time": 1_700_000_000.25,
        "caller": caller,
        "nested": False,
        "interface": interface,
        "version": 2,
        "outcome": "ok",
        "exit_code": 0,
        "duration_ms": 12.34567,
        "trace_id": "b" * 32,
        "security_level": 1,
    }
    values.update(fields)
    return RepositoryAuditEvent(**values)  # type: ignore[arg-type]


def test_the_line_has_exactly_the_documented_keys(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    with JsonLinesAuditSink(path) as sink:
        assert isinstance(sink, RepositoryAuditSink)
        sink.record(_event("host", "tools.interface.echo"))
    (record,) = [r for _, r in read_records(path).records]
    assert record == {
        "time": "2023-11-14T22:13:20.250+00:00",
        "kind": "repository_call",
        "caller": "host",
        "nested": False,
        "interface": "tools.interface.echo",
        "version": 2,
        "outcome": "ok",
        "exit_code": 0,
        "duration_ms": 12.346,
        "trace_id": "b" * 32,
        "security_level": 1,
    }


def test_the_minimal_record_keeps_the_outcome_and_drops_the_requested_names() -> None:
    line = repository_line(minimal(_event("host", "tools.interface.echo")))
    assert line["caller"] == line["interface"] == "[not recorded]"
    assert line["version"] is None
    assert (line["outcome"], line["exit_code"], line["trace_id"]) == ("ok", 0, "b" * 32)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400), st.text(max_size=400))
def test_any_requested_text_is_cut_and_written_as_one_ascii_line(
    tmp_path_factory: object, caller: str, interface: str
) -> None:
    path = tmp_path_factory.mktemp("audit") / "audit.jsonl"  # type: ignore[attr-defined]
    with JsonLinesAuditSink(path) as sink:
        sink.record(_event(cut(caller), cut(interface)))
    data = path.read_bytes()
    assert data.count(b"\n") == 1
    assert data.endswith(b"\n")
    data.decode("ascii")  # escaped, never raw
    record = json.loads(data)
    assert record["caller"] == caller[:MAX_TEXT]
    assert record["interface"] == interface[:MAX_TEXT]


def test_only_an_exact_str_is_kept_as_requested_text() -> None:
    class Sneaky(str):
        __slots__ = ()

        def __getitem__(self, _: object) -> str:
            raise AssertionError("evaluated")

    assert cut(Sneaky("tools.interface.echo")) is None
    assert cut(b"tools.interface.echo") is None
    assert cut(None) is None
    assert cut("é" * 300) == "é" * MAX_TEXT


_WITH_SURROGATES = st.text(st.characters(codec=None, categories=None), max_size=200).filter(
    lambda text: any(0xD800 <= ord(char) <= 0xDFFF for char in text)
) | st.builds(lambda a, b: a + "\udcff" + b, st.text(max_size=20), st.text(max_size=20))


@settings(max_examples=200, deadline=None)
@given(_WITH_SURROGATES, _WITH_SURROGATES)
def test_a_lone_surrogate_is_kept_as_visible_text_so_every_reader_can_parse_the_line(
    tmp_path_factory: object, caller: str, interface: str
) -> None:
    """A non-UTF-8 ``--caller-skill`` byte reaches Python as a lone surrogate; written as a
    JSON ``\\udcff`` escape it is no character at all, and a strict reader (Rust's
    serde_json, a SIEM) refuses the whole line: one bad byte would hide a record."""
    path = tmp_path_factory.mktemp("audit") / "audit.jsonl"  # type: ignore[attr-defined]
    with JsonLinesAuditSink(path) as sink:
        sink.record(_event(cut(caller), cut(interface)))
    record = json.loads(path.read_bytes())
    for key in ("caller", "interface"):
        value = record[key]
        assert isinstance(value, str)
        value.encode("utf-8")  # no lone surrogate left
        assert len(value) <= 6 * MAX_TEXT
