"""What a Python table checks when it is built: names, tool values, and every text the model reads.

A name matches ``[A-Za-z0-9_.-]{1,64}``; a description, and every text of a tool's
argument schema, is a bounded ``str`` without control, format, surrogate or
private-use characters (nothing hidden from a reviewer reaches the model).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Final

from boring_dispatch.errors import RegistryInvalid

__all__ = ["check_description", "check_name", "check_schema_text"]


_NAME: Final = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_MAX_DESCRIPTION: Final = 4096
# Control, format (zero-width, bidi, tag characters), surrogate and private-use characters.
_HIDDEN_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Co"})


def check_name(kind: str, name: object) -> None:
    if type(name) is not str or _NAME.fullmatch(name) is None:
        raise RegistryInvalid(f"{kind} name {name!r} must match [A-Za-z0-9_.-]{{1,64}}")


def check_description(tool_name: str, description: object) -> None:
    if type(description) is not str or not description.strip():
        raise RegistryInvalid(f"tool {tool_name!r} needs a description")
    if len(description) > _MAX_DESCRIPTION:
        raise RegistryInvalid(f"tool {tool_name!r}: description over {_MAX_DESCRIPTION} characters")
    _check_text(tool_name, "description", description)


def _check_text(tool_name: str, where: str, text: str) -> None:
    for char in text:
        if char not in "\n\t" and unicodedata.category(char) in _HIDDEN_CATEGORIES:
            raise RegistryInvalid(
                f"tool {tool_name!r}: {where} holds a hidden character U+{ord(char):04X}"
            )


def check_schema_text(tool_name: str, schema: object) -> None:
    """The description rule, applied to every text of the argument schema the model reads.

    Property names, titles, descriptions (docstrings included), enum and
    const values, defaults, examples, patterns: every string key and value.
    """
    pending = [schema]
    while pending:
        value = pending.pop()
        if isinstance(value, str):
            _check_text(tool_name, "the argument schema", value)
        elif isinstance(value, Mapping):
            pending.extend(value.keys())
            pending.extend(value.values())
        elif isinstance(value, list | tuple):
            pending.extend(value)
