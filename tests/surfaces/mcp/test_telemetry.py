"""``traced_call`` without OpenTelemetry: a fresh, valid, unshared trace id per call, no spans."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from boring_dispatch.observe.trace import valid_trace_id
from boring_dispatch.surfaces.mcp import _telemetry
from boring_dispatch.surfaces.mcp._results import ToolOutcome
from boring_dispatch.surfaces.mcp._telemetry import traced_call

HOST_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
_METAS = st.sampled_from(
    [None, {}, {"traceparent": f"00-{HOST_TRACE}-00f067aa0ba902b7-01"}, {"traceparent": 3}]
)


@pytest.fixture(autouse=True)
def _no_otel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BORING_DISPATCH_OTEL", raising=False)


@given(
    tool=st.sampled_from([None, "invoke_security_0", "invoke_security_2"]),
    request_id=st.one_of(st.none(), st.integers(), st.text(max_size=200)),
    meta=_METAS,
    repository=st.booleans(),
    failed=st.booleans(),
)
def test_each_call_gets_a_fresh_trace_id_held_only_while_it_runs(
    tool: str | None,
    request_id: object,
    meta: dict[str, object] | None,
    repository: bool,
    failed: bool,
) -> None:
    dispatcher: dict[str, object] = (
        {"error": {"code": "dispatcher.access_denied"}} if failed else {}
    )
    outcome = ToolOutcome({"result": {"dispatcher": dispatcher}}, ("",), failed)
    with traced_call(tool, request_id, meta, repository=repository) as first:
        with traced_call(tool, request_id, meta, repository=repository) as second:
            assert first.trace_id in _telemetry._RUNNING
            assert second.trace_id in _telemetry._RUNNING
            second.finish(outcome)  # no span to mark: nothing raises
        first.finish(outcome)
    for traced in (first, second):
        assert valid_trace_id(traced.trace_id)
        assert traced.trace_id != HOST_TRACE  # a host's traceparent only counts for spans
        assert traced.trace_id not in _telemetry._RUNNING
    assert first.trace_id != second.trace_id


def test_an_exception_in_the_call_releases_its_trace_id() -> None:
    with (
        pytest.raises(RuntimeError),
        traced_call("invoke_security_0", 1, None, repository=True) as t,
    ):
        raise RuntimeError
    assert t.trace_id not in _telemetry._RUNNING
