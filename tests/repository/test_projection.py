from __future__ import annotations

import pytest

from boring_dispatch.errors import InvalidRouteRequest
from boring_dispatch.repository.projection import parse_projection, projection_argv


def test_positionals_come_first_then_options_in_the_order_given() -> None:
    argv = projection_argv(["x.yaml"], {"--date": "2026-01-02", "verbose": True})
    assert argv == ("x.yaml", "--date", "2026-01-02", "--verbose")


def test_false_and_null_options_emit_nothing() -> None:
    assert projection_argv([], {"a": False, "b": None}) == ()


def test_a_list_value_is_one_flag_followed_by_each_value() -> None:
    assert projection_argv([], {"--tag": ["a", "b", 3]}) == ("--tag", "a", "b", "3")


def test_a_positional_with_a_leading_dash_moves_after_a_double_dash() -> None:
    argv = projection_argv(["-rf", "x"], {"--date": "d"})
    assert argv == ("--date", "d", "--", "-rf", "x")


def test_a_lone_dash_is_an_ordinary_positional() -> None:
    assert projection_argv(["-"], {}) == ("-",)


@pytest.mark.parametrize(
    "options",
    [
        {"--x": 1.0},
        {"--x": {"nested": 1}},
        {"--x": [True]},
        {"--x": [1.5]},
        {"x y": "v"},
        {"--": "v"},
        {"-": "v"},
        {"---x": "v"},
        {"x": "1", "--x": "2"},
        {"--é": "v"},
        {"client-id": ["a", "--port", "80"]},
        {"--x": "--port"},
        {"--x": "-v"},
        {"--x": -1},
        {"--x": [-1]},
    ],
)
def test_refused_option_shapes_raise_invalid_request(options: dict[str, object]) -> None:
    with pytest.raises(InvalidRouteRequest) as caught:
        projection_argv([], options)
    assert caught.value.code == "dispatcher.invalid_request"


def test_positionals_must_be_strings() -> None:
    with pytest.raises(InvalidRouteRequest):
        projection_argv([1], {})  # type: ignore[list-item]
    with pytest.raises(InvalidRouteRequest):
        projection_argv("abc", {})


def _projection(**overrides: object) -> dict[str, object]:
    value: dict[str, object] = {
        "caller": "daily-plan",
        "interface": "list-manager._rtx.interface.read-list",
        "version": 1,
        "arguments": {"positionals": ["/tmp/todo.yaml"], "options": {}, "stdin": None},
        "dry_run": False,
    }
    value.update(overrides)
    return value


def test_a_well_formed_projection_becomes_a_request() -> None:
    parsed = parse_projection(_projection(), tier=0)
    assert parsed.request.caller == "daily-plan"
    assert parsed.request.argv == ("/tmp/todo.yaml",)
    assert parsed.request.sends_stdin is False
    assert parsed.request.tier == 0
    assert parsed.dry_run is False


def test_stdin_text_asks_for_stdin() -> None:
    parsed = parse_projection(_projection(arguments={"stdin": "hello"}))
    assert parsed.request.sends_stdin is True
    assert parsed.stdin_text == "hello"


@pytest.mark.parametrize(
    "value",
    [
        [],
        "x",
        _projection(extra=1),
        {"caller": "a", "arguments": {}},
        _projection(caller=1),
        _projection(version=True),
        _projection(version=0),
        _projection(version="1"),
        _projection(dry_run="yes"),
        _projection(arguments=[]),
        _projection(arguments={"positionals": "a"}),
        _projection(arguments={"options": []}),
        _projection(arguments={"stdin": 5}),
        _projection(arguments={"argv": []}),
    ],
)
def test_malformed_projections_are_refused(value: object) -> None:
    with pytest.raises(InvalidRouteRequest):
        parse_projection(value)
