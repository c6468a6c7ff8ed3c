"""Redaction of sensitive argument values, driven by the tool's schema.

The schema (see :mod:`boring_dispatch.registry.schema`) says where the sensitive
values sit, as a :class:`SensitiveNode` tree. The pipeline applies it after
validation and before anything is written: audit lines, traces, replay files
and error messages see ``"[redacted]"`` instead of the value.

What this does not protect against: a handler that copies a secret into its
result, or a message that contains a secret in a transformed form (encoded,
upper-cased, split). :func:`scrub` replaces the literal, ``repr`` and JSON
forms of each sensitive value only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final, final

__all__ = [
    "PLACEHOLDER",
    "SensitiveNode",
    "redact",
    "redact_invalid",
    "scrub",
    "sensitive_paths",
    "sensitive_values",
]

#: What a sensitive value becomes in every record that leaves a call.
PLACEHOLDER: Final = "[redacted]"

# Deeper data is redacted whole: a bound that also stops cyclic Python input.
_MAX_DEPTH: Final = 64


@final
@dataclass(frozen=True, slots=True)
class SensitiveNode:
    """Where sensitive values sit inside one value of a given type.

    Only nodes with something sensitive below them exist; a missing child means
    "nothing sensitive here".
    """

    #: The whole value at this node is sensitive.
    whole: bool = False
    #: Object members by key (field name or alias) that hold something sensitive.
    keys: Mapping[str, SensitiveNode] = field(default_factory=dict)
    #: Every list item or mapping value holds something sensitive as described here.
    items: SensitiveNode | None = None


def redact(value: object, node: SensitiveNode | None) -> object:
    """A copy of ``value`` with every sensitive part replaced by :data:`PLACEHOLDER`.

    Parts the schema does not mark are shared, not copied. Idempotent:
    redacting a redacted value changes nothing. Data nested deeper than 64
    levels under a sensitive branch is replaced whole (fail closed).
    """
    if node is None:
        return value
    return _redact(value, node, 0)


def redact_invalid(
    args: Mapping[str, object],
    node: SensitiveNode | None,
    accepted: frozenset[str] | None,
    unknown: Iterable[tuple[str | int, ...]] = (),
) -> dict[str, object]:
    """Redact arguments that did not validate: the sensitive parts and every unknown member.

    Used for ``invalid_arguments`` and ``unknown_tool`` records, where a
    misspelled key (``api_key`` for ``api_token``) may carry a secret the
    schema cannot name. ``accepted`` holds the top-level names the schema
    accepts; ``None`` means there is no schema, and then every value is
    redacted (the keys stay, as the shape of the call). ``unknown`` lists the
    paths of members the validator refused as extra at any depth.
    """
    redacted: dict[str, object] = {}
    for key, value in args.items():
        name = str(key)
        if accepted is None or name not in accepted or (node is not None and node.whole):
            redacted[name] = PLACEHOLDER
        else:
            redacted[name] = redact(value, node.keys.get(name) if node else None)
    result: object = redacted
    for path in unknown:
        result = _replace_at(result, path)
    return redacted if not isinstance(result, dict) else result


def _replace_at(value: object, path: tuple[str | int, ...]) -> object:
    """A copy of ``value`` with the member at ``path`` replaced (copies only along the path)."""
    if not path:
        return PLACEHOLDER
    head, rest = path[0], path[1:]
    if isinstance(value, Mapping) and head in value:
        copied = dict(value)
        copied[head] = _replace_at(value[head], rest)
        return copied
    if isinstance(value, list | tuple) and isinstance(head, int) and 0 <= head < len(value):
        items = list(value)
        items[head] = _replace_at(value[head], rest)
        return items
    if isinstance(head, str) and rest:
        # Not a member here: a union's choice label (``Card``, ``list[str]``) in the path.
        return _replace_at(value, rest)
    return value


def _redact(value: object, node: SensitiveNode, depth: int) -> object:
    if node.whole or depth > _MAX_DEPTH:
        return PLACEHOLDER
    if isinstance(value, Mapping):
        return {
            key: _redact_member(
                member, node.keys.get(key) if isinstance(key, str) else None, node, depth
            )
            for key, member in value.items()
        }
    if value is None:
        return None
    if isinstance(value, list | tuple) and node.items is not None:
        return [_redact(item, node.items, depth + 1) for item in value]
    # Not the shape the schema gives this place (a list or a scalar where an
    # object with sensitive members belongs): it may hold the secret, so fail closed.
    return PLACEHOLDER


def _redact_member(
    member: object, child: SensitiveNode | None, parent: SensitiveNode, depth: int
) -> object:
    if child is None:
        child = parent.items
    return member if child is None else _redact(member, child, depth + 1)


def sensitive_values(value: object, node: SensitiveNode | None) -> tuple[str, ...]:
    """The text forms of every sensitive value inside ``value`` (for :func:`scrub`).

    Strings are taken as they are, bytes decoded as UTF-8, secret wrappers
    unwrapped (``get_secret_value()``), other scalars through ``str``.
    """
    found: list[str] = []
    if node is not None:
        _collect(value, node, found, 0)
    return tuple(found)


def _collect(value: object, node: SensitiveNode, found: list[str], depth: int) -> None:
    if depth > _MAX_DEPTH:
        return
    if node.whole:
        _collect_all(value, found, depth)
    elif isinstance(value, Mapping):
        for key, member in value.items():
            child = (node.keys.get(key) if isinstance(key, str) else None) or node.items
            if child is not None:
                _collect(member, child, found, depth + 1)
    elif isinstance(value, list | tuple) and node.items is not None:
        for item in value:
            _collect(item, node.items, found, depth + 1)
    else:
        # Not the shape the schema gives this place (JSON text a ``Json[...]`` field
        # decodes, a scalar where an object belongs): as :func:`_redact`, fail closed.
        _collect_all(value, found, depth)


def _collect_all(value: object, found: list[str], depth: int) -> None:
    if depth > _MAX_DEPTH or value is None or isinstance(value, bool):
        return
    if isinstance(value, Mapping):
        for member in value.values():
            _collect_all(member, found, depth + 1)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            _collect_all(item, found, depth + 1)
    else:
        text = _text(value)
        found.append(text)
        if isinstance(value, str) and text[:1] in _JSON_STARTS:
            # JSON text (a ``Json[...]`` field): what it decodes to is as sensitive.
            decoded = _decoded(text)
            if decoded is not _NOT_JSON:
                _collect_all(decoded, found, depth + 1)


_JSON_STARTS: Final = frozenset('{["')
_NOT_JSON: Final = object()


def _decoded(text: str) -> object:
    from boring_dispatch._json import StrictJSONError, strict_loads

    try:
        return strict_loads(text, max_depth=_MAX_DEPTH)
    except StrictJSONError:
        return _NOT_JSON


def _text(value: object) -> str:
    # An exact str made by the base types' own methods: a subclass's ``__str__``,
    # ``__repr__`` or ``decode`` may lie about the value it holds, or raise later.
    kind = type(value)
    if issubclass(kind, str):
        return str.__str__(value)
    if issubclass(kind, bytes):
        return bytes.decode(value, "utf-8", "replace")  # type: ignore[arg-type]
    if issubclass(kind, int) and kind is not bool:
        return int.__repr__(value)
    if issubclass(kind, float):
        return float.__repr__(value)
    unwrap = getattr(value, "get_secret_value", None)  # pydantic's secret wrappers
    if callable(unwrap):
        return _text(unwrap())
    return str.__str__(str(value))


def scrub(text: str, values: Iterable[str]) -> str:
    """``text`` with each value (and its ``repr`` and JSON forms) replaced by the placeholder.

    Longer values are replaced first, so a secret containing another is not
    left half-visible. Empty values are ignored.
    """
    forms: set[str] = set()
    for value in values:
        if value:
            forms.update((value, repr(value)[1:-1], json.dumps(value)[1:-1]))
    forms.discard("")
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, PLACEHOLDER)
    return text


def sensitive_paths(node: SensitiveNode | None) -> tuple[str, ...]:
    """Readable, sorted paths of the sensitive places: ``card.number``, ``keys[*]``."""
    paths: list[str] = []
    if node is not None:
        _paths(node, "", paths)
    return tuple(sorted(paths))


def _paths(node: SensitiveNode, prefix: str, paths: list[str]) -> None:
    if node.whole:
        paths.append(prefix)
        return
    for key, child in node.keys.items():
        _paths(child, f"{prefix}.{key}" if prefix else key, paths)
    if node.items is not None:
        _paths(node.items, f"{prefix}[*]", paths)
