"""The argument-vector caps: one definition for every stage that checks an argv.

The binding stage (:mod:`boring_dispatch.repository.bind.binding`) enforces them on
the caller's argv and on the compiled command; the projection compiler, the
MCP projection pre-check and the launcher (:mod:`boring_dispatch.process._argv`)
repeat the same numbers as backstops, so no stage admits what an earlier one
would refuse. :func:`argv_problem` is the one check they share; each stage turns
its answer into its own error. Importing this module costs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import Final

__all__ = [
    "MAX_ARGV_BYTES",
    "MAX_ARGV_TOKENS",
    "MAX_LIMIT_INT",
    "MAX_NESTED_DEPTH",
    "MAX_TIMEOUT_S",
    "MAX_TOKEN_BYTES",
    "argv_problem",
    "count_problem",
    "seconds_problem",
    "token_problem",
]

#: Most tokens in one argv (the caller's, the compiled command, a projection's).
MAX_ARGV_TOKENS: Final = 1024
#: Most UTF-8 bytes in one token (Linux refuses a single argument of 128 KiB).
MAX_TOKEN_BYTES: Final = 65_536
#: Most UTF-8 bytes in one whole argv (the tokens' bytes, without terminators).
MAX_ARGV_BYTES: Final = 262_144
#: Longest accepted wall-clock timeout of one call (seven days). Beyond it the number
#: is a mistake, and the kernel's timers and ``poll`` cannot represent every float.
MAX_TIMEOUT_S: Final = 604_800.0
#: Largest byte or count limit: every C type the limits reach (``rlim_t``,
#: ``Py_ssize_t`` reads, ``poll`` steps) holds it with room to spare.
MAX_LIMIT_INT: Final = 1 << 62
#: Deepest accepted ``ExecLimits.max_nested_depth``.
MAX_NESTED_DEPTH: Final = 64


def argv_problem(tokens: Sequence[object], what: str) -> str | None:
    """Why ``tokens`` is not an acceptable argv, or ``None``; the reason never quotes a value.

    Refused: more than :data:`MAX_ARGV_TOKENS` tokens, any token :func:`token_problem`
    refuses, and more than :data:`MAX_ARGV_BYTES` in total.
    """
    if len(tokens) > MAX_ARGV_TOKENS:
        return f"{what} has more than {MAX_ARGV_TOKENS} tokens"
    total = 0
    for position, token in enumerate(tokens):
        problem = token_problem(token, position, what)
        if problem is not None:
            return problem
        total += len(str(token).encode("utf-8"))
    if total > MAX_ARGV_BYTES:
        return f"{what} is longer than {MAX_ARGV_BYTES} bytes in total"
    return None


def token_problem(token: object, position: int, what: str) -> str | None:
    """Why one argv token cannot reach a child byte for byte, or ``None``.

    Refused: not a string, a NUL, a lone surrogate (not UTF-8), over :data:`MAX_TOKEN_BYTES`.
    """
    if not isinstance(token, str):
        return f"{what} must be a list of strings"
    if "\x00" in token:
        return f"{what} token {position} contains a NUL byte"
    try:
        size = len(token.encode("utf-8"))
    except UnicodeEncodeError:
        return f"{what} token {position} is not valid text"
    if size > MAX_TOKEN_BYTES:
        return f"{what} token {position} is longer than {MAX_TOKEN_BYTES} bytes"
    return None


def seconds_problem(seconds: object) -> str | None:
    """Why ``seconds`` is not an acceptable timeout, or ``None``; never quotes the value.

    Accepted: an ``int`` or ``float`` (not a ``bool``) that is finite, above 0
    and at most :data:`MAX_TIMEOUT_S`.
    """
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        return "expected a number of seconds"
    if not (0 < seconds <= MAX_TIMEOUT_S):  # NaN fails both comparisons
        return f"expected a positive number of seconds, at most {MAX_TIMEOUT_S:g}"
    return None


def count_problem(number: object, *, low: int = 0, high: int = MAX_LIMIT_INT) -> str | None:
    """Why ``number`` is not an ``int`` (not a ``bool``) in ``low..high``, or ``None``."""
    if isinstance(number, bool) or not isinstance(number, int):
        return "expected a whole number"
    if not low <= number <= high:
        return f"expected a whole number from {low} to {high}"
    return None
