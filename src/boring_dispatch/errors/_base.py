"""The root of the exception tree (see :mod:`boring_dispatch.errors`)."""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import ClassVar, Final


__all__ = [
    "DispatchError",
]


class DispatchError(Exception):
    """Root of every refusal. ``code`` is the identity; the message is for people."""

    #: Stable machine-readable identity of the failure.
    code: ClassVar[str] = "error"
    #: Exit status of the CLI when this error ends a command.
    exit_code: ClassVar[int] = 2

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message: Final = message
