"""Manager options: exact keys, strict values; a malformed resume or setup ID never passes."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from boring_dispatch.errors import InvalidRouteRequest, RouteError, SetupGraphInvalid
from boring_dispatch.setup.manager.options import (
    ROUTE_OPTIONS,
    check_options,
    dump_resume,
    parse_resume,
    parse_setup_key,
)

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
