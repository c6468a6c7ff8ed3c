"""What the Python table's pipeline checks and copies around the one handler call.

- :func:`non_finite_paths`: where a non-finite ``float``/``Decimal``/``complex``
  sits in the validated arguments (they are refused: a handler never sees one);
- :func:`own_copy`: the handler's private copy of its arguments (what it
  changes reaches neither the caller nor the records);
- :func:`record_copy`: the JSON-safe snapshot of the (redacted) arguments that
  the audit sinks receive, taken before the call;
- :func:`deferred`: a returned coroutine, awaitable or generator (closed here);
- :func:`reveals` and :func:`withheld_traceback`: the rule for text that may
  carry a sensitive value. Text is shown whole or withheld whole, never
  scrubbed in place: replacing the secret inside a message tells the reader
  where it was and, with the rest of the message, what it was.

Nothing here imports pydantic: a model class is recognized through the
``pydantic`` module already loaded by the Registry that built the table.
"""

from __future__ import annotations

import cmath
import copy
import dataclasses
import json
import math
import sys
import traceback
import types
import unicodedata
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Final

__all__ = [
    "NON_FINITE",
    "NON_FINITE_REASON",
    "UNCOPYABLE_REASON",
    "checked_copy",
    "deferred",
    "non_finite_paths",
    "own_copy",
    "plain_arguments",
    "record_copy",
    "reveals",
    "withheld_traceback",
]

#: What a non-finite number becomes in an audit record.
NON_FINITE: Final = "[non-finite]"
#: What an argument that cannot be snapshotted becomes in an audit record.
UNRECORDABLE: Final = "[unrecordable]"
#: The ``invalid_arguments`` reason of a non-finite number (never the value).
NON_FINITE_REASON: Final = "Input should be a finite number"
#: The ``invalid_arguments`` reason of a value the handler's copy cannot be made of.
UNCOPYABLE_REASON: Final = "Input cannot be copied for the handler"

_MAX_PATHS: Final = 20
# Deeper lists and dicts are left to copy.deepcopy (which has its own recursion limit).
_MAX_COPY_DEPTH: Final = 200
_MAX_PATH: Final = 200
# Values a handler cannot change in place: passed as they are.
_IMMUTABLE: Final = frozenset({str, int, float, bool, type(None), bytes, Decimal, complex})
_SCALARS: Final = frozenset({str, int, bool, type(None), bytes})
_VALUE_TYPES: Final = frozenset({str, int, float, bool, type(None)})
_DEFERRED: Final = (types.CoroutineType, types.GeneratorType)
# Results that cannot be awaitable: exact JSON containers and values.
_JSON_TYPES: Final = frozenset({dict, list, str, int, float, bool, type(None)})
# Encodes only JSON data whose numbers are all finite (anything else raises): a C-speed check.
_FINITE_ENCODER: Final = json.JSONEncoder(allow_nan=False, check_circular=True)
_RECORD_ENCODER: Final = json.JSONEncoder(
    ensure_ascii=True, allow_nan=True, separators=(",", ":"), default=lambda o: type(o).__name__
)


# --------------------------------------------------------------------------- #
# Non-finite numbers


def plain_arguments(kwargs: Mapping[str, object]) -> bool:
    """Whether every value is an exact ``str``/``int``/``bool``/``None``/``bytes`` or finite float.

    Such arguments need neither a deeper look nor a copy (the fast path of most calls).
    """
    for value in kwargs.values():
        kind = type(value)
        if kind is float:
            if not math.isfinite(value):  # type: ignore[arg-type]
                return False
        elif kind not in _SCALARS:
            return False
    return True


def _not_finite(value: object) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, Decimal):
        return not value.is_finite()
    if isinstance(value, complex):
        return not cmath.isfinite(value)
    return False


def non_finite_paths(kwargs: Mapping[str, object]) -> tuple[str, ...]:
    """Dotted paths (pydantic style) of the non-finite numbers in ``kwargs``; at most 20.

    Looked into: mappings (keys and values), lists, tuples, sets, pydantic
    models (their fields and extras), dataclass instances and pydantic secret
    wrappers, at any depth; iterative, each container once (cycles end).
    Other objects are the caller's own and are not looked into.
    """
    try:
        _FINITE_ENCODER.encode(kwargs)
    except (TypeError, ValueError, RecursionError):
        pass  # not plain JSON, or not finite: look closely
    else:
        return ()
    found: list[str] = []
    seen: set[int] = set()
    stack: list[tuple[object, str]] = [
        (value, str(key)) for key, value in reversed(list(kwargs.items()))
    ]
    while stack and len(found) < _MAX_PATHS:
        value, path = stack.pop()
        kind = type(value)
        if kind in _SCALARS:
            continue
        if _not_finite(value):
            found.append(path)
            continue
        children = _children(value, path, seen)
        if children:
            stack.extend(reversed(children))
    return tuple(found)


def _children(value: object, path: str, seen: set[int]) -> list[tuple[object, str]]:
    if isinstance(value, float | Decimal | complex | str | bytes | int) or id(value) in seen:
        return []
    seen.add(id(value))
    if isinstance(value, Mapping):
        items: list[tuple[object, str]] = []
        for key, member in value.items():
            if _not_finite(key):
                items.append((key, path))
            items.append((member, f"{path}.{key}"[:_MAX_PATH]))
        return items
    if isinstance(value, list | tuple):
        return [(item, f"{path}.{index}") for index, item in enumerate(value)]
    if isinstance(value, set | frozenset):
        return [(item, path) for item in value]
    return _object_children(value, path)


def _object_children(value: object, path: str) -> list[tuple[object, str]]:
    model = _model_fields(value)
    if model is not None:
        return [(member, f"{path}.{name}") for name, member in model]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        # Field names come from the class definition (trusted code), never from a request.
        return [
            (getattr(value, field.name), f"{path}.{field.name}")
            for field in dataclasses.fields(value)
        ]
    secret = _secret_value(value)
    return [] if secret is None else [(secret, path)]


def _pydantic() -> types.ModuleType | None:
    # Loaded by whatever built a schema; a table without pydantic has no models to look into.
    return sys.modules.get("pydantic")


def _model_fields(value: object) -> list[tuple[str, object]] | None:
    pydantic = _pydantic()
    if pydantic is None or not isinstance(value, pydantic.BaseModel):
        return None
    members = list(vars(value).items())
    extra = value.__pydantic_extra__
    if isinstance(extra, dict):
        members.extend(extra.items())
    return members


def _secret_value(value: object) -> object | None:
    pydantic = _pydantic()
    if pydantic is None:
        return None
    if isinstance(value, pydantic.SecretStr | pydantic.SecretBytes | pydantic.Secret):
        secret: object = value.get_secret_value()
        return secret
    return None


# --------------------------------------------------------------------------- #
# Copies


def own_copy(kwargs: Mapping[str, object]) -> tuple[dict[str, object], tuple[str, ...]]:
    """The handler's own deep copy of ``kwargs``, and the names that could not be copied.

    Immutable scalars are passed as they are; lists and dicts are copied here
    (flat ones in one step), everything else with :func:`copy.deepcopy`. One
    memo serves the whole call, so objects shared between arguments stay
    shared in the copy, and cycles stay cycles.
    """
    copied: dict[str, object] = {}
    memo: dict[int, object] = {}
    failed: list[str] = []
    for key, value in kwargs.items():
        try:
            copied[key] = _copy(value, memo, 0)
        except Exception:  # noqa: BLE001 - any object that refuses to be copied is refused
            failed.append(key)
    return copied, tuple(failed)


def _copy(value: object, memo: dict[int, object], depth: int) -> object:
    kind = type(value)
    if kind in _IMMUTABLE:
        return value
    known = memo.get(id(value), memo)
    if known is not memo:
        return known
    if depth > _MAX_COPY_DEPTH or (kind is not list and kind is not dict):
        return copy.deepcopy(value, memo)
    if kind is list:
        items: list[object] = []
        memo[id(value)] = items
        append = items.append
        for item in value:  # type: ignore[attr-defined]
            append(item if type(item) in _IMMUTABLE else _copy(item, memo, depth + 1))
        return items
    members: dict[object, object] = {}
    memo[id(value)] = members
    for key, member in value.items():  # type: ignore[attr-defined]
        members[key] = member if type(member) in _IMMUTABLE else _copy(member, memo, depth + 1)
    return members


def record_copy(args: Mapping[str, object]) -> dict[str, object]:
    """A JSON-safe snapshot of ``args`` for the audit sinks (shares nothing with ``args``).

    Non-finite numbers become ``"[non-finite]"``, objects that are not JSON
    their type name (as the audit encoder always wrote them); a member that
    cannot be written at all (a cycle, a key that is not a scalar, nesting
    beyond the interpreter's recursion limit) becomes ``"[unrecordable]"``.
    """
    try:
        return _snapshot(args)  # type: ignore[return-value]
    except (TypeError, ValueError, RecursionError):
        pass
    members: dict[str, object] = {}
    for key, value in args.items():
        try:
            members[str(key)] = _snapshot(value)
        except (TypeError, ValueError, RecursionError):
            members[str(key)] = UNRECORDABLE
    return members


def _snapshot(value: object) -> object:
    return json.loads(_RECORD_ENCODER.encode(value), parse_constant=lambda _: NON_FINITE)


def checked_copy(result: object, text: str) -> object:
    """The result as the observation keeps it: ``text`` (its checked JSON) decoded afresh.

    A flat ``dict`` with ``str`` keys or a flat ``list``, holding only exact
    JSON scalars, is copied shallowly instead (the same value, faster).
    """
    kind = type(result)
    if kind in _VALUE_TYPES:
        return result
    if kind is dict:
        for key, member in result.items():  # type: ignore[attr-defined]
            if type(key) is not str or type(member) not in _VALUE_TYPES:
                return json.loads(text)
        return dict(result)  # type: ignore[call-overload]
    if kind is list:
        for member in result:  # type: ignore[attr-defined]
            if type(member) not in _VALUE_TYPES:
                return json.loads(text)
        return list(result)  # type: ignore[call-overload]
    return json.loads(text)


# --------------------------------------------------------------------------- #
# Results that are not values


def deferred(result: object) -> bool:
    """Whether ``result`` is a coroutine, another awaitable or a (sync or async) generator.

    A coroutine or generator is closed here, so that it never runs and no
    "never awaited" warning is emitted later.
    """
    if type(result) in _JSON_TYPES:
        return False
    if isinstance(result, _DEFERRED):
        result.close()
        return True
    if isinstance(result, types.AsyncGeneratorType):
        return True
    return hasattr(type(result), "__await__")


# --------------------------------------------------------------------------- #
# Text that may carry a sensitive value


def _forms(secret: str) -> tuple[str, ...]:
    # As is; as ``repr``, ``ascii`` and JSON (ASCII or UTF-8) show it; and as its UTF-8
    # bytes' ``repr`` shows them (a ``bytes`` argument is the UTF-8 of the text sent).
    data = secret.encode("utf-8", "surrogatepass")
    return (
        secret,
        repr(secret)[1:-1],
        ascii(secret)[1:-1],
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
        repr(data)[2:-1],
    )


def _folded(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def reveals(text: str, secrets: Iterable[str]) -> bool:
    """Whether ``text`` holds any of ``secrets``, as is or in ``repr``/JSON form.

    Compared literally, case-folded and NFKC-case-folded (a superset of the
    literal test: a match in any of them counts). Empty secrets are ignored.
    """
    forms = [form for secret in secrets if secret for form in _forms(secret)]
    if not forms:
        return False
    if any(form in text for form in forms):
        return True
    casefolded, folded = text.casefold(), _folded(text)
    return any(form.casefold() in casefolded or _folded(form) in folded for form in forms)


def withheld_traceback(error: BaseException) -> str:
    """The traceback of ``error`` with every exception's text left out.

    What remains comes from code only: the exception types and, for each,
    the frames (file, line, function, source line), for the whole chain of
    causes and contexts.
    """
    parts: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = error
    chain: list[tuple[BaseException, str]] = []
    link = ""
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append((current, link))
        if current.__cause__ is not None:
            current, link = current.__cause__, "direct cause"
        elif current.__context__ is not None and not current.__suppress_context__:
            current, link = current.__context__, "context"
        else:
            current = None
    for index, (exc, _) in enumerate(reversed(chain)):
        if index:
            later_link = chain[len(chain) - index][1]
            parts.append(
                "\nThe above exception was the "
                + ("direct cause of" if later_link == "direct cause" else "context of")
                + " the following exception:\n\n"
            )
        if exc.__traceback__ is not None:
            parts.append("Traceback (most recent call last):\n")
            parts.extend(
                traceback.StackSummary.extract(traceback.walk_tb(exc.__traceback__)).format()
            )
        kind = type(exc)
        parts.append(
            f"{kind.__module__}.{kind.__qualname__}: "
            "[message withheld: the traceback contained a sensitive value]\n"
        )
    return "".join(parts)
