"""What strict blueprint YAML accepts, shared by both parsers (SECURITY.md section B).

:mod:`.load` (libyaml's node tree) and :mod:`._fast` (a line parser for
the plain block subset) must agree exactly, so the rules they share live here:
the nesting cap and the typing of plain (unquoted) scalars.

A plain scalar gets a type only where YAML 1.1 (what PyYAML, the existing
dispatcher and the corpus's dumper use) and YAML 1.2 (most other parsers)
read it alike; :func:`plain_value` refuses the rest with :class:`ScalarRefused`:
``yes``/``no``/``on``/``off``, ``0777``, ``1_000``, ``1:30``, ``1e3``, ``0o7``,
dates, ``<<``, ``=``, non-finite floats (``.inf``, ``.nan``) and integers too
long to convert (Python's 4300-digit limit). Quoting the value fixes them.
"""

from __future__ import annotations

import re
from functools import lru_cache

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import Final

__all__ = ["ALL_WORDS", "MAX_DEPTH", "NUMERIC_STARTS", "ScalarRefused", "plain_value"]

#: Deepest accepted nesting of collections (the top-level mapping is depth 1).
#: The corpus's deepest blueprint has 10 levels.
MAX_DEPTH: Final = 64

_STR_11: Final = "tag:yaml.org,2002:str"
_MISSING: Final = object()
# Words both versions read as null or a boolean.
_WORDS: Final[dict[str, object]] = {
    "~": None,
    "null": None,
    "Null": None,
    "NULL": None,
    "true": True,
    "True": True,
    "TRUE": True,
    "false": False,
    "False": False,
    "FALSE": False,
}
# Words only YAML 1.1 reads as booleans. No other word starting with a letter
# is anything but a string in either version.
_WORDS_11: Final = frozenset(
    f(word) for word in ("yes", "no", "on", "off") for f in (str.lower, str.title, str.upper)
)
#: Every plain scalar that is a word with a meaning beside "string".
ALL_WORDS: Final = _WORDS_11 | frozenset(_WORDS)
#: Only these first characters can start a plain scalar that is not a string.
#: A plain scalar neither starting with one nor in :data:`ALL_WORDS` is itself.
NUMERIC_STARTS: Final = frozenset("0123456789+-.<=!&*")
#: What may follow a leading sign in a number of either version.
_AFTER_SIGN: Final = frozenset("0123456789.")
# YAML 1.2 core schema (section 10.3.2), beside the words above. Pattern texts, compiled
# on first use (:func:`_pattern`): most blueprints have no scalar that reaches them.
_INT_12: Final = r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+"
_FLOAT_12: Final = r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
_NON_FINITE_12: Final = r"[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"


@lru_cache(maxsize=4)
def _pattern(text: str) -> re.Pattern[str]:
    """One of the three YAML 1.2 patterns above, compiled on its first use.

    Not ``re.fullmatch(text, ...)``: ``re``'s own cache builds and hashes a key
    tuple on every call, which cost warm resolution of R1 and R3 0.7% more.
    """
    return re.compile(text)


class ScalarRefused(Exception):
    """A plain scalar the two YAML versions read differently (the reason is the message)."""


def plain_value(value: str) -> object:
    """Type one plain scalar as YAML 1.1 and 1.2 both read it.

    Args:
        value: The scalar's text as the parser folded it.

    Returns:
        ``None``, a ``bool``, an ``int``, a finite ``float`` or ``value`` itself.

    Raises:
        ScalarRefused: the versions disagree (see the module docstring), or
            the number is non-finite or too long.
    """
    if not value:
        return None
    word = _WORDS.get(value, _MISSING)
    if word is not _MISSING:
        return word
    if value in _WORDS_11:
        raise ScalarRefused("yes/no/on/off are booleans only in YAML 1.1; quote it")
    if value[0] not in NUMERIC_STARTS:
        return value
    if value[0] in "+-" and value[1:2] not in _AFTER_SIGN:
        # Every YAML 1.1 or 1.2 number needs a digit or "." after its sign, so
        # "--date" or "-x" is a string in both versions (no PyYAML needed).
        return value
    if _is_decimal(value):
        return _integer(value)
    if _pattern(_NON_FINITE_12).fullmatch(value):
        raise ScalarRefused("non-finite numbers are not allowed")
    return _numeric(value)


def _numeric(value: str) -> object:
    """A number-like plain scalar: accepted only where YAML 1.1 and 1.2 agree.

    PyYAML's own YAML 1.1 implicit resolvers and float constructor decide the
    1.1 side, so it is exactly what ``yaml.CSafeLoader`` does. They are imported
    here, for the rare scalar that needs them, to keep PyYAML off the common path.
    """
    from yaml.constructor import SafeConstructor
    from yaml.nodes import ScalarNode
    from yaml.resolver import Resolver

    tag_11 = _STR_11
    for tag, pattern in Resolver.yaml_implicit_resolvers.get(value[0], ()):
        if pattern.match(value):
            tag_11 = tag
            break
    is_int_12 = _pattern(_INT_12).fullmatch(value) is not None
    is_float_12 = not is_int_12 and _pattern(_FLOAT_12).fullmatch(value) is not None
    if tag_11 == _STR_11 and not is_int_12 and not is_float_12:
        return value
    if tag_11.endswith(":float") and is_float_12:
        number = float(value)
        if SafeConstructor().construct_yaml_float(ScalarNode(tag_11, value)) == number:
            return number
    if tag_11.endswith(":int") and is_int_12 and value.startswith("0x"):
        return int(value, 16)  # the one non-decimal form both versions read alike
    raise ScalarRefused("ambiguous plain scalar (YAML 1.1 and 1.2 disagree); quote it")


def _is_decimal(value: str) -> bool:
    """``[-+]?(?:0|[1-9][0-9]*)``, full match, with string methods (no regex to compile)."""
    digits = value[1:] if value[:1] in ("-", "+") else value
    return digits.isascii() and digits.isdigit() and (digits == "0" or digits[0] != "0")


def _integer(value: str) -> int:
    try:
        return int(value)
    except ValueError:  # more digits than Python converts
        raise ScalarRefused("integer too long") from None
