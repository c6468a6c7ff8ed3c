"""Small shape checks shared by the binding compilers and the level derivation.

Blueprint values arrive as plain parsed YAML, so every helper here checks the
exact Python type it expects: ``True`` is never an integer, ``1.0`` is never
an integer, and a string is never a list of strings.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from typing import Final, Literal, TypeGuard, get_args

__all__ = [
    "FLAG_NAME",
    "REFUSAL_REASONS",
    "BindingRefused",
    "RefusalReason",
    "is_int",
    "one_of",
    "optional_bool",
    "shown_flag",
    "string_list",
]

#: Flag names a blueprint may declare (BLUEPRINTS-V6 4.3), ASCII only.
FLAG_NAME: Final = re.compile(r"-{1,2}[A-Za-z0-9][A-Za-z0-9-]*", re.ASCII)
_MAX_SHOWN: Final = 64


#: Which check of the bind stage refused (internal: tests assert it; never shown to clients).
RefusalReason = Literal[
    # the blueprint's declaration
    "binding_malformed",  # a malformed binding, pattern, layout, type, default or fixed value
    "not_bindable",  # the interface has no process binding of kind process
    "regex_refused",  # a declared regex is invalid or unsafe (pattern or format regex)
    "target_malformed",  # the Python target: entry, gateway path or owning module
    "secret_in_argv",  # a secret or credential would travel in argv (declared or supplied)
    # the request as data
    "argv_malformed",  # argv not a list of strings, over the caps, NUL, surrogates; bad stdin
    "command_malformed",  # the compiled command (prefix, defaults, rewriting) breaks the caps
    # pattern mode
    "no_pattern",  # no declared pattern accepts the invocation
    "ambiguous_pattern",  # several patterns accept it
    # tokens (both modes)
    "duplicate_option",  # a flag or option given twice
    "switch_with_value",  # ``--switch=value``
    "missing_option_value",  # a value-taking flag or option without its value
    # argument mode
    "unknown_option",  # an option the binding does not declare (dispatcher options included)
    "fixed_override",  # the caller names an option the blueprint fixes
    "extra_value",  # a plain value in the named arguments that no option takes
    "too_many_positionals",  # positionals left over after every positional binding is filled
    "missing_argument",  # a required argument without a value or default
    "value_type",  # a value of the wrong type (integer, number, boolean, string, list)
    "value_range",  # a number below the minimum or above the maximum
    "value_enum",  # a value not among the enum's declared values
    "value_format",  # a value failing its named format, format regex or date formats
    "dash_value",  # a value the gateway's parser would read as an option (``--``, dash-led item)
    "stdin_refused",  # stdin requested, none declared
    "stdin_required",  # a required stdin argument, stdin not requested
    # the last resort
    "safety_net",  # an unexpected TypeError/ValueError/... while compiling (a bug)
]

#: Every :data:`RefusalReason`, for tests and checks.
REFUSAL_REASONS: Final[frozenset[str]] = frozenset(get_args(RefusalReason))


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
        if flags and FLAG_NAME.fullmatch(item) is None:
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
