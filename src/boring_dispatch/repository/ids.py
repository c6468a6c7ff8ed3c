"""Canonical identities of the blueprint repository (BLUEPRINTS-V6 section 2.1).

Every ID that reaches the routing path is parsed here, with a full-match
grammar and no normalisation: ``a.b`` and ``a.bc``, ``GET`` and ``get``,
a trailing space or a look-alike character are different IDs or invalid
ones, never "close enough".
"""

from __future__ import annotations

import re
from functools import lru_cache

from boring_dispatch._quote import shown
from boring_dispatch.errors import (
    InvalidCallerReference,
    InvalidInterfaceId,
    InvalidModuleId,
)

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import Final

__all__ = [
    "INTERFACE_MARK",
    "ancestry",
    "is_local_segment",
    "is_ordinary_segment",
    "logical_package",
    "parse_interface_id",
    "parse_module_id",
    "parse_pin",
    "resolve_caller_reference",
    "split_source_interface",
]

#: The separator between a module (or source) ID and an interface name.
INTERFACE_MARK: Final = ".interface."
_SOURCE_MARK: Final = ".source."
_PRIVATE_CHILD: Final = "_rtx"
_RESERVED: Final = frozenset({"interface", "source"})
# At most 9 digits: int() of a huge digit string is slow or raises (the 4300-digit limit).
# Compiled (and cached by ``re``) on first use, not at import: a CLI start rarely needs it.
_PIN: Final = r"[0-9]{1,9}"
_MAX_ID_LENGTH: Final = 512
#: How many distinct valid module IDs :func:`parse_module_id` remembers (a pure
#: function of the text: the same segments whatever the repository holds).
_ID_MEMO: Final = 1024


def is_ordinary_segment(text: str) -> bool:
    """``[a-z0-9]+(-[a-z0-9]+)*``, ASCII only, full match.

    Checked with string methods, not a regular expression: compiling one costs a
    fresh CLI start more than all its calls (``docs/performance.md``).
    """
    return (
        text.isascii()
        and text.replace("-", "").isalnum()  # only [A-Za-z0-9-], at least one of [A-Za-z0-9]
        and text == text.lower()
        and text[0] != "-"
        and text[-1] != "-"
        and "--" not in text
    )


def is_local_segment(text: str) -> bool:
    """An ordinary segment or ``_rtx``; never ``interface``, ``source`` or ``*-rtx``."""
    if text == _PRIVATE_CHILD:
        return True
    return is_ordinary_segment(text) and text not in _RESERVED and not text.endswith("-rtx")


def parse_module_id(text: object) -> tuple[str, ...]:
    """Split a canonical module ID into its segments.

    Raises:
        InvalidModuleId: not a string, empty or over-long, an empty segment,
            a top-level ``_rtx``, a reserved word, or any character outside
            the grammar.
    """
    if not isinstance(text, str) or not text or len(text) > _MAX_ID_LENGTH:
        raise InvalidModuleId(f"invalid module id: {shown(text)}")
    if type(text) is not str:  # a subclass may redefine equality: never looked up in the memo
        return _module_segments.__wrapped__(text)
    return _module_segments(text)


@lru_cache(maxsize=_ID_MEMO)
def _module_segments(text: str) -> tuple[str, ...]:
    """:func:`parse_module_id` of a string of the right length (refusals are raised, not kept)."""
    segments = tuple(text.split("."))
    first_ok = is_ordinary_segment(segments[0]) and is_local_segment(segments[0])
    if not first_ok or not all(is_local_segment(s) for s in segments[1:]):
        raise InvalidModuleId(f"invalid module id: {shown(text)}", target_module_id=text)
    return segments


def parse_interface_id(text: object) -> tuple[str, str]:
    """Split ``<module-id>.interface.<name>`` into the module ID and the name.

    Raises:
        InvalidInterfaceId: the mark is missing or repeated, the name is not an
            ordinary segment, or the module part is not a valid module ID.
    """
    if not isinstance(text, str) or len(text) > _MAX_ID_LENGTH:
        raise InvalidInterfaceId(f"invalid interface id: {shown(text)}")
    if text.count(INTERFACE_MARK) != 1:
        raise InvalidInterfaceId(f"invalid interface id: {shown(text)}")
    module_id, name = text.split(INTERFACE_MARK)
    if not is_ordinary_segment(name):
        raise InvalidInterfaceId(f"invalid interface id: {shown(text)}")
    try:
        parse_module_id(module_id)
    except InvalidModuleId:
        raise InvalidInterfaceId(f"invalid interface id: {shown(text)}") from None
    return module_id, name


def split_source_interface(text: object) -> tuple[str, str] | None:
    """Split ``<module>.source.<name>.interface.<iface>`` at the last interface mark.

    Returns ``(source_id, interface_name)``, or ``None`` when the text does not
    have that shape (the caller reports ``source_interface_invalid``).
    """
    if not isinstance(text, str) or _SOURCE_MARK not in text or INTERFACE_MARK not in text:
        return None
    source_id, _, name = text.rpartition(INTERFACE_MARK)
    module_id, mark, source_name = source_id.rpartition(_SOURCE_MARK)
    if not mark or not is_ordinary_segment(source_name) or not is_ordinary_segment(name):
        return None
    try:
        parse_module_id(module_id)
    except InvalidModuleId:
        return None
    return source_id, name


def ancestry(module_id: str) -> tuple[str, ...]:
    """Every dotted prefix of a (valid) module ID, outermost first, the ID itself last."""
    segments = module_id.split(".")
    return tuple(".".join(segments[: i + 1]) for i in range(len(segments)))


def resolve_caller_reference(owner: str, reference: str) -> str:
    """Resolve an ``allowed_callers`` entry against the policy owner.

    Absolute references are returned as given (after validation). A relative
    reference starts with dots: the first means the owner, each further dot
    climbs one level (``.leaf``, ``..beta``, ``._rtx``). Resolution is purely
    lexical; the caller loads the result, which proves it is registered.

    Raises:
        InvalidCallerReference: only dots, or a climb above the top level.
        InvalidModuleId: the reference or its resolved form is not a module ID.
    """
    if not reference.startswith("."):
        parse_module_id(reference)
        return reference
    suffix = reference.lstrip(".")
    climb = len(reference) - len(suffix) - 1
    owner_segments = owner.split(".")
    if not suffix or climb >= len(owner_segments):
        raise InvalidCallerReference(
            f"invalid caller reference {shown(reference)} for owner {owner}",
            target_module_id=owner,
        )
    base = owner_segments[: len(owner_segments) - climb]
    resolved = ".".join([*base, suffix])
    parse_module_id(resolved)
    return resolved


def logical_package(module_id: str) -> str:
    """``_officina_module_`` + hex of the UTF-8 bytes: injective, always an identifier."""
    return "_officina_module_" + module_id.encode("utf-8").hex()


def parse_pin(text: str) -> tuple[str, int | None]:
    """Split ``<target>@N`` (N: ASCII digits, value >= 1; leading zeros allowed).

    Anything else after the last ``@`` leaves the text whole, so that the
    target parser rejects it (``…@0``, ``…@x``, ``…@``).
    """
    head, sep, tail = text.rpartition("@")
    if sep and re.fullmatch(_PIN, tail, re.ASCII) and int(tail) >= 1:
        return head, int(tail)
    return text, None
