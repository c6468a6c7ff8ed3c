"""Argument mode: typed bindings compiled into a deterministic argv (BLUEPRINTS-V6 6.3).

Steps, each refusing with :class:`BindingRefusedError`:

1. **Layout.** ``process_binding.arguments`` must bind exactly the IDs of
   ``contract.arguments``; ``fixed`` bindings are registered first. Positions
   and option names are unique, names are ``--`` flags that the dispatcher
   does not own, every type is checked once, fixed values must type-check and
   must not be secret, a ``secret``/``credential`` argument (or nested type)
   must be bound as ``stdin``, at most one stdin argument exists, and an
   unbounded positional comes last.
2. **Tokens.** After the first ``--`` everything is positional; before it,
   the tokens up to the first ``--x`` are positional and the rest is the named
   segment, where only declared caller names are accepted.
3. **Positionals** are filled greedily in position order, leaving each later
   binding its minimum; leftovers are refused.
4. **Values** are typed (``_argtypes``), stdin rules applied, defaults filled.
5. **Emission:** ``args_prefix``, positionals by position, caller named
   arguments sorted by argument ID, fixed named arguments sorted by flag name.
   No value can turn into a flag of the gateway's parser (SECURITY D2): when a
   positional begins with ``-`` the named arguments come first, then ``--``,
   then the positionals; a single option value that begins with ``-`` is
   written ``--name=value``; a dash-led item of a multi-value option and the
   value ``--`` are refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, cast

from boring_dispatch._value import replace
from boring_dispatch._value import value as frozen_value
from boring_dispatch.repository._shapes import FLAG_NAME, BindingRefusedError, is_int, one_of
from boring_dispatch.repository.bind._argtypes import (
    SECRET_SENSITIVITIES,
    check_type,
    check_value,
    is_secret,
    text_of,
)

__all__ = ["DISPATCHER_OPTIONS", "compile_arguments"]

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
class _Arity:
    minimum: int
    maximum: int | None

    @property
    def single(self) -> bool:
        return self.minimum == 1 and self.maximum == 1


@frozen_value
class _Caller:
    """One caller argument: its contract entry and its binding."""

    arg_id: str
    kind: str
    type: Mapping[str, object]
    required: bool
    default: tuple[object, ...]  # () when there is no default, (value,) otherwise
    position: int = -1
    name: str = ""
    arity: _Arity = _Arity(1, 1)


@frozen_value
class _Fixed:
    kind: str
    value: object
    position: int = -1
    name: str = ""


@frozen_value
class _Layout:
    callers: Mapping[str, _Caller]
    fixed: tuple[_Fixed, ...]


def compile_arguments(
    binding: Mapping[str, object],
    interface: Mapping[str, object],
    argv: Sequence[str],
    stdin: bool,
) -> tuple[list[str], bool]:
    """The compiled argument tokens (without ``args_prefix``) and the stdin decision.

    Raises:
        BindingRefusedError: a malformed layout, an argv the layout does not
            accept, a value of the wrong type, or a stdin rule broken.
    """
    layout = _layout(binding, interface)
    positionals, named = _split(argv, layout)
    raw = _fill_positionals(positionals, layout) | named
    values = {arg_id: _typed(layout.callers[arg_id], value) for arg_id, value in raw.items()}
    decision = _stdin_decision(layout, stdin)
    _apply_defaults(layout, values)
    return _emit(layout, values), decision


# --------------------------------------------------------------------------- #
# 1. layout


def _layout(binding: Mapping[str, object], interface: Mapping[str, object]) -> _Layout:
    contract = interface.get("contract", {})
    if not isinstance(contract, Mapping):
        raise BindingRefusedError("contract must be a mapping")
    declared = _mapping(contract.get("arguments", {}), "contract.arguments")
    bound = _mapping(binding.get("arguments", {}), "process_binding.arguments")
    if set(declared) != set(bound):
        missing = sorted(set(declared) - set(bound))[:5]
        unknown = sorted(set(bound) - set(declared))[:5]
        raise BindingRefusedError(
            f"bindings differ from contract.arguments (missing {missing}, unknown {unknown})"
        )
    fixed_raw = binding.get("fixed", [])
    if not isinstance(fixed_raw, list):
        raise BindingRefusedError("fixed must be a list")
    positions: set[int] = set()
    names: set[str] = set()
    fixed = tuple(_fixed(item, index, positions, names) for index, item in enumerate(fixed_raw))
    callers = {
        arg_id: _caller(arg_id, declared[arg_id], bound[arg_id], positions, names)
        for arg_id in sorted(declared)
    }
    if sum(1 for c in callers.values() if c.kind == "stdin") > 1:
        raise BindingRefusedError("at most one argument may be bound to stdin")
    for caller in callers.values():
        unbounded = caller.kind == "positional" and caller.arity.maximum is None
        if unbounded and any(position > caller.position for position in positions):
            raise BindingRefusedError(f"unbounded positional {caller.arg_id} must come last")
    return _Layout(callers=callers, fixed=fixed)


def _mapping(value: object, what: str) -> Mapping[str, Mapping[str, object]]:
    if not isinstance(value, Mapping):
        raise BindingRefusedError(f"{what} must be a mapping")
    for key, item in value.items():
        if not isinstance(key, str) or not key or not isinstance(item, Mapping):
            raise BindingRefusedError(f"{what} must map argument IDs to mappings")
    return cast("Mapping[str, Mapping[str, object]]", value)


def _fixed(raw: object, index: int, positions: set[int], names: set[str]) -> _Fixed:
    where = f"fixed binding {index}"
    if not isinstance(raw, Mapping):
        raise BindingRefusedError(f"{where} must be a mapping")
    kind = raw.get("kind")
    if kind == "switch":
        return _Fixed(kind="switch", value=True, name=_name(raw, where, names))
    if not one_of(kind, {"positional", "option"}):
        raise BindingRefusedError(f"{where}: kind must be positional, option or switch")
    spec = check_type(raw.get("type"), where)
    if is_secret(spec):
        raise BindingRefusedError(f"{where}: a fixed value cannot be secret")
    if "value" not in raw:
        raise BindingRefusedError(f"{where}: value is required")
    value = check_value(spec, raw["value"], where)
    if kind == "positional":
        return _Fixed(kind="positional", value=value, position=_position(raw, where, positions))
    return _Fixed(kind="option", value=value, name=_name(raw, where, names))


def _caller(
    arg_id: str,
    contract: Mapping[str, object],
    raw: Mapping[str, object],
    positions: set[int],
    names: set[str],
) -> _Caller:
    where = f"argument {arg_id}"
    base = _declared(arg_id, contract, raw.get("kind"))
    if base.kind == "stdin":
        if raw.get("encoding") != "utf-8" or not one_of(raw.get("framing"), _FRAMINGS):
            raise BindingRefusedError(f"{where}: stdin needs encoding utf-8 and a known framing")
        return base
    if base.kind == "switch":
        if base.type.get("kind") not in {"flag", "boolean"}:
            raise BindingRefusedError(f"{where}: a switch must have a flag or boolean type")
        return replace(base, name=_name(raw, where, names), arity=_Arity(0, 0))
    arity = _arity(raw.get("arity"), where)
    if base.kind == "positional":
        return replace(base, position=_position(raw, where, positions), arity=arity)
    return replace(base, name=_name(raw, where, names), arity=arity)


def _declared(arg_id: str, contract: Mapping[str, object], kind: object) -> _Caller:
    """The contract side of one argument, with the secret-on-stdin rule."""
    where = f"argument {arg_id}"
    required = contract.get("required")
    if not isinstance(required, bool):
        raise BindingRefusedError(f"{where}: required must be a boolean")
    if not one_of(contract.get("sensitivity"), _SENSITIVITIES):
        raise BindingRefusedError(f"{where}: invalid sensitivity")
    if required and "default" in contract:
        raise BindingRefusedError(f"{where}: a required argument cannot have a default")
    spec = check_type(contract.get("type"), where)
    if not one_of(kind, _KINDS):
        raise BindingRefusedError(f"{where}: unknown binding kind")
    secret = one_of(contract.get("sensitivity"), SECRET_SENSITIVITIES) or is_secret(spec)
    if secret and kind != "stdin":
        raise BindingRefusedError(f"{where}: a secret or credential must be bound as stdin")
    default = (contract["default"],) if "default" in contract else ()
    return _Caller(arg_id=arg_id, kind=str(kind), type=spec, required=required, default=default)


def _position(raw: Mapping[str, object], where: str, positions: set[int]) -> int:
    position = raw.get("position")
    if not is_int(position) or position < 0:
        raise BindingRefusedError(f"{where}: position must be an integer >= 0")
    if position in positions:
        raise BindingRefusedError(f"{where}: position {position} is bound twice")
    positions.add(position)
    return position


def _name(raw: Mapping[str, object], where: str, names: set[str]) -> str:
    name = raw.get("name")
    if not isinstance(name, str) or not name.startswith("--") or not FLAG_NAME.fullmatch(name):
        raise BindingRefusedError(f"{where}: name must be a --flag")
    if name in DISPATCHER_OPTIONS:
        raise BindingRefusedError(f"{where}: {name} is a dispatcher option")
    if name in names:
        raise BindingRefusedError(f"{where}: {name} is bound twice")
    names.add(name)
    return name


def _arity(raw: object, where: str) -> _Arity:
    if not isinstance(raw, Mapping):
        raise BindingRefusedError(f"{where}: arity must be a mapping")
    minimum, maximum = raw.get("minimum"), raw.get("maximum")
    if not is_int(minimum) or minimum < 0 or "maximum" not in raw:
        raise BindingRefusedError(f"{where}: arity needs minimum >= 0 and a maximum")
    if maximum is not None and (not is_int(maximum) or maximum < max(minimum, 1)):
        raise BindingRefusedError(f"{where}: arity maximum must be null or >= max(minimum, 1)")
    return _Arity(minimum, maximum)


# --------------------------------------------------------------------------- #
# 2-3. tokens and positionals


def _split(argv: Sequence[str], layout: _Layout) -> tuple[list[str], dict[str, list[str] | bool]]:
    """Positional tokens, and the named arguments as ``{arg_id: tokens or True}``."""
    tokens = list(argv)
    forced: list[str] = []
    if "--" in tokens:
        cut = tokens.index("--")
        tokens, forced = tokens[:cut], tokens[cut + 1 :]
    start = next((i for i, t in enumerate(tokens) if t.startswith("--")), len(tokens))
    by_name = {c.name: c for c in layout.callers.values() if c.kind in {"option", "switch"}}
    fixed_names = {f.name for f in layout.fixed if f.name}
    named: dict[str, list[str] | bool] = {}
    i = start
    while i < len(tokens):
        caller = _known_name(tokens[i], by_name, fixed_names)
        if caller is None:
            raise BindingRefusedError("unexpected trailing value in the named arguments")
        if caller.arg_id in named:
            raise BindingRefusedError(f"option {caller.name} supplied more than once")
        i += 1
        if caller.kind == "switch":
            named[caller.arg_id] = True
            continue
        taken: list[str] = []
        while i < len(tokens) and (
            caller.arity.maximum is None or len(taken) < caller.arity.maximum
        ):
            if tokens[i].startswith("--") and _known_name(tokens[i], by_name, fixed_names):
                break
            taken.append(tokens[i])
            i += 1
        if len(taken) < caller.arity.minimum:
            raise BindingRefusedError(f"missing option value for {caller.name}")
        named[caller.arg_id] = taken
    return tokens[:start] + forced, named


def _known_name(token: str, by_name: Mapping[str, _Caller], fixed: set[str]) -> _Caller | None:
    """The caller option named by ``token``; ``None`` for a plain value; refuses others."""
    if not token.startswith("--"):
        return None
    if token in fixed:
        raise BindingRefusedError(f"caller cannot override fixed option {token}")
    caller = by_name.get(token)
    if caller is not None:
        return caller
    if token.partition("=")[0] in DISPATCHER_OPTIONS:
        raise BindingRefusedError(f"unknown option {token.partition('=')[0]} (a dispatcher option)")
    raise BindingRefusedError("unknown option (not declared by the binding)")


def _fill_positionals(tokens: list[str], layout: _Layout) -> dict[str, list[str] | bool]:
    bindings = sorted(
        (c for c in layout.callers.values() if c.kind == "positional"), key=lambda c: c.position
    )
    filled: dict[str, list[str] | bool] = {}
    used = 0
    for index, caller in enumerate(bindings):
        later = sum(c.arity.minimum for c in bindings[index + 1 :])
        available = len(tokens) - used - later
        take = available if caller.arity.maximum is None else min(caller.arity.maximum, available)
        if take <= 0 or take < caller.arity.minimum:
            continue  # left unset: a default or "missing required" decides later
        filled[caller.arg_id] = tokens[used : used + take]
        used += take
    if used < len(tokens):
        raise BindingRefusedError(f"unexpected trailing value (positional {used})")
    return filled


# --------------------------------------------------------------------------- #
# 4-5. values, stdin, defaults, emission


def _typed(caller: _Caller, value: list[str] | bool) -> object:
    """Type a switch (``True``), a list type, several values, or exactly one value."""
    where = f"argument {caller.arg_id}"
    if isinstance(value, bool) or caller.type.get("kind") == "list":
        return check_value(caller.type, value, where)
    if caller.arity.single:
        return check_value(caller.type, value[0], where)
    return [check_value(caller.type, item, where) for item in value]


def _stdin_decision(layout: _Layout, stdin: bool) -> bool:
    stdin_args = [c for c in layout.callers.values() if c.kind == "stdin"]
    if stdin and not stdin_args:
        raise BindingRefusedError("interface does not declare stdin")
    for caller in stdin_args:
        if caller.required and not stdin:
            raise BindingRefusedError(f"{caller.arg_id} requires --stdin")
    return stdin


def _apply_defaults(layout: _Layout, values: dict[str, object]) -> None:
    for arg_id, caller in sorted(layout.callers.items()):
        if arg_id in values or caller.kind == "stdin":
            continue
        if caller.default:
            values[arg_id] = _typed_default(caller, caller.default[0])
        elif caller.kind == "switch":
            values[arg_id] = False
        elif caller.required:
            raise BindingRefusedError(f"missing required argument {arg_id}")


def _typed_default(caller: _Caller, default: object) -> object:
    where = f"argument {caller.arg_id} default"
    if isinstance(default, list) and caller.type.get("kind") != "list":
        return [check_value(caller.type, item, where) for item in default]
    return check_value(caller.type, default, where)


def _tokens(value: object) -> list[str]:
    if isinstance(value, list):
        return [text_of(item) for item in value]
    return [text_of(value)]


def _dash_led(token: str) -> bool:
    """A token an argparse-style parser would read as an option (a lone ``-`` is data)."""
    return token.startswith("-") and len(token) > 1


def _values(tokens: list[str]) -> list[str]:
    """Value tokens; ``--`` cannot be one (argparse drops a second ``--``)."""
    if "--" in tokens:
        raise BindingRefusedError("the value '--' cannot be passed to the gateway")
    return tokens


def _option(name: str, value: object) -> list[str]:
    """An option and its values, so that no value can be read as another option.

    One value that begins with ``-`` is written ``--name=value``; several values
    have no such form, so a dash-led one among them is refused.
    """
    tokens = _values(_tokens(value))
    if not any(_dash_led(token) for token in tokens):
        return [name, *tokens]
    if len(tokens) == 1:
        return [f"{name}={tokens[0]}"]
    raise BindingRefusedError(f"a value of the multi-value option {name} begins with '-'")


def _emit(layout: _Layout, values: Mapping[str, object]) -> list[str]:
    """Positionals, caller options, fixed options; ``--`` before dash-led positionals.

    When a positional begins with ``-``, the options come first and ``--``
    precedes the positionals, so the gateway's parser reads each of them as a
    value (BLUEPRINTS-V6 6.3 leaves the order otherwise unchanged).
    """
    positional: list[tuple[int, object]] = [
        (f.position, f.value) for f in layout.fixed if f.kind == "positional"
    ]
    positional += [
        (c.position, values[c.arg_id])
        for c in layout.callers.values()
        if c.kind == "positional" and c.arg_id in values
    ]
    positionals: list[str] = []
    for _, value in sorted(positional, key=lambda item: item[0]):
        positionals += _values(_tokens(value))
    named: list[str] = []
    for arg_id, caller in sorted(layout.callers.items()):
        if caller.kind not in {"option", "switch"} or arg_id not in values:
            continue
        value = values[arg_id]
        if caller.kind == "switch":
            named += [caller.name] if value is True else []
        else:
            named += _option(caller.name, value)
    for fixed in sorted((f for f in layout.fixed if f.name), key=lambda f: f.name):
        named += [fixed.name] if fixed.kind == "switch" else _option(fixed.name, fixed.value)
    if any(_dash_led(token) for token in positionals):
        return [*named, "--", *positionals]
    return positionals + named
