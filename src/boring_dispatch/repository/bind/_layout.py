"""Argument mode, step 1: the layout of a binding's arguments (BLUEPRINTS-V6 6.3).

``process_binding.arguments`` must bind exactly the IDs of
``contract.arguments``; ``fixed`` bindings are registered first. Positions
and option names are unique, names are ``--`` flags that the dispatcher
does not own, every type is checked once, fixed values must type-check and
must not be secret, a ``secret``/``credential`` argument (or nested type)
must be bound as ``stdin``, at most one stdin argument exists, and an
unbounded positional comes last. Every refusal here is the blueprint's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, cast

from boring_dispatch._value import replace
from boring_dispatch._value import value as frozen_value
from boring_dispatch.repository._shapes import BindingRefused, is_flag_name, is_int, one_of
from boring_dispatch.repository.bind._argtypes import (
    SECRET_SENSITIVITIES,
    check_type,
    check_value,
    is_secret,
)

__all__ = [
    "DISPATCHER_OPTIONS",
    "Arity",
    "Caller",
    "Fixed",
    "Layout",
    "check_layout",
    "declared_value",
]

#: Options the dispatcher's own command line owns; no binding may declare them.
DISPATCHER_OPTIONS: Final = frozenset(
    {"--caller-skill", "--dry-run", "--stdin", "--config", "--repository-config", "--error-format"}
)
_SENSITIVITIES: Final = frozenset(
    {"public", "user-private", "derived-private", "credential", "secret"}
)
_FRAMINGS: Final = frozenset({"raw", "text", "exactly-one-json-document", "newline-delimited-json"})
_KINDS: Final = frozenset({"positional", "option", "switch", "stdin"})


@frozen_value
class Arity:
    minimum: int
    maximum: int | None

    @property
    def single(self) -> bool:
        return self.minimum == 1 and self.maximum == 1


@frozen_value
class Caller:
    """One caller argument: its contract entry and its binding."""

    arg_id: str
    kind: str
    type: Mapping[str, object]
    required: bool
    default: tuple[object, ...]  # () when there is no default, (value,) otherwise
    position: int = -1
    name: str = ""
    arity: Arity = Arity(1, 1)


@frozen_value
class Fixed:
    kind: str
    value: object
    position: int = -1
    name: str = ""


@frozen_value
class Layout:
    callers: Mapping[str, Caller]
    fixed: tuple[Fixed, ...]


def check_layout(binding: Mapping[str, object], interface: Mapping[str, object]) -> Layout:
    """The checked layout of an argument-mode binding.

    Raises:
        BindingRefused: any malformed part of the layout.
    """
    contract = interface.get("contract", {})
    if not isinstance(contract, Mapping):
        raise BindingRefused("contract must be a mapping", reason="binding_malformed")
    declared = _mapping(contract.get("arguments", {}), "contract.arguments")
    bound = _mapping(binding.get("arguments", {}), "process_binding.arguments")
    if set(declared) != set(bound):
        missing = sorted(set(declared) - set(bound))[:5]
        unknown = sorted(set(bound) - set(declared))[:5]
        raise BindingRefused(
            f"bindings differ from contract.arguments (missing {missing}, unknown {unknown})",
            reason="binding_malformed",
        )
    fixed_raw = binding.get("fixed", [])
    if not isinstance(fixed_raw, list):
        raise BindingRefused("fixed must be a list", reason="binding_malformed")
    positions: set[int] = set()
    names: set[str] = set()
    fixed = tuple(_fixed(item, index, positions, names) for index, item in enumerate(fixed_raw))
    callers = {
        arg_id: _caller(arg_id, declared[arg_id], bound[arg_id], positions, names)
        for arg_id in sorted(declared)
    }
    if sum(1 for c in callers.values() if c.kind == "stdin") > 1:
        raise BindingRefused(
            "at most one argument may be bound to stdin", reason="binding_malformed"
        )
    for caller in callers.values():
        unbounded = caller.kind == "positional" and caller.arity.maximum is None
        if unbounded and any(position > caller.position for position in positions):
            raise BindingRefused(
                f"unbounded positional {caller.arg_id} must come last", reason="binding_malformed"
            )
    return Layout(callers=callers, fixed=fixed)


def _mapping(value: object, what: str) -> Mapping[str, Mapping[str, object]]:
    if not isinstance(value, Mapping):
        raise BindingRefused(f"{what} must be a mapping", reason="binding_malformed")
    for key, item in value.items():
        if not isinstance(key, str) or not key or not isinstance(item, Mapping):
            raise BindingRefused(
                f"{what} must map argument IDs to mappings", reason="binding_malformed"
            )
    return cast("Mapping[str, Mapping[str, object]]", value)


def _fixed(raw: object, index: int, positions: set[int], names: set[str]) -> Fixed:
    where = f"fixed binding {index}"
    if not isinstance(raw, Mapping):
        raise BindingRefused(f"{where} must be a mapping", reason="binding_malformed")
    kind = raw.get("kind")
    if kind == "switch":
        return Fixed(kind="switch", value=True, name=_name(raw, where, names))
    if not one_of(kind, {"positional", "option"}):
        raise BindingRefused(
            f"{where}: kind must be positional, option or switch", reason="binding_malformed"
        )
    spec = check_type(raw.get("type"), where)
    if is_secret(spec):
        raise BindingRefused(f"{where}: a fixed value cannot be secret", reason="secret_in_argv")
    if "value" not in raw:
        raise BindingRefused(f"{where}: value is required", reason="binding_malformed")
    value = declared_value(spec, raw["value"], where)
    if kind == "positional":
        return Fixed(kind="positional", value=value, position=_position(raw, where, positions))
    return Fixed(kind="option", value=value, name=_name(raw, where, names))


def _caller(
    arg_id: str,
    contract: Mapping[str, object],
    raw: Mapping[str, object],
    positions: set[int],
    names: set[str],
) -> Caller:
    where = f"argument {arg_id}"
    base = _declared(arg_id, contract, raw.get("kind"))
    if base.kind == "stdin":
        if raw.get("encoding") != "utf-8" or not one_of(raw.get("framing"), _FRAMINGS):
            raise BindingRefused(
                f"{where}: stdin needs encoding utf-8 and a known framing",
                reason="binding_malformed",
            )
        return base
    if base.kind == "switch":
        if base.type.get("kind") not in {"flag", "boolean"}:
            raise BindingRefused(
                f"{where}: a switch must have a flag or boolean type", reason="binding_malformed"
            )
        return replace(base, name=_name(raw, where, names), arity=Arity(0, 0))
    arity = _arity(raw.get("arity"), where)
    if base.kind == "positional":
        return replace(base, position=_position(raw, where, positions), arity=arity)
    return replace(base, name=_name(raw, where, names), arity=arity)


def _declared(arg_id: str, contract: Mapping[str, object], kind: object) -> Caller:
    """The contract side of one argument, with the secret-on-stdin rule."""
    where = f"argument {arg_id}"
    required = contract.get("required")
    if not isinstance(required, bool):
        raise BindingRefused(f"{where}: required must be a boolean", reason="binding_malformed")
    if not one_of(contract.get("sensitivity"), _SENSITIVITIES):
        raise BindingRefused(f"{where}: invalid sensitivity", reason="binding_malformed")
    if required and "default" in contract:
        raise BindingRefused(
            f"{where}: a required argument cannot have a default", reason="binding_malformed"
        )
    spec = check_type(contract.get("type"), where)
    if not one_of(kind, _KINDS):
        raise BindingRefused(f"{where}: unknown binding kind", reason="binding_malformed")
    secret = one_of(contract.get("sensitivity"), SECRET_SENSITIVITIES) or is_secret(spec)
    if secret and kind != "stdin":
        raise BindingRefused(
            f"{where}: a secret or credential must be bound as stdin", reason="secret_in_argv"
        )
    default = (contract["default"],) if "default" in contract else ()
    return Caller(arg_id=arg_id, kind=str(kind), type=spec, required=required, default=default)


def _position(raw: Mapping[str, object], where: str, positions: set[int]) -> int:
    position = raw.get("position")
    if not is_int(position) or position < 0:
        raise BindingRefused(
            f"{where}: position must be an integer >= 0", reason="binding_malformed"
        )
    if position in positions:
        raise BindingRefused(
            f"{where}: position {position} is bound twice", reason="binding_malformed"
        )
    positions.add(position)
    return position


def _name(raw: Mapping[str, object], where: str, names: set[str]) -> str:
    name = raw.get("name")
    if not isinstance(name, str) or not name.startswith("--") or not is_flag_name(name):
        raise BindingRefused(f"{where}: name must be a --flag", reason="binding_malformed")
    if name in DISPATCHER_OPTIONS:
        raise BindingRefused(f"{where}: {name} is a dispatcher option", reason="binding_malformed")
    if name in names:
        raise BindingRefused(f"{where}: {name} is bound twice", reason="binding_malformed")
    names.add(name)
    return name


def _arity(raw: object, where: str) -> Arity:
    if not isinstance(raw, Mapping):
        raise BindingRefused(f"{where}: arity must be a mapping", reason="binding_malformed")
    minimum, maximum = raw.get("minimum"), raw.get("maximum")
    if not is_int(minimum) or minimum < 0 or "maximum" not in raw:
        raise BindingRefused(
            f"{where}: arity needs minimum >= 0 and a maximum", reason="binding_malformed"
        )
    if maximum is not None and (not is_int(maximum) or maximum < max(minimum, 1)):
        raise BindingRefused(
            f"{where}: arity maximum must be null or >= max(minimum, 1)", reason="binding_malformed"
        )
    return Arity(minimum, maximum)


def declared_value(spec: Mapping[str, object], value: object, where: str) -> object:
    """A blueprint-supplied value (fixed or default) typed like a caller's.

    Raises:
        BindingRefused: the value does not type-check; it is the
            blueprint's fault, so the reason is ``binding_malformed`` whatever
            the type check said (the message is the type check's).
    """
    try:
        return check_value(spec, value, where)
    except BindingRefused as refusal:
        raise BindingRefused(str(refusal), reason="binding_malformed") from None
