"""Finding 4: text that holds a sensitive value is shown whole or withheld whole, never scrubbed.

Scrubbing in place was an oracle: with the password ``o`` a message became
``wr[redacted]ng passw[redacted]rd``; with ``refused``, ``the provider
[redacted] the request``. Now a ``tool_error`` message, an ``internal_error``
log line and a recorded result are each either exactly what the code produced
(no sensitive value in it) or a fixed text. The properties below: the output
is one of those two, and two different secrets that both occur give the same
output (so the output says nothing about which secret it was).
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Annotated

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from boring_dispatch import Registry, Sensitive, Tool, ToolError
from boring_dispatch.observe.audit import JsonLinesAuditSink, TraceRecorder
from boring_dispatch.observe.redact import PLACEHOLDER
from boring_dispatch.registry.pipeline import WITHHELD_MESSAGE
from hardening_pipeline_kit import captured_logs

CAP = 2000


def refuse(message: str, password: Annotated[str, Sensitive]) -> None:
    raise ToolError(message)


def crash(message: str, password: Annotated[str, Sensitive]) -> None:
    raise RuntimeError(message)


def _fail(message: str) -> None:
    raise ValueError(message)


def crash_chained(message: str, password: Annotated[str, Sensitive]) -> None:
    try:
        _fail(message)
    except ValueError as error:
        raise KeyError(message) from error


def echo(message: str, password: Annotated[str, Sensitive]) -> dict[str, str]:
    return {"status": "done", "note": message}


TABLE = Registry(
    {
        "refuse": Tool(refuse, description="Refuses with the given message."),
        "crash": Tool(crash, description="Crashes with the given message."),
        "crash_chained": Tool(crash_chained, description="Crashes twice."),
        "echo": Tool(echo, description="Echoes the message."),
    },
    name="secrets",
)


def _forms(secret: str) -> set[str]:
    return {secret, repr(secret)[1:-1], json.dumps(secret)[1:-1]} - {""}


def _message(secret: str, message: str) -> str:
    observation = TABLE.dispatch("refuse", {"message": message, "password": secret})
    assert observation.code == "tool_error"
    assert observation.error is not None
    return observation.error.message


SHORT_AND_COMMON = ["o", "e", " ", "1", "a", "the", "refused", "password", "request", "é", "ß"]
MESSAGES = [
    "wrong password",
    "the provider refused the request",
    "no such invoice 1001",
    "Refused: THE REQUEST",
    "caf\u00e9 closed",
    "Stra\u00dfe blocked",
    "x" * (CAP - 3) + "refused",  # the secret straddles the cap
]


@pytest.mark.parametrize("secret", SHORT_AND_COMMON)
@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: m[:24])
def test_a_tool_error_message_is_whole_or_the_fixed_text(secret: str, message: str) -> None:
    shown = _message(secret, message)
    if any(form in message for form in _forms(secret)):
        assert shown == WITHHELD_MESSAGE
    assert shown in {message[:CAP], WITHHELD_MESSAGE}
    assert PLACEHOLDER not in shown


@pytest.mark.parametrize(
    ("message", "secrets"),
    [
        ("wrong password", ["o", "w", "pass", "wrong password"]),
        ("the provider refused the request", ["refused", "the", "provider", "e"]),
        ("x" * (CAP - 3) + "refused", ["refused", "x", "efu"]),
    ],
)
def test_different_secrets_that_occur_give_the_same_answer(
    message: str, secrets: list[str]
) -> None:
    assert {_message(secret, message) for secret in secrets} == {WITHHELD_MESSAGE}


@given(secret=st.text(min_size=1, max_size=12), message=st.text(max_size=60), data=st.data())
@example(secret="o", message="wrong password", data=None)
@example(secret="refused", message="the provider refused the request", data=None)
def test_for_any_secret_and_message_the_output_reveals_nothing_but_the_fixed_text(
    secret: str, message: str, data: st.DataObject | None
) -> None:
    if data is not None and data.draw(st.booleans()):
        # Put the secret (or a slice of it, or a case variant) inside the message.
        piece = data.draw(
            st.sampled_from([secret, secret[: len(secret) // 2 + 1], secret.upper(), secret])
        )
        cut = data.draw(st.integers(0, len(message)))
        message = message[:cut] + piece + message[cut:]
    shown = _message(secret, message)
    assert shown in {message[:CAP], WITHHELD_MESSAGE}
    if any(form in message for form in _forms(secret)):
        assert shown == WITHHELD_MESSAGE
    if shown != WITHHELD_MESSAGE:
        for form in _forms(secret):
            assert form not in shown
    # Independent of which secret: any other secret that occurs gives the same output.
    if shown == WITHHELD_MESSAGE and message and any(f in message for f in _forms(secret)):
        assert _message(message, message) == WITHHELD_MESSAGE


# --------------------------------------------------------------------------- #
# internal_error log lines

_ID = re.compile(r"correlation_id=[0-9A-Z]{26}")


def _logged(tool: str, secret: str, message: str) -> str:
    with captured_logs() as records:
        observation = TABLE.dispatch(tool, {"message": message, "password": secret})
    assert observation.code == "internal_error"
    [line] = [r.getMessage() for r in records if r.levelno >= logging.ERROR]
    return _ID.sub("correlation_id=-", line)


@pytest.mark.parametrize("tool", ["crash", "crash_chained"])
@pytest.mark.parametrize(
    ("message", "secrets"),
    [
        ("the provider refused the request", ["refused", "the", "provider", "request"]),
        ("wrong password", ["o", "wrong", "pass"]),
    ],
)
def test_an_internal_error_log_line_is_the_same_for_every_secret_that_occurs(
    tool: str, message: str, secrets: list[str]
) -> None:
    logged = {_logged(tool, secret, message) for secret in secrets}
    assert len(logged) == 1
    [line] = logged
    assert message not in line
    assert PLACEHOLDER not in line
    assert "message withheld" in line
    assert tool in line  # the frames stay: the operator still sees where it failed


def test_an_internal_error_without_a_secret_keeps_its_full_traceback() -> None:
    line = _logged("crash", "zq-not-in-it", "the provider refused the request")
    assert "RuntimeError: the provider refused the request" in line


@given(secret=st.text(min_size=1, max_size=8), message=st.text(max_size=40))
def test_for_any_secret_the_log_line_shows_the_exception_text_only_without_it(
    secret: str, message: str
) -> None:
    line = _logged("crash", secret, message)
    if "message withheld" not in line:
        # Shown: then the exception text held no form of the secret (the log escapes what it
        # shows, so the check is on the text itself, not on its escaped rendering).
        assert not any(form in message for form in _forms(secret))
        assert "RuntimeError" in line


# --------------------------------------------------------------------------- #
# Recorded results


def test_a_recorded_result_holding_a_secret_is_withheld_whole(tmp_path: Path) -> None:
    message = "the provider refused the request"
    texts = []
    for index, secret in enumerate(["refused", "o", "request", "the provider"]):
        trace, audit = tmp_path / f"trace{index}.jsonl", tmp_path / f"audit{index}.jsonl"
        with TraceRecorder(trace) as recorder, JsonLinesAuditSink(audit) as sink:
            table = Registry({"echo": Tool(echo, description="Echo.")}, sinks=[recorder, sink])
            observation = table.dispatch("echo", {"message": message, "password": secret})
        assert observation.result == {"status": "done", "note": message}  # the caller sees it
        [line] = trace.read_text(encoding="utf-8").splitlines()
        assert json.loads(line)["observation"] == {"ok": True, "result": PLACEHOLDER}
        texts.append(line)
    assert len(set(texts)) == 1


def test_a_recorded_result_without_a_secret_is_kept(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    with TraceRecorder(trace) as recorder:
        table = Registry({"echo": Tool(echo, description="Echo.")}, sinks=[recorder])
        table.dispatch("echo", {"message": "all fine", "password": "zq-9"})
    [line] = trace.read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["observation"]["result"] == {"status": "done", "note": "all fine"}
