"""Small shape checks shared by the binding compilers and the level derivation.

Blueprint values arrive as plain parsed YAML, so every helper here checks the
exact Python type it expects: ``True`` is never an integer, ``1.0`` is never
an integer, and a string is never a list of strings.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import Final, TypeGuard

    from boring_dispatch.repository._reasons import REFUSAL_REASONS, RefusalReason

__all__ = [
    "REFUSAL_REASONS",
    "BindingRefused",
    "RefusalReason",
    "is_flag_name",
    "is_int",
    "one_of",
    "optional_bool",
    "shown_flag",
    "string_list",
]


def __getattr__(name: str) -> object:
    # The refusal reasons are for type checkers and tests: their module (and with it
    # ``typing``) is imported only when one of them is asked for by name.
    if name in ("REFUSAL_REASONS", "RefusalReason"):
        from boring_dispatch.repository import _reasons

        return getattr(_reasons, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_MAX_SHOWN: Final = 64


def is_flag_name(text: str) -> bool:
    """A flag name a blueprint may declare (BLUEPRINTS-V6 4.3): ``-{1,2}[A-Za-z0-9][A-Za-z0-9-]*``.

    ASCII only, full match; checked with string methods, not a regular
    expression, whose compile costs a fresh CLI start more than all its calls.
    """
    body = text.lstrip("-")
    return 0 < len(text) - len(body) <= 2 and body.isascii() and body.replace("-", "").isalnum()


class BindingRefused(Exception):
    """Why a binding or an argv was refused; ``compile_binding`` adds the interface ID.

    Messages name blueprint-declared things (flag names, argument IDs,
    positions), never a value the caller supplied. ``reason`` names the check
    that refused (no default: every raise site chooses one); it reaches
    :attr:`ResolutionFailed.reason <boring_dispatch.errors.ResolutionFailed.reason>`
    and nothing a client sees.
    """

    def __init__(self, message: str, *, reason: RefusalReason) -> None:
        super().__init__(message)
        #: The check that refused.
        self.reason: Final = reason


def is_int(value: object) -> TypeGuard[int]:
    """An ``int`` that is not a ``bool``."""
    return isinstance(value, int) and not isinstance(value, bool)


def one_of(value: object, options: AbstractSet[str]) -> bool:
    """A string among ``options`` (never raises on unhashable YAML values)."""
    return isinstance(value, str) and value in options


def optional_bool(data: Mapping[str, object], key: str, where: str) -> bool:
    """``data[key]`` as a real boolean, ``False`` when absent.

    Raises:
        BindingRefused: present but not exactly ``True`` or ``False``.
    """
    value = data.get(key, False)
    if not isinstance(value, bool):
        raise BindingRefused(f"{where}: {key} must be a boolean", reason="binding_malformed")
    return value


def string_list(value: object, what: str, *, flags: bool = False) -> tuple[str, ...]:
    """A list of non-empty strings (flag names when ``flags``).

    Raises:
        BindingRefused: not a list, an element that is not a non-empty
            string, or (``flags``) not a valid flag name.
    """
    message = f"{what} must be a list of non-empty strings"
    if not isinstance(value, list):
        raise BindingRefused(message, reason="binding_malformed")
    for item in value:
        if not isinstance(item, str) or not item:
            raise BindingRefused(message, reason="binding_malformed")
        if flags and not is_flag_name(item):
            raise BindingRefused(f"{what} holds an invalid flag name", reason="binding_malformed")
    return tuple(value)


def shown_flag(name: str, declared: frozenset[str] | set[str]) -> str:
    """A flag name safe to print: only names the blueprint itself declares.

    A caller-made flag token may carry a secret (``-hunter2``), so undeclared
    names are never echoed.
    """
    if name in declared and len(name) <= _MAX_SHOWN:
        return name
    return "(an undeclared flag)"
