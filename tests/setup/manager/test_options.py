"""Manager options: exact keys, strict values; a malformed resume or setup ID never passes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boring_dispatch.errors import (
    InvalidRouteRequest,
    RouteError,
    SetupFlowRefused,
    SetupGraphInvalid,
)
from boring_dispatch.repository.repository import Repository
from boring_dispatch.setup.manager.options import (
    ROUTE_OPTIONS,
    check_options,
    dump_resume,
    parse_resume,
    parse_setup_key,
)
from boring_dispatch.setup.manager.routes import SetupManager
from kits.setup_repo import write_setup_repository

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(_JSON)
def test_only_the_exact_resume_object_parses(value: object) -> None:
    text = json.dumps(value)
    valid = (
        isinstance(value, dict)
        and set(value) == {"caller", "interface", "version"}
        and isinstance(value["caller"], str)
        and isinstance(value["interface"], str)
        and (value["version"] is None or (type(value["version"]) is int and value["version"] >= 1))
    )
    if valid:
        assert parse_resume(dump_resume(parse_resume(text))) == parse_resume(text)
    else:
        with pytest.raises(InvalidRouteRequest):
            parse_resume(text)


@given(st.text(max_size=60))
def test_setup_keys(text: str) -> None:
    try:
        setup_id, version = parse_setup_key(text)
    except SetupGraphInvalid:
        return
    assert setup_id.endswith(".interface.setup")
    assert version is None or version >= 1
    assert text in (setup_id, f"{setup_id}@{version}")


@pytest.mark.parametrize("route", sorted(ROUTE_OPTIONS))
def test_every_route_refuses_unknown_and_missing_options(route: str) -> None:
    required, optional = ROUTE_OPTIONS[route]
    good: dict[str, object] = dict.fromkeys(required, "x")
    if "outcome" in good:
        good["outcome"] = "ready"
    assert set(check_options(route, good)) == required
    with pytest.raises(InvalidRouteRequest):
        check_options(route, {**good, "unknown": "x"})
    for key in required:
        with pytest.raises(InvalidRouteRequest):
            check_options(route, {k: v for k, v in good.items() if k != key})
        for bad in (1.5, ["x"], {"a": 1}, "", None, True):
            if key in optional:
                continue
            with pytest.raises(RouteError):
                check_options(route, {**good, key: bad})
    del optional


# Every route, every required option filled with hostile values (texts with
# NUL, controls, look-alike IDs, huge strings; other JSON types): the route
# refuses with a ``dispatcher.*`` code and the ledger is unchanged.
_HOSTILE_TEXT = st.one_of(
    st.text(max_size=40),
    st.text(alphabet="\x00\n\r\t\u202e\ufeff@.{}\"'\\", max_size=20),
    st.sampled_from(
        [
            "app.interface.setup@0",
            "app.interface.setup@-1",
            "app.interface.setup@1@1",
            "app.interface.setup@" + "9" * 30,
            "setup-interface-manager._rtx.interface.setup",
            "app.interface.read@1",
            "APP.interface.setup",
            "app.interface.setup\x00",
            " app.interface.setup",
            "x" * 5000,
            '{"caller":"host","interface":"app.interface.read","version":0}',
            '{"caller":"host","interface":"app.interface.read","version":1.0}',
        ]
    ),
)
_HOSTILE = st.one_of(
    _HOSTILE_TEXT,
    st.none(),
    st.booleans(),
    st.integers(),
    st.lists(st.text(max_size=3), max_size=2),
)
_ROUTES_WITH_OPTIONS = sorted(r for r, (required, _) in ROUTE_OPTIONS.items() if required)


@pytest.fixture(scope="module")
def hostile_manager(tmp_path_factory: pytest.TempPathFactory) -> tuple[SetupManager, Path]:
    directory = tmp_path_factory.mktemp("hostile")
    config = write_setup_repository(directory / "repo")
    ledger = directory / "ledger.sqlite3"
    manager = SetupManager(Repository.open(config, ledger=str(ledger)))
    resume = '{"caller":"host","interface":"app.interface.read","version":1}'
    manager.call("begin", "host", {"setup": "app.interface.setup@1", "resume": resume})
    return manager, ledger


def _snapshot(path: Path) -> list[object]:
    connection = sqlite3.connect(path)
    try:
        return [
            connection.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()  # noqa: S608
            for table in ("setups", "flows", "events")
        ]
    finally:
        connection.close()


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(route=st.sampled_from(_ROUTES_WITH_OPTIONS), data=st.data())
def test_hostile_options_are_refused_and_change_nothing(
    hostile_manager: tuple[SetupManager, Path], route: str, data: st.DataObject
) -> None:
    manager, ledger = hostile_manager
    required, optional = ROUTE_OPTIONS[route]
    extra = data.draw(st.lists(st.sampled_from(sorted(optional)), unique=True)) if optional else []
    keys = sorted(required) + extra
    options = {key: data.draw(_HOSTILE, label=key) for key in keys}
    before = _snapshot(ledger)
    with pytest.raises(RouteError) as raised:
        manager.call(route, "host", options)
    assert raised.value.code.startswith("dispatcher.")
    assert _snapshot(ledger) == before


@pytest.mark.parametrize("flow", ["\ud800", "a\udfffb", "\x00", "fl\u00f6w", "０１"])
@pytest.mark.parametrize("route", ["run-python", "run-markdown", "recover", "recover-busy"])
def test_a_flow_id_outside_the_id_alphabet_is_an_unknown_flow(
    hostile_manager: tuple[SetupManager, Path], flow: str, route: str
) -> None:
    # A lone surrogate cannot even be encoded for the database: refused before it.
    manager, ledger = hostile_manager
    before = _snapshot(ledger)
    with pytest.raises(SetupFlowRefused):
        manager.call(route, "host", {"flow": flow})
    assert _snapshot(ledger) == before
