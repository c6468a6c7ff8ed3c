"""The Python table's refusals: one class per observation code.

The tree and the codes are drawn in :mod:`boring_dispatch.errors`.
"""

from __future__ import annotations

from boring_dispatch.errors._base import DispatchError

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import Final

__all__ = [
    "Denied",
    "InvalidArguments",
    "InvalidRequest",
    "NoFixture",
    "ObservationTooLarge",
    "RegistryInvalid",
    "TableError",
    "ToolError",
    "UnknownTool",
]


class TableError(DispatchError):
    """A call to a Python table was refused or failed in an expected way."""


class InvalidRequest(TableError):
    """Not JSON, not an object, no string name, args not an object, too large or too deep."""

    code = "invalid_request"


class UnknownTool(TableError):
    """The name is not in the table (or the tool is disabled: the two look the same)."""

    code = "unknown_tool"


class InvalidArguments(TableError):
    """The arguments fail the tool's schema. Details name field paths, never values."""

    code = "invalid_arguments"

    def __init__(self, message: str, details: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__(message)
        #: ``(path, reason)`` pairs; never the submitted values.
        self.details: Final = details


class Denied(TableError):
    """A policy bit refused the call before the handler ran."""

    code = "denied"


class ToolError(TableError):
    """Raised by a handler on purpose: an expected failure it chose to explain.

    The message reaches the model, so handlers must not put secrets in it; a
    message that holds the value of a sensitive argument is replaced whole by
    a fixed text (never scrubbed in place, which would show where it was).
    """

    code = "tool_error"


class ObservationTooLarge(TableError):
    """The handler's result exceeds the table's observation cap."""

    code = "observation_too_large"


class NoFixture(TableError):
    """A fixture world has no recorded outcome (and no stand-in) for these arguments.

    Raised only by the answers of a fixture world; the same exception raised by
    a real handler is an ``internal_error`` like any other.
    """

    code = "no_fixture"


class RegistryInvalid(TableError):
    """A table could not be built or loaded: bad name, description or schema, bad spec.

    Raised at construction (never by a dispatch), so a bad table fails at import.
    """

    code = "registry_invalid"
