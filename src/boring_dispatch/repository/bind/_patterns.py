"""Pattern mode: match the caller's argv against authored patterns (BLUEPRINTS-V6 6.2).

The argv is never rewritten: a match only decides whether it may pass, and
under which pattern name. Every pattern is parsed completely before anything
is matched (a malformed pattern anywhere refuses the binding, even one that
would not be reached), then each pattern tokenises the argv with its own
value-taking flags. A tokenising error in any pattern refuses the whole
invocation (upstream behaviour, A9). Exactly one pattern must match.

Deliberate differences from upstream (ARCHITECTURE 3.4): no token has a
special meaning (``--route-smoke`` is matched like any other token); unknown
pattern keys, non-boolean ``allow_stdin``, positional indexes that are not
plain digits and invalid flag names are refused instead of ignored; an
invalid or unsafe regex is a refusal, never a traceback (see ``_regex``);
positional values longer than 4096 characters never match a positional
pattern (the cap upstream applies to flag values); a ``--x`` flag the pattern
does not declare and that abbreviates a ``forbidden_flags`` entry (``--forc``
for ``--force``) counts as that forbidden flag, since argparse would expand it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from boring_dispatch._value import value
from boring_dispatch.repository._regex import (
    MAX_PATTERN_LENGTH,
    MAX_SUBJECT_LENGTH,
    BoundedPattern,
    PatternRefused,
    compile_pattern,
)
from boring_dispatch.repository._shapes import (
    BindingRefused,
    is_flag_name,
    is_int,
    optional_bool,
    shown_flag,
    string_list,
)

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import Final

__all__ = ["match_patterns", "patterns_take_stdin"]

_PATTERN_KEYS: Final = frozenset(
    {
        "name",
        "min_positionals",
        "max_positionals",
        "allow_extra_positionals",
        "allow_stdin",
        "positional_patterns",
        "flag_patterns",
        "required_flags",
        "allowed_flags",
        "forbidden_flags",
        "notes",
    }
)
# Compiled (and cached by ``re``) on first use, not at import: a CLI start rarely needs it.
_INDEX: Final = r"[0-9]+"
#: argparse's own test of a negative number (``_negative_number_matcher``), ``$`` included.
_NEGATIVE: Final = r"^-\d+$|^-\d*\.\d+$"


@value
class _Pattern:
    """One parsed pattern. A ``None`` regex is over-long and never matches."""

    name: str
    min_positionals: int
    max_positionals: int | None
    allow_extra: bool
    allow_stdin: bool
    positional: tuple[tuple[int, BoundedPattern | None], ...]
    value_flags: Mapping[str, BoundedPattern | None]
    required: frozenset[str]
    forbidden: frozenset[str]
    allowed: frozenset[str] | None
    declared: frozenset[str]


@value
class _Tokens:
    flags: Mapping[str, str | None]
    positionals: tuple[str, ...]


def match_patterns(binding: Mapping[str, object], argv: Sequence[str], stdin: bool) -> str:
    """The name of the one pattern that accepts ``argv`` (and the stdin request).

    Raises:
        BindingRefused: malformed patterns, explicit bindings mixed in, a
            tokenising error in any pattern, no match, or several matches.
    """
    patterns = _checked_patterns(binding)
    tokenised = [_tokenise(argv, pattern) for pattern in patterns]
    matched = [p.name for p, t in zip(patterns, tokenised, strict=True) if _matches(p, t, stdin)]
    if not matched:
        raise BindingRefused("invocation does not match any declared pattern", reason="no_pattern")
    if len(matched) > 1:
        raise BindingRefused(
            "invocation matches multiple patterns; ambiguous", reason="ambiguous_pattern"
        )
    return matched[0]


def patterns_take_stdin(binding: Mapping[str, object]) -> bool:
    """Whether some pattern of ``binding`` accepts stdin (``dispatcher describe``).

    Raises:
        BindingRefused: the patterns :func:`match_patterns` refuses as malformed.
    """
    return any(pattern.allow_stdin for pattern in _checked_patterns(binding))


def _checked_patterns(binding: Mapping[str, object]) -> list[_Pattern]:
    for key, empty in (("arguments", {}), ("fixed", [])):
        if key in binding and binding[key] != empty:
            raise BindingRefused(
                "authored patterns cannot mix with explicit bindings", reason="binding_malformed"
            )
    raw = binding.get("patterns")
    if not isinstance(raw, list) or not raw:
        raise BindingRefused(
            "process binding must have at least one pattern", reason="binding_malformed"
        )
    return [_parse(index, item) for index, item in enumerate(raw)]


def _parse(index: int, raw: object) -> _Pattern:
    where = f"pattern {index}"
    if not isinstance(raw, Mapping):
        raise BindingRefused(f"{where} must be a mapping", reason="binding_malformed")
    unknown = [key for key in raw if key not in _PATTERN_KEYS]
    if unknown:
        raise BindingRefused(f"{where} has an unknown key", reason="binding_malformed")
    name = raw.get("name", f"pattern_{index}")
    if not isinstance(name, str) or not name:
        raise BindingRefused(
            f"{where}: name must be a non-empty string", reason="binding_malformed"
        )
    minimum = raw.get("min_positionals", 0)
    if not is_int(minimum) or minimum < 0:
        raise BindingRefused(
            f"{where}: min_positionals must be an integer >= 0", reason="binding_malformed"
        )
    maximum = raw.get("max_positionals")
    if "max_positionals" in raw and (not is_int(maximum) or maximum < minimum):
        raise BindingRefused(
            f"{where}: max_positionals must be an integer >= the minimum",
            reason="binding_malformed",
        )
    value_flags = _flag_patterns(raw.get("flag_patterns", {}), where)
    required = frozenset(string_list(raw.get("required_flags", []), where, flags=True))
    forbidden = frozenset(string_list(raw.get("forbidden_flags", []), where, flags=True))
    allowed = None
    if "allowed_flags" in raw:  # present, even as [], restricts
        allowed = frozenset(string_list(raw["allowed_flags"], where, flags=True))
    return _Pattern(
        name=name,
        min_positionals=minimum,
        max_positionals=maximum,
        allow_extra=optional_bool(raw, "allow_extra_positionals", where),
        allow_stdin=optional_bool(raw, "allow_stdin", where),
        positional=_positional_patterns(raw.get("positional_patterns", {}), where),
        value_flags=value_flags,
        required=required,
        forbidden=forbidden,
        allowed=allowed,
        declared=frozenset(value_flags) | required | forbidden | (allowed or frozenset()),
    )


def _positional_patterns(raw: object, where: str) -> tuple[tuple[int, BoundedPattern | None], ...]:
    if not isinstance(raw, Mapping):
        raise BindingRefused(
            f"{where}: positional_patterns must be a mapping", reason="binding_malformed"
        )
    out: list[tuple[int, BoundedPattern | None]] = []
    for key, text in raw.items():
        if is_int(key) and key >= 0:
            index = key
        elif isinstance(key, str) and re.fullmatch(_INDEX, key, re.ASCII) and len(key) <= 9:
            index = int(key)
        else:
            raise BindingRefused(
                f"{where}: positional_patterns keys must be indexes", reason="binding_malformed"
            )
        out.append((index, _regex(text, f"{where}: positional pattern {index}")))
    return tuple(out)


def _flag_patterns(raw: object, where: str) -> dict[str, BoundedPattern | None]:
    if not isinstance(raw, Mapping):
        raise BindingRefused(
            f"{where}: flag_patterns must be a mapping", reason="binding_malformed"
        )
    out: dict[str, BoundedPattern | None] = {}
    for flag, text in raw.items():
        if not isinstance(flag, str) or not is_flag_name(flag):
            raise BindingRefused(
                f"{where}: flag_patterns holds an invalid flag name", reason="binding_malformed"
            )
        out[flag] = _regex(text, f"{where}: flag pattern {flag}")
    return out


def _regex(text: object, what: str) -> BoundedPattern | None:
    if not isinstance(text, str):
        raise BindingRefused(f"{what} must be a string", reason="binding_malformed")
    if len(text) > MAX_PATTERN_LENGTH:
        return None  # upstream: a value checked against an over-long pattern never matches
    try:
        return compile_pattern(text)
    except PatternRefused as refused:
        raise BindingRefused(f"{what}: {refused}", reason="regex_refused") from None


def _tokenise(argv: Sequence[str], pattern: _Pattern) -> _Tokens:
    """Split ``argv`` into flags and positionals with this pattern's value flags."""
    flags: dict[str, str | None] = {}
    positionals: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--":
            positionals.extend(argv[i:])
            break
        if not arg.startswith("-") or arg == "-":
            positionals.append(arg)
            continue
        name, has_inline, inline = arg.partition("=")
        shown = shown_flag(name, pattern.declared)
        if name in flags:
            raise BindingRefused(f"duplicate flag {shown}", reason="duplicate_option")
        if name not in pattern.value_flags:
            if has_inline:
                raise BindingRefused(
                    f"switch {shown} does not take a value", reason="switch_with_value"
                )
            flags[name] = None
        elif has_inline and inline:
            flags[name] = inline
        elif not has_inline and i < len(argv) and _is_value(argv[i]):
            flags[name] = argv[i]
            i += 1
        else:
            raise BindingRefused(f"flag {shown} requires a value", reason="missing_option_value")
    return _Tokens(flags=flags, positionals=tuple(positionals))


def _is_value(arg: str) -> bool:
    """What may follow a value flag: not ``--``, no leading ``-`` (a lone ``-`` is fine)."""
    return arg == "-" or not arg.startswith("-")


def _matches(pattern: _Pattern, tokens: _Tokens, stdin: bool) -> bool:
    return (
        (pattern.allow_stdin or not stdin)
        and _count_fits(pattern, len(tokens.positionals))
        and _flag_sets_fit(pattern, set(tokens.flags))
        and all(
            index < len(tokens.positionals)
            and _accepts(regex, tokens.positionals[index], full=False)
            for index, regex in pattern.positional
        )
        and all(
            _accepts(regex, value, full=True)
            for flag, regex in pattern.value_flags.items()
            if (value := tokens.flags.get(flag)) is not None
        )
    )


def _flag_sets_fit(pattern: _Pattern, provided: set[str]) -> bool:
    if not pattern.required <= provided or pattern.forbidden & provided:
        return False
    if any(_read_otherwise(flag, pattern) for flag in provided):
        return False
    return pattern.allowed is None or provided <= pattern.allowed


def _read_otherwise(flag: str, pattern: _Pattern) -> bool:
    """Whether the gateway's parser reads this undeclared flag token as something else.

    argparse (abbreviations off, as the runner sets them) reads a negative
    number (``-1``, ``-.5``: its own test, ``_NEGATIVE``) or a token holding
    a space as a positional, so the count and the positional patterns would
    have been checked against other positionals. A single-dash token can name a
    declared single-dash option another way: ``-ofile`` is ``-o`` with a value
    and ``-vf`` is ``-v`` then ``-f`` (clusters), and a prefix such as ``-fo``
    is the single-dash ``-force`` (matched even with abbreviations off); the
    declared flag's checks (value regex, forbidden) would be passed by. A flag
    the pattern declares itself is taken as the gateway's own exact flag. A
    prefix of a forbidden ``--force`` (``--forc``) counts as that flag: a
    parser with abbreviations on would expand it.
    """
    if flag in pattern.declared:
        return False
    if " " in flag or re.match(_NEGATIVE, flag):
        return True
    if flag[1] == "-":
        return len(flag) > 2 and any(forbidden.startswith(flag) for forbidden in pattern.forbidden)
    body = flag[1:]
    for declared in pattern.declared:
        if len(declared) < 2 or declared[0] != "-" or declared[1] == "-":
            continue
        if declared.startswith(flag) or (len(declared) == 2 and declared[1] in body):
            return True
    return False


def _count_fits(pattern: _Pattern, count: int) -> bool:
    if count < pattern.min_positionals:
        return False
    if pattern.max_positionals is not None:
        return count <= pattern.max_positionals
    return pattern.allow_extra or count == pattern.min_positionals


def _accepts(regex: BoundedPattern | None, value: str, *, full: bool) -> bool:
    """Positional patterns anchor at the start only (``re.match``); flag patterns match fully."""
    if regex is None or len(value) > MAX_SUBJECT_LENGTH:
        return False
    found = regex.fullmatch(value) if full else regex.match(value)
    return found is not None
