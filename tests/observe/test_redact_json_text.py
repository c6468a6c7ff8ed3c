"""Secrets that arrive as JSON text (``pydantic.Json[...]``) are still known as secrets.

A ``Json[dict[str, Annotated[str, Sensitive]]]`` argument is sent as a string
that the validator decodes. Redaction by path fails closed on it (a string
where an object belongs becomes the placeholder), and the sensitive values
that decide whether a message is withheld must follow the same rule: the
string, and what it decodes to, are sensitive. Families: every Json-wrapped
shape times every outcome that can quote the value (a ``tool_error``
message, an ``internal_error`` traceback in the log, a recorded result).
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from typing import Annotated

import pytest
from pydantic import BaseModel, ConfigDict, Json

from boring_dispatch import Registry, Sensitive, Tool, ToolError
from boring_dispatch.testing import CapturingSink

CANARY = "CANARYj50n"
Token = Annotated[str, Sensitive]


class Creds(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    token: Token


CASES: dict[str, tuple[object, str]] = {
    "dict": (Json[dict[str, Token]], f'{{"a": "{CANARY}"}}'),
    "token": (Json[Token], f'"{CANARY}"'),
    "model": (Json[Creds], f'{{"token": "{CANARY}"}}'),
    "list": (Json[list[Token]], f'["{CANARY}"]'),
    "nested": (Json[dict[str, list[Token]]], f'{{"a": ["x", "{CANARY}"]}}'),
}


@pytest.fixture
def log_text() -> Iterator[io.StringIO]:
    text = io.StringIO()
    handler = logging.StreamHandler(text)
    logger = logging.getLogger("boring_dispatch")
    logger.addHandler(handler)
    previous = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        yield text
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)


@pytest.mark.parametrize("mode", ["tool", "crash", "echo"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_secret_sent_as_json_text_is_never_shown(
    case: str, mode: str, log_text: io.StringIO
) -> None:
    annotation, value = CASES[case]

    def handler(x: object, mode: str) -> dict[str, str]:
        if mode == "tool":
            raise ToolError(f"refused {x!r}")
        if mode == "crash":
            raise RuntimeError(f"crashed {x!r}")
        return {"echo": repr(x)}

    handler.__annotations__ = {"x": annotation, "mode": str, "return": dict[str, str]}
    sink = CapturingSink()
    table = Registry({"t": Tool(handler, description="t")}, sinks=[sink])
    observation = table.dispatch("t", {"x": value, "mode": mode})
    assert observation.code == {"tool": "tool_error", "crash": "internal_error", "echo": "ok"}[mode]
    shown = repr(sink.events) + log_text.getvalue()
    if mode != "echo":  # the result itself is the model's to read; its record is not
        shown += observation.model_text()
    assert CANARY not in shown
