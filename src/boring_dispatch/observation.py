"""The small observation every Python-table call returns.

One envelope, two shapes (ARCHITECTURE.md section 2)::

    {"ok": true, "result": ...}
    {"ok": false, "error": {"code", "message", "details"?, "correlation_id"?}}

An observation is built only by the pipeline; a handler never builds one. It
never holds a traceback, and ``ok`` is true only for a handler that returned.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Final, final

from boring_dispatch.errors import InvalidArguments, TableError

__all__ = ["RETRYABLE_CODES", "Observation", "ObservationError"]

_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
#: The codes whose call the model can write again and expect a different outcome:
#: its arguments (``invalid_arguments``) or its call text (``invalid_request``) were wrong.
RETRYABLE_CODES: Final = frozenset({"invalid_arguments", "invalid_request"})
_RETRY_HINT: Final = "Correct the arguments and call the tool again."
_FINAL_HINT: Final = "Do not call the tool again with other arguments for this."


def _utf8_text(text: str) -> str:
    """``text`` with each lone surrogate shown as its escape (``\\udce9``)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


@final
@dataclass(frozen=True, slots=True)
class ObservationError:
    """The ``error`` part of a failed observation."""

    #: Stable identity of the failure (``unknown_tool``, ``internal_error``, ...).
    code: str
    #: A short text for people and models; never argument values or a traceback.
    message: str
    #: ``(path, reason)`` pairs of ``invalid_arguments``; never the submitted values.
    details: tuple[tuple[str, str], ...] = ()
    #: Set for ``internal_error``: the key of the server-side log line with the traceback.
    correlation_id: str | None = None

    def __post_init__(self) -> None:
        # A message or path can quote text a handler or a caller chose; a lone surrogate
        # in it could not be written as UTF-8 by any surface, so it is kept as its escape.
        object.__setattr__(self, "message", _utf8_text(self.message))
        details = tuple((_utf8_text(path), _utf8_text(text)) for path, text in self.details)
        object.__setattr__(self, "details", details)

    @property
    def retryable(self) -> bool:
        """Whether calling again with other arguments can help (``invalid_arguments`` yes;
        ``unknown_tool``, ``denied``, ``tool_error``, ``internal_error`` and
        ``observation_too_large`` no)."""
        return self.code in RETRYABLE_CODES

    def to_dict(self) -> dict[str, object]:
        """The JSON object of the envelope's ``error`` member."""
        payload: dict[str, object] = {"code": self.code, "message": self.message}
        if self.details:
            payload["details"] = [{"path": p, "message": m} for p, m in self.details]
        if self.correlation_id is not None:
            payload["correlation_id"] = self.correlation_id
        return payload


@final
@dataclass(frozen=True, slots=True)
class Observation:
    """What one call produced: a JSON-serializable result, or an error.

    Build one with :meth:`success`, :meth:`failure` or :meth:`from_error`.

    Raises:
        ValueError: at construction, when ``ok`` and ``error`` disagree.
    """

    ok: bool
    #: The handler's return value (JSON-serializable; checked by the pipeline).
    result: object = None
    error: ObservationError | None = None

    def __post_init__(self) -> None:
        if self.ok == (self.error is not None):
            raise ValueError("an observation is either ok with a result or failed with an error")

    @classmethod
    def success(cls, result: object) -> Observation:
        """An ok observation holding ``result``."""
        return cls(ok=True, result=result)

    @classmethod
    def failure(
        cls,
        code: str,
        message: str,
        *,
        details: tuple[tuple[str, str], ...] = (),
        correlation_id: str | None = None,
    ) -> Observation:
        """A failed observation with the given error code and message."""
        return cls(ok=False, error=ObservationError(code, message, details, correlation_id))

    @classmethod
    def from_error(cls, error: TableError) -> Observation:
        """The observation of a table refusal (its ``code``, message and details)."""
        details = error.details if isinstance(error, InvalidArguments) else ()
        return cls(ok=False, error=ObservationError(error.code, error.message, details))

    @property
    def code(self) -> str:
        """``"ok"`` or the error code: the one word an audit line records."""
        return "ok" if self.error is None else self.error.code

    def to_dict(self) -> dict[str, object]:
        """The envelope as a JSON-ready dict (the result is not copied)."""
        if self.error is None:
            return {"ok": True, "result": self.result}
        return {"ok": False, "error": self.error.to_dict()}

    def model_text(self) -> str:
        """The text a model should read: the result's JSON, or the error explained.

        An error reads ``error <code>: <message>``, one line per detail
        (``- <path>: <reason>``), the correlation id if any, then whether
        calling again with other arguments can help. It holds nothing the
        observation does not (never argument values).
        """
        if self.error is None:
            return _ENCODER.encode(self.result)
        error = self.error
        lines = [f"error {error.code}: {error.message}"]
        lines.extend(f"- {path}: {reason}" for path, reason in error.details)
        if error.correlation_id is not None:
            lines.append(f"correlation id: {error.correlation_id}")
        lines.append(_RETRY_HINT if error.retryable else _FINAL_HINT)
        return "\n".join(lines)

    def to_json(self) -> str:
        """The envelope as compact one-line JSON text (UTF-8, not ASCII-escaped).

        Raises:
            ValueError: the result holds NaN/Infinity or a circular reference.
            TypeError: the result is not JSON-serializable (the pipeline never
                returns such an observation).
        """
        return _ENCODER.encode(self.to_dict())
