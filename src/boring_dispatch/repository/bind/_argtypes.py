"""Argument types of argument mode: check a typeSpec, then check values against it.

Values come from the caller's argv (always strings) or from the blueprint
(``default`` and fixed values, plain YAML scalars). The checks are strict and
never coerce one type into another:

* ``integer``: an ``int`` that is not a ``bool``, or text of an optional
  leading ``-`` and 1 to 64 ASCII digits. ``1.0``, ``+1``, `` 1``, ``1_000``,
  non-ASCII digits and ``True`` are refused (Python's ``int()`` would accept most of them).
* ``number``: an ``int``/``float`` that is not a ``bool`` and is finite, or
  text in plain decimal notation (``-?digits[.digits][e[+-]digits]``); text
  without a fraction or exponent stays an integer, so ``1`` never becomes ``1.0``.
* ``boolean``: a real ``bool``, or the text ``true``/``false`` in any case.
* ``flag``: a real ``bool`` only (a switch supplies ``True``).
* ``enum``: compared as text with the declared values; the declared value is
  returned. Without ``values`` anything is accepted.
* string-like kinds: text, checked against ``format`` and ``date_formats``.

Messages name the argument, never the value.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from urllib.parse import urlsplit

from boring_dispatch.repository._regex import (
    MAX_SUBJECT_LENGTH,
    PatternRefused,
    compile_pattern,
)
from boring_dispatch.repository._shapes import BindingRefused, is_int, one_of

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    import datetime as dt  # imported where dates are checked: most requests have none
    from typing import Final

__all__ = ["SECRET_SENSITIVITIES", "check_type", "check_value", "is_secret", "text_of"]

#: Sensitivities that must never travel in argv.
SECRET_SENSITIVITIES: Final = frozenset({"secret", "credential"})
_STRING_KINDS: Final = frozenset({"string", "path", "file", "dir", "date", "datetime", "duration"})
_KINDS: Final = _STRING_KINDS | {"integer", "number", "boolean", "flag", "enum", "list"}
_NAMED: Final = frozenset({"literal", "identifier", "json", "yaml", "email", "uri", "uuid"})
_NESTED: Final = ("element_type", "content_type", "entry_type")
_MAX_DEPTH: Final = 8
# The value formats, compiled (and cached by ``re``) when a value of that kind is first
# checked, not at import: most requests check none of them, and compiling costs a start.
_INTEGER: Final = r"-?[0-9]{1,64}"
_NUMBER: Final = r"-?[0-9]{1,64}(\.[0-9]{1,64})?([eE][-+]?[0-9]{1,4})?"
_IDENTIFIER: Final = r"[A-Za-z_][A-Za-z0-9_]*"
_EMAIL: Final = r"[^@\s]+@[^@\s.]+(\.[^@\s.]+)+"
_SCHEME: Final = r"[A-Za-z][A-Za-z0-9+.-]*"
_UUID: Final = r"[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}"
_TIMEZONES: Final = frozenset({"required", "forbidden", "optional"})


def is_secret(spec: object, depth: int = 0) -> bool:
    """Whether a typeSpec, or one nested in it, is ``secret`` or ``credential``.

    Malformed parts are skipped, so this never raises; deeper than eight
    levels counts as secret (fail closed).
    """
    if depth > _MAX_DEPTH:
        return True
    if not isinstance(spec, Mapping):
        return False
    if one_of(spec.get("sensitivity"), SECRET_SENSITIVITIES):
        return True
    return any(is_secret(spec.get(key), depth + 1) for key in _NESTED)


def check_type(spec: object, where: str, depth: int = 0) -> Mapping[str, object]:
    """Validate a typeSpec once, before any value is checked against it.

    Raises:
        BindingRefused: not a mapping, an unsupported kind, a malformed
            bound, enum value list, ``format``, ``date_formats`` or nested type.
    """
    if depth > _MAX_DEPTH or not isinstance(spec, Mapping):
        raise BindingRefused(f"{where}: type must be a mapping", reason="binding_malformed")
    kind = spec.get("kind")
    if not isinstance(kind, str) or kind not in _KINDS:
        raise BindingRefused(f"{where}: unsupported terminal type", reason="binding_malformed")
    if kind in {"integer", "number"}:
        for bound in ("minimum", "maximum"):
            if bound in spec and not _is_number(spec[bound]):
                raise BindingRefused(
                    f"{where}: {bound} must be a number", reason="binding_malformed"
                )
    elif kind == "enum":
        _check_enum_values(spec, where)
    elif kind == "list":
        check_type(spec.get("element_type"), f"{where} element", depth + 1)
    elif kind in _STRING_KINDS:
        _check_format(spec.get("format"), where)
        if kind in {"date", "datetime"}:
            _check_date_formats(spec, kind, where)
    return spec


def check_value(spec: Mapping[str, object], value: object, where: str) -> object:
    """The typed value of ``value`` under a checked typeSpec.

    Raises:
        BindingRefused: the value does not have the declared type.
    """
    kind = spec["kind"]
    if kind == "list":
        element = spec["element_type"]
        if not isinstance(value, list) or not isinstance(element, Mapping):
            raise BindingRefused(f"{where}: value must be a list", reason="value_type")
        return [check_value(element, item, where) for item in value]
    if kind in {"integer", "number"}:
        return _bounded(spec, _parse_number(value, integer=kind == "integer", where=where), where)
    if kind in {"boolean", "flag"}:
        return _boolean(value, text_allowed=kind == "boolean", where=where)
    if kind == "enum":
        return _enum_value(spec, value, where)
    if not isinstance(value, str):
        raise BindingRefused(f"{where}: value must be a string", reason="value_type")
    _format_accepts(spec.get("format"), value, where)
    if kind in {"date", "datetime"}:
        _date_accepts(spec, value, where)
    return value


def _boolean(value: object, *, text_allowed: bool, where: str) -> bool:
    if isinstance(value, bool):
        return value
    if text_allowed and isinstance(value, str) and value.lower() in {"true", "false"}:
        return value.lower() == "true"
    raise BindingRefused(f"{where}: value must be a boolean", reason="value_type")


def text_of(value: object) -> str:
    """One argv token for a typed scalar: booleans are ``true``/``false``.

    Raises:
        BindingRefused: not a string, boolean, integer or finite float.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if is_int(value) or (isinstance(value, float) and math.isfinite(value)):
        return repr(value)
    raise BindingRefused("a value cannot be written as an argument", reason="binding_malformed")


def _is_number(value: object) -> bool:
    return is_int(value) or (isinstance(value, float) and math.isfinite(value))


def _parse_number(value: object, *, integer: bool, where: str) -> float:
    if isinstance(value, str):
        if re.fullmatch(_INTEGER, value, re.ASCII):
            return int(value)
        if (
            not integer
            and re.fullmatch(_NUMBER, value, re.ASCII)
            and math.isfinite(parsed := float(value))
        ):
            return parsed
    elif is_int(value) or (not integer and isinstance(value, float) and math.isfinite(value)):
        return value
    raise BindingRefused(
        f"{where}: value must be an {'integer' if integer else 'number'}", reason="value_type"
    )


def _bounded(spec: Mapping[str, object], number: float, where: str) -> float:
    low, high = spec.get("minimum"), spec.get("maximum")
    if isinstance(low, int | float) and number < low:
        raise BindingRefused(f"{where}: value is below the minimum", reason="value_range")
    if isinstance(high, int | float) and number > high:
        raise BindingRefused(f"{where}: value is above the maximum", reason="value_range")
    return number


def _check_enum_values(spec: Mapping[str, object], where: str) -> None:
    values = spec.get("values")
    if values is None:
        return
    if not isinstance(values, list):
        raise BindingRefused(f"{where}: enum values must be a list", reason="binding_malformed")
    for entry in values:
        if not isinstance(entry, Mapping) or "value" not in entry:
            raise BindingRefused(
                f"{where}: enum values must be {{value, description}}", reason="binding_malformed"
            )
        text_of(entry["value"])


def _enum_value(spec: Mapping[str, object], value: object, where: str) -> object:
    values = spec.get("values")
    if not isinstance(values, list):
        text_of(value)
        return value  # no declared values (values_from_helper): anything is accepted
    text = text_of(value)
    for entry in values:
        if isinstance(entry, Mapping) and text_of(entry.get("value")) == text:
            return entry["value"]
    raise BindingRefused(f"{where}: value is not in enum", reason="value_enum")


def _check_format(fmt: object, where: str) -> None:
    if fmt is None:
        return
    if not isinstance(fmt, Mapping) or len(fmt) != 1:
        raise BindingRefused(
            f"{where}: format must have exactly one key", reason="binding_malformed"
        )
    ((key, body),) = fmt.items()
    if key == "named" and one_of(body, _NAMED):
        return
    if key == "template" and isinstance(body, str) and "{value}" in body:
        return
    if key == "regex" and isinstance(body, Mapping) and isinstance(body.get("pattern"), str):
        try:
            compile_pattern(str(body["pattern"]))
        except PatternRefused as refused:
            raise BindingRefused(
                f"{where}: format regex: {refused}", reason="regex_refused"
            ) from None
        return
    raise BindingRefused(f"{where}: malformed format", reason="binding_malformed")


def _format_accepts(fmt: object, value: str, where: str) -> None:
    if not isinstance(fmt, Mapping):
        return
    ((key, body),) = fmt.items()
    if key == "named" and not _NAMED_CHECKS.get(str(body), _any)(value):
        raise BindingRefused(f"{where}: value is not a valid {body}", reason="value_format")
    if key == "regex" and isinstance(body, Mapping):
        regex = compile_pattern(str(body.get("pattern")))
        full = body.get("matching") == "full"
        too_long = len(value) > MAX_SUBJECT_LENGTH
        if too_long or (regex.fullmatch(value) if full else regex.match(value)) is None:
            raise BindingRefused(
                f"{where}: value does not match the declared format", reason="value_format"
            )


def _any(_: str) -> bool:
    return True  # ``literal``: not checked


def _is_uri(value: str) -> bool:
    scheme, colon, _ = value.partition(":")
    return bool(colon) and re.fullmatch(_SCHEME, scheme, re.ASCII) is not None and _splits(value)


def _splits(value: str) -> bool:
    try:
        urlsplit(value)
    except ValueError:
        return False
    return True


def _is_json(value: str) -> bool:
    def refuse_constant(_: str) -> object:
        raise ValueError

    try:
        json.loads(value, parse_constant=refuse_constant)
    except (ValueError, RecursionError):
        return False
    return True


def _is_yaml(value: str) -> bool:
    """Well-formed YAML, checked on the event stream: nothing is constructed, aliases refused."""
    import yaml  # a core dependency; imported here because only this format needs it

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return not any(isinstance(e, yaml.AliasEvent) for e in yaml.parse(value, Loader=loader))
    except (yaml.YAMLError, RecursionError, ValueError):
        return False


def _check_date_formats(spec: Mapping[str, object], kind: str, where: str) -> None:
    formats = spec.get("date_formats")
    if not isinstance(formats, list) or not formats:
        raise BindingRefused(
            f"{where}: date_formats must be a non-empty list", reason="binding_malformed"
        )
    if not all(isinstance(f, str) and f and _usable_format(f) for f in formats):
        raise BindingRefused(
            f"{where}: date_formats must be valid format strings", reason="binding_malformed"
        )
    if kind == "datetime" and not one_of(spec.get("timezone", "optional"), _TIMEZONES):
        raise BindingRefused(f"{where}: invalid timezone rule", reason="binding_malformed")


def _date_accepts(spec: Mapping[str, object], value: str, where: str) -> None:
    import datetime as dt

    formats = spec.get("date_formats")
    rule = spec.get("timezone", "optional") if spec["kind"] == "datetime" else "optional"
    for fmt in formats if isinstance(formats, list) else []:
        parsed = _parse_date(str(fmt), value, datetime=spec["kind"] == "datetime")
        if parsed is None:
            continue
        aware = isinstance(parsed, dt.datetime) and parsed.tzinfo is not None
        if (rule == "required" and not aware) or (rule == "forbidden" and aware):
            continue
        return
    raise BindingRefused(
        f"{where}: value does not match any declared date format", reason="value_format"
    )


def _usable_format(fmt: str) -> bool:
    """``iso-8601`` or a ``strptime`` format that compiles (``%Y %Y`` does not)."""
    if fmt == "iso-8601":
        return True
    import datetime as dt

    try:
        dt.datetime.strptime("", fmt)  # noqa: DTZ007  only the format is being checked
    except re.error:
        return False
    except ValueError:
        pass  # the empty text does not match: the format itself is fine
    return True


def _parse_date(fmt: str, value: str, *, datetime: bool) -> dt.date | None:
    if len(value) > 64:
        return None
    import datetime as dt

    try:
        if fmt == "iso-8601":
            return dt.datetime.fromisoformat(value) if datetime else dt.date.fromisoformat(value)
        return dt.datetime.strptime(value, fmt)  # noqa: DTZ007  the format decides the zone
    except (ValueError, re.error):
        return None


_NAMED_CHECKS: Final[Mapping[str, Callable[[str], bool]]] = {
    "identifier": lambda value: re.fullmatch(_IDENTIFIER, value, re.ASCII) is not None,
    "json": _is_json,
    "yaml": _is_yaml,
    "email": lambda value: re.fullmatch(_EMAIL, value) is not None,
    "uri": _is_uri,
    "uuid": lambda value: re.fullmatch(_UUID, value, re.ASCII) is not None,
}
