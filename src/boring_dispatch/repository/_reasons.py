"""The reasons a bind can be refused (re-exported by :mod:`._shapes`).

Apart from :mod:`._shapes` because a ``Literal`` needs ``typing`` at run time,
which the CLI's start does not otherwise import: type checkers and tests read
these names, routing code never does at run time.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

__all__ = ["REFUSAL_REASONS", "RefusalReason"]

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
