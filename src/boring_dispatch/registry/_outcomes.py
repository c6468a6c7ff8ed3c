"""How the pipeline answers a call that did not simply succeed, and the checks on a result.

``tool_error`` messages (withheld whole when they hold a sensitive value),
``internal_error`` with a correlation id (the scrubbed, escaped traceback goes
to the ``boring_dispatch`` logger, never into the observation), the refusal
while an audit sink is failing, and why a result that encodes is still not
JSON every surface can write.
"""

from __future__ import annotations

import json
import logging
import os
import time
import traceback
from typing import TYPE_CHECKING, Final

from boring_dispatch._json import nested_deeper_than
from boring_dispatch.errors import (
    ToolError,
)
from boring_dispatch.observation import Observation
from boring_dispatch.observe._logtext import log_text
from boring_dispatch.observe.redact import PLACEHOLDER
from boring_dispatch.registry import _call_guards as guards

if TYPE_CHECKING:
    from boring_dispatch.registry.records import Table

_LOG: Final = logging.getLogger("boring_dispatch")
_UTF8_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
#: Results nested deeper than this are ``internal_error`` (a surface's serializer may fail).
MAX_RESULT_DEPTH: Final = 64


_CROCKFORD: Final = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


#: The ``tool_error`` message that replaces one holding a sensitive argument value.
WITHHELD_MESSAGE: Final = (
    "the tool failed; its message was withheld because it contained a sensitive argument value"
)


def unfit_result(text: str, result: object) -> ValueError | None:
    """Why a result that encodes as ASCII JSON (``text``) is still not JSON every surface can write.

    Nested deeper than :data:`MAX_RESULT_DEPTH`, or a lone surrogate: ASCII JSON
    shows one as a ``\\udXXX`` escape, but UTF-8 cannot encode it.
    """
    if nested_deeper_than(text, MAX_RESULT_DEPTH):
        return ValueError(f"the result is nested deeper than {MAX_RESULT_DEPTH}")
    if "\\ud" in text:  # a surrogate escape (or the text "\\ud"): check the UTF-8 encoding
        try:
            _UTF8_ENCODER.encode(result).encode("utf-8")
        except UnicodeEncodeError:
            return ValueError("the result holds a lone surrogate (text that is not UTF-8)")
    return None


def tool_error(table: Table, name: str, message: str, secrets: tuple[str, ...]) -> Observation:
    """A ``ToolError``'s message, whole (cut to the cap), or the fixed text if it holds a secret.

    Never scrubbed in place: ``wr[redacted]ng passw[redacted]rd`` would show
    the secret ``o`` as plainly as the message. Only the fact that the
    message held a sensitive value shows; the message is not logged either.
    A lone surrogate is kept as its escape (:class:`ObservationError` does that).
    """
    if secrets and guards.reveals(message, secrets):
        _LOG.info(
            "tool_error message withheld (it held a sensitive value) surface=%s tool=%s",
            table.surface,
            name,
        )
        return Observation.failure(ToolError.code, WITHHELD_MESSAGE)
    return Observation.failure(ToolError.code, message[: table.limits.max_message_chars])


def internal_error(
    surface: str, tool: str, error: BaseException, secrets: tuple[str, ...]
) -> Observation:
    correlation_id = new_correlation_id()
    text = "".join(traceback.format_exception(error))
    if secrets and guards.reveals(text, secrets):
        # Whole or not at all: the exceptions' text goes, the code's frames and types stay.
        text = guards.withheld_traceback(error)
    # The record holds the traceback text only: no exc_info, no arguments. It is one
    # escaped line: exception text can neither forge a record nor send terminal codes.
    _LOG.error(
        "internal_error surface=%s tool=%s correlation_id=%s traceback=%s",
        log_text(surface),
        log_text(tool),
        correlation_id,
        log_text(text.rstrip("\n")),
    )
    return Observation.failure("internal_error", "internal error", correlation_id=correlation_id)


def audit_unavailable(table: Table, name: str) -> Observation:
    """Refuse a call (handler not run) while an audit sink has failed its last record."""
    correlation_id = new_correlation_id()
    _LOG.error(
        "internal_error surface=%s tool=%s correlation_id=%s "
        "call refused before the handler: audit sink %s failed its last record",
        log_text(table.surface),
        log_text(name),
        correlation_id,
        log_text(table.audit.failing_names(table.sinks)),
    )
    return Observation.failure("internal_error", "internal error", correlation_id=correlation_id)


def withhold_result(observation: Observation, secrets: tuple[str, ...]) -> Observation:
    """The observation as sinks see it: a result that holds a secret is withheld whole.

    Looked for in the result's JSON text (numbers included) and in each of its
    strings and keys as they are: a secret quoted by ``repr`` in a result (a tab
    shown as a backslash and ``t``) is spelled otherwise once written as JSON.
    """
    texts = [json.dumps(observation.result, ensure_ascii=False, allow_nan=False)]
    texts.extend(_strings(observation.result))
    if guards.reveals("\n".join(texts), secrets):
        return Observation.success(PLACEHOLDER)
    return observation


def _strings(value: object) -> list[str]:
    """Every string and key in a result (JSON data, nested at most ``MAX_RESULT_DEPTH``)."""
    found: list[str] = []
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            pending.extend(item)
    return found


def new_correlation_id() -> str:
    """A fresh ULID-like id: 26 Crockford base-32 characters, time-ordered (ms), 80 random bits."""
    value = (time.time_ns() // 1_000_000) << 80 | int.from_bytes(os.urandom(10), "big")
    return "".join(_CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))
