"""Fuzz the whole repository pipeline: random IDs and argv give a route or a RouteError."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from boring_dispatch.errors import RouteError
from boring_dispatch.records import Route, RouteRequest
from boring_dispatch.repository.repository import Repository
from kits.cases import corpus_config

REPOSITORY = Repository.open(corpus_config("famulus"))
REAL_CALLERS = ("daily-plan", "get-weather", "list-manager", "list-manager._rtx", "wakeup")
REAL_TARGETS = (
    "list-manager._rtx.interface.read-list",
    "get-weather._rtx.interface.scripts-weather",
    "wakeup.interface.explicit-schedule",
    "daily-plan._rtx.interface.render-plan",
)
segment = st.text(alphabet="abc-_.Z9 \x00é", min_size=0, max_size=12)
ids = st.one_of(
    st.sampled_from(REAL_CALLERS),
    st.builds(".".join, st.lists(segment, min_size=1, max_size=4)),
    st.text(max_size=40),
)
targets = st.one_of(
    st.sampled_from(REAL_TARGETS),
    st.builds(lambda m, n: f"{m}.interface.{n}", ids, segment),
    st.text(max_size=60),
)
argv = st.lists(
    st.one_of(
        st.sampled_from(["--date", "2026-01-02", "--", "-", "--route-smoke", "x=y", "/tmp/a"]),
        st.text(max_size=20),
    ),
    max_size=8,
)


requests = st.builds(
    RouteRequest,
    caller=ids,
    target=targets,
    version=st.one_of(st.none(), st.integers(min_value=-2, max_value=3)),
    argv=st.builds(tuple, argv),
    sends_stdin=st.booleans(),
    from_host=st.booleans(),
    tier=st.one_of(st.none(), st.integers(min_value=0, max_value=2)),
)


def _outcome(request: RouteRequest) -> Route | RouteError:
    try:
        return REPOSITORY.resolve(request)
    except RouteError as error:
        return error


@given(requests)
def test_random_requests_resolve_or_raise_a_route_error(request: RouteRequest) -> None:
    outcome = _outcome(request)  # anything but a RouteError propagates and fails the test
    if isinstance(outcome, RouteError):
        assert outcome.code.startswith("dispatcher.")
        assert outcome.caller_module_id == request.caller
    else:
        assert outcome.target == request.target
        assert outcome.caller_module_id == request.caller
