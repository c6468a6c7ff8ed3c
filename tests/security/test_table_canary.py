"""A secret given to a sensitive argument never leaves the call.

The canary goes into the arguments, into a handler's exception message and
into a ToolError message. It must appear in no audit line, no trace line, no
log record of any logger, and no observation; while the handler itself does
receive it (otherwise this suite could not fail).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import pytest
from pydantic import BaseModel, ConfigDict, SecretStr

from boring_dispatch import Observation, Registry, Sensitive, Tool, ToolError
from boring_dispatch.observe.audit import JsonLinesAuditSink, TraceRecorder
from boring_dispatch.testing import CapturingSink

CANARIES = ("CANARY-5f0c1e-plain", 'CANARY-"quoted"\\back\nslash', "CANARY-caf\u00e9-\u2603")
RECEIVED: list[str] = []


class Card(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    number: SecretStr
    holder: str


def charge(account: str, api_token: Annotated[str, Sensitive], card: Card) -> dict[str, object]:
    RECEIVED.extend([api_token, card.number.get_secret_value()])
    return {"account": account, "charged": True}


def explode(api_token: Annotated[str, Sensitive]) -> None:
    RECEIVED.append(api_token)
    raise RuntimeError(f"upstream rejected {api_token}")


def lookup(api_token: Annotated[str, Sensitive]) -> None:
    RECEIVED.append(api_token)
    raise KeyError(api_token)


def refuse(api_token: SecretStr) -> None:
    RECEIVED.append(api_token.get_secret_value())
    raise ToolError(f"token {api_token.get_secret_value()} has expired")


def _reject(value: str) -> None:
    raise ValueError(value)


def chained(api_token: Annotated[str, Sensitive]) -> None:
    RECEIVED.append(api_token)
    try:
        _reject(api_token)
    except ValueError as inner:
        raise RuntimeError("wrapper") from inner


class Captured(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.texts: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.texts.append(record.getMessage())
        self.texts.append(repr(vars(record)))


@pytest.fixture
def every_log_record(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every record of every logger, however its handlers or propagation are set."""
    texts: list[str] = []
    real_handle = logging.Logger.handle

    def handle(self: logging.Logger, record: logging.LogRecord) -> None:
        texts.append(record.getMessage())
        texts.append(repr(vars(record)))
        real_handle(self, record)

    root = logging.getLogger()
    old_level = root.level
    root.setLevel(logging.DEBUG)
    monkeypatch.setattr(logging.Logger, "handle", handle)
    yield texts
    root.setLevel(old_level)


def calls(canary: str) -> list[tuple[str, dict[str, object]]]:
    card = {"number": canary, "holder": "Ada"}
    return [
        ("charge", {"account": "a-1", "api_token": canary, "card": card}),
        ("charge", {"account": 7, "api_token": canary, "card": card}),
        ("charge", {"account": "a-1", "api_key": canary, "card": card}),
        ("charge", {"account": "a-1", "api_token": canary, "card": {**card, "cvv": canary}}),
        ("charge", {"account": "a-1", "api_token": "t", "card": [canary]}),
        ("charge", {"account": "a-1", "api_token": "t", "card": canary}),
        ("explode", {"api_token": canary}),
        ("lookup", {"api_token": canary}),
        ("refuse", {"api_token": canary}),
        ("chained", {"api_token": canary}),
        ("no_such_tool", {"api_token": canary}),
    ]


@pytest.mark.parametrize("canary", CANARIES)
def test_a_secret_appears_in_no_audit_line_log_record_or_observation(
    canary: str, tmp_path: Path, every_log_record: list[str]
) -> None:
    RECEIVED.clear()
    audit_path, trace_path = tmp_path / "audit.jsonl", tmp_path / "trace.jsonl"
    capture = CapturingSink()
    with JsonLinesAuditSink(audit_path) as audit, TraceRecorder(trace_path) as trace:
        registry = Registry(
            {
                "charge": Tool(charge, description="Charge a card."),
                "explode": Tool(explode, description="Always fails."),
                "lookup": Tool(lookup, description="Always misses."),
                "refuse": Tool(refuse, description="Always refuses."),
                "chained": Tool(chained, description="Fails with a cause."),
            },
            name="canary",
            sinks=[audit, trace, capture],
        )
        observations: list[Observation] = []
        for name, args in calls(canary):
            observations.append(registry.dispatch(name, args))
            request = json.dumps({"name": name, "args": args})
            observations.append(registry.dispatch_json(request))

    assert canary in RECEIVED  # the handlers did see it
    assert [o.code for o in observations[::2]] == [
        "ok",
        "invalid_arguments",
        "invalid_arguments",
        "invalid_arguments",
        "invalid_arguments",
        "invalid_arguments",
        "internal_error",
        "internal_error",
        "tool_error",
        "internal_error",
        "unknown_tool",
    ]
    assert any("Traceback" in text for text in every_log_record)  # the logs were captured

    forms = {canary, json.dumps(canary)[1:-1], repr(canary)[1:-1]}
    written = [
        audit_path.read_text(encoding="utf-8"),
        trace_path.read_text(encoding="utf-8"),
        *every_log_record,
        *(o.to_json() for o in observations),
        *(repr(o) for o in observations),
        *(repr(event) for event in capture.events),
    ]
    for text in written:
        for form in forms:
            assert form not in text
