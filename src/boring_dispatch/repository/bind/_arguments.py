"""Argument mode: typed bindings compiled into a deterministic argv (BLUEPRINTS-V6 6.3).

Steps, each refusing with :class:`BindingRefused`:

1. **Layout** (``_layout``): the binding's declarations, checked once.
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

from boring_dispatch.repository._shapes import BindingRefused
from boring_dispatch.repository.bind._argtypes import check_value, text_of
from boring_dispatch.repository.bind._layout import (
    DISPATCHER_OPTIONS,
    Caller,
    Layout,
    check_layout,
    declared_value,
)

__all__ = ["DISPATCHER_OPTIONS", "compile_arguments"]


def compile_arguments(
    binding: Mapping[str, object],
    interface: Mapping[str, object],
    argv: Sequence[str],
    stdin: bool,
) -> tuple[list[str], bool]:
    """The compiled argument tokens (without ``args_prefix``) and the stdin decision.

    Raises:
        BindingRefused: a malformed layout, an argv the layout does not
            accept, a value of the wrong type, or a stdin rule broken.
    """
    layout = check_layout(binding, interface)
    positionals, named = _split(argv, layout)
    raw = _fill_positionals(positionals, layout) | named
    values = {arg_id: _typed(layout.callers[arg_id], value) for arg_id, value in raw.items()}
    decision = _stdin_decision(layout, stdin)
    _apply_defaults(layout, values)
    return _emit(layout, values), decision


# --------------------------------------------------------------------------- #
# 2-3. tokens and positionals


def _split(argv: Sequence[str], layout: Layout) -> tuple[list[str], dict[str, list[str] | bool]]:
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
            raise BindingRefused(
                "unexpected trailing value in the named arguments", reason="extra_value"
            )
        if caller.arg_id in named:
            raise BindingRefused(
                f"option {caller.name} supplied more than once", reason="duplicate_option"
            )
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
            raise BindingRefused(
                f"missing option value for {caller.name}", reason="missing_option_value"
            )
        named[caller.arg_id] = taken
    return tokens[:start] + forced, named


def _known_name(token: str, by_name: Mapping[str, Caller], fixed: set[str]) -> Caller | None:
    """The caller option named by ``token``; ``None`` for a plain value; refuses others."""
    if not token.startswith("--"):
        return None
    if token in fixed:
        raise BindingRefused(
            f"caller cannot override fixed option {token}", reason="fixed_override"
        )
    caller = by_name.get(token)
    if caller is not None:
        return caller
    if token.partition("=")[0] in DISPATCHER_OPTIONS:
        raise BindingRefused(
            f"unknown option {token.partition('=')[0]} (a dispatcher option)",
            reason="unknown_option",
        )
    raise BindingRefused("unknown option (not declared by the binding)", reason="unknown_option")


def _fill_positionals(tokens: list[str], layout: Layout) -> dict[str, list[str] | bool]:
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
        raise BindingRefused(
            f"unexpected trailing value (positional {used})", reason="too_many_positionals"
        )
    return filled


# --------------------------------------------------------------------------- #
# 4-5. values, stdin, defaults, emission


def _typed(caller: Caller, value: list[str] | bool) -> object:
    """Type a switch (``True``), a list type, several values, or exactly one value."""
    where = f"argument {caller.arg_id}"
    if isinstance(value, bool) or caller.type.get("kind") == "list":
        return check_value(caller.type, value, where)
    if caller.arity.single:
        return check_value(caller.type, value[0], where)
    return [check_value(caller.type, item, where) for item in value]


def _stdin_decision(layout: Layout, stdin: bool) -> bool:
    stdin_args = [c for c in layout.callers.values() if c.kind == "stdin"]
    if stdin and not stdin_args:
        raise BindingRefused("interface does not declare stdin", reason="stdin_refused")
    for caller in stdin_args:
        if caller.required and not stdin:
            raise BindingRefused(f"{caller.arg_id} requires --stdin", reason="stdin_required")
    return stdin


def _apply_defaults(layout: Layout, values: dict[str, object]) -> None:
    for arg_id, caller in sorted(layout.callers.items()):
        if arg_id in values or caller.kind == "stdin":
            continue
        if caller.default:
            values[arg_id] = _typed_default(caller, caller.default[0])
        elif caller.kind == "switch":
            values[arg_id] = False
        elif caller.required:
            raise BindingRefused(f"missing required argument {arg_id}", reason="missing_argument")


def _typed_default(caller: Caller, default: object) -> object:
    where = f"argument {caller.arg_id} default"
    if isinstance(default, list) and caller.type.get("kind") != "list":
        return [declared_value(caller.type, item, where) for item in default]
    return declared_value(caller.type, default, where)


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
        raise BindingRefused("the value '--' cannot be passed to the gateway", reason="dash_value")
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
    raise BindingRefused(
        f"a value of the multi-value option {name} begins with '-'", reason="dash_value"
    )


def _emit(layout: Layout, values: Mapping[str, object]) -> list[str]:
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
