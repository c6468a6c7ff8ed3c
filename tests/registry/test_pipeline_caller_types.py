"""A Python caller's ``str``/``int``/``float`` subclasses in the arguments (keys and values).

The validator reads the arguments as JSON text, so a subclass validates as its
plain value; the records, the sensitive values and the injected check must
see that same plain value. A key whose ``__hash__`` or ``__eq__`` differs
from ``str``'s, or a value whose ``__repr__``/``__str__``/``casefold`` raises
or lies, must neither carry a secret past redaction nor make ``dispatch``
raise. Families: every odd key class times every odd value class times every
outcome of the call.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Annotated

import pytest

from boring_dispatch import Registry, Sensitive, Tool, ToolError
from boring_dispatch.registry.injected import Injected
from boring_dispatch.testing import CapturingSink

CANARY = "CANARY-7f3a9q"


class HashKey(str):
    """Equal to its text, hashed elsewhere: a dict lookup by the plain name misses it."""

    __slots__ = ()

    def __hash__(self) -> int:
        return 12345

    __eq__ = str.__eq__


class LyingStr(str):
    """Shows other text than it holds."""

    __slots__ = ()

    def __str__(self) -> str:
        return "harmless"

    def __repr__(self) -> str:
        return "'harmless'"


class RaisingStr(str):
    """Every text-making method raises."""

    __slots__ = ()

    def __repr__(self) -> str:
        raise RuntimeError("repr refused")

    def __str__(self) -> str:
        raise RuntimeError("str refused")

    def casefold(self) -> str:
        raise RuntimeError("casefold refused")


class ExitingStr(str):
    """``repr`` raises a BaseException."""

    __slots__ = ()

    def __repr__(self) -> str:
        raise SystemExit(3)


KEY_CLASSES: list[Callable[[str], str]] = [HashKey, LyingStr, RaisingStr]
VALUE_CLASSES: list[Callable[[str], str]] = [str, HashKey, LyingStr, RaisingStr, ExitingStr]


def _refuse(note: str, api_token: Annotated[str, Sensitive]) -> None:
    raise ToolError(f"refused {api_token}")


def _crash(note: str, api_token: Annotated[str, Sensitive]) -> None:
    raise RuntimeError(f"crashed {api_token}")


def _echo(note: str, api_token: Annotated[str, Sensitive]) -> dict[str, str]:
    return {"echo": api_token}


def _typed(note: int, api_token: Annotated[str, Sensitive]) -> None:
    raise AssertionError("never called: note is not an int")


def _keys(note: str, tokens: dict[str, Annotated[str, Sensitive]]) -> None:
    raise ToolError(f"refused {sorted(tokens.values())}")


HANDLERS: dict[str, Callable[..., object]] = {
    "refuse": _refuse,
    "crash": _crash,
    "echo": _echo,
    "typed": _typed,
}


def _table() -> tuple[Registry, CapturingSink]:
    sink = CapturingSink()
    tools = {n: Tool(h, description=f"{n} tool.") for n, h in HANDLERS.items()}
    tools["keys"] = Tool(_keys, description="keys tool.")
    return Registry(tools, sinks=[sink]), sink


def _leaks(sink: CapturingSink, caplog: pytest.LogCaptureFixture, *texts: str) -> list[str]:
    places = [repr(event) for event in sink.events] + [caplog.text, *texts]
    return [place for place in places if CANARY in place]


@pytest.mark.parametrize("tool", sorted(HANDLERS))
@pytest.mark.parametrize("key_class", KEY_CLASSES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("value_class", VALUE_CLASSES, ids=lambda c: c.__name__)
def test_an_odd_key_or_value_never_leaks_the_secret_nor_raises(
    tool: str,
    key_class: Callable[[str], str],
    value_class: Callable[[str], str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    table, sink = _table()
    args = {"note": "n", key_class("api_token"): value_class(CANARY)}
    with caplog.at_level(logging.INFO, logger="boring_dispatch"):
        observation = table.dispatch(tool, args)
    text = json.dumps(observation.to_dict())
    # The secret may reach the handler (its own result is the model's to read), nowhere else.
    assert _leaks(sink, caplog, "" if tool == "echo" else text) == []
    assert (
        observation.code
        == {
            "refuse": "tool_error",
            "crash": "internal_error",
            "echo": "ok",
            "typed": "invalid_arguments",
        }[tool]
    )


@pytest.mark.parametrize("value_class", VALUE_CLASSES, ids=lambda c: c.__name__)
def test_an_odd_value_under_a_mapping_of_secrets_is_redacted(
    value_class: Callable[[str], str], caplog: pytest.LogCaptureFixture
) -> None:
    table, sink = _table()
    args = {"note": "n", "tokens": {HashKey("a"): value_class(CANARY)}}
    with caplog.at_level(logging.INFO, logger="boring_dispatch"):
        observation = table.dispatch("keys", args)
    assert observation.code == "tool_error"
    assert _leaks(sink, caplog, json.dumps(observation.to_dict())) == []


@pytest.mark.parametrize("key_class", KEY_CLASSES, ids=lambda c: c.__name__)
def test_an_odd_key_cannot_send_an_injected_parameter(key_class: Callable[[str], str]) -> None:
    seen: list[str] = []

    def whoami(user: Annotated[str, Injected]) -> dict[str, str]:
        seen.append(user)
        return {"user": user}

    table = Registry({"whoami": Tool(whoami, description="Who am I.")})
    observation = table.dispatch(
        "whoami", {key_class("user"): "mallory"}, context={"user": "alice"}
    )
    assert seen in ([], ["alice"])
    assert observation.code in ("invalid_arguments", "invalid_request")


def test_a_key_and_its_subclass_twin_are_refused_not_merged() -> None:
    table, sink = _table()
    args = {"note": "n", "api_token": "first", HashKey("api_token"): CANARY}
    observation = table.dispatch("echo", args)
    assert observation.code == "invalid_request"
    assert all(CANARY not in repr(event) for event in sink.events)


class RaisingText(str):
    """Request text whose own methods raise (a BaseException, even)."""

    __slots__ = ()

    def __len__(self) -> int:
        raise SystemExit(4)

    def encode(self, *_: object, **__: object) -> bytes:
        raise SystemExit(5)


ODD_TEXTS: list[object] = [
    None,
    5,
    1.5,
    [],
    {"name": "get"},
    bytearray(b'{"name": "get"}'),
    memoryview(b'{"name": "get"}'),
    RaisingText('{"name": "get"}'),
    LyingStr('{"name": "get"}'),
]


@pytest.mark.parametrize("text", ODD_TEXTS, ids=lambda t: type(t).__name__)
@pytest.mark.parametrize("entry", ["dispatch_json", "dispatch_args_json"])
def test_request_text_of_any_type_is_an_observation_never_an_exception(
    text: object, entry: str
) -> None:
    ran: list[object] = []

    def get(name: str = "x") -> dict[str, str]:
        ran.append(name)
        return {"name": name}

    table = Registry({"get": Tool(get, description="Get.")})
    if entry == "dispatch_json":
        observation = table.dispatch_json(text)  # type: ignore[arg-type]
    else:
        observation = table.dispatch_args_json("get", text)  # type: ignore[arg-type]
    # Text a subclass or a buffer holds may be read as what it holds; anything else is refused.
    assert observation.code in ("ok", "invalid_request", "invalid_arguments")
    if not isinstance(text, str | bytes | bytearray):
        assert observation.code == "invalid_request"
