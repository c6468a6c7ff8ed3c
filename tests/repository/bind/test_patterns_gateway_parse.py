"""Pattern mode checks positionals the way the gateway's parser will read them.

The compiled command is the caller's argv unchanged, so the positionals a
pattern's ``positional_patterns`` and counts were checked against must be the
positionals the gateway's argparse parser (abbreviations off, as the runner
sets it) reads. argparse reads a negative-number-looking token (``-1``,
``-.5``) as a positional when the parser declares no such option; the pattern
tokeniser (BLUEPRINTS-V6 6.2) reads it as a flag, which a pattern without
``allowed_flags`` admits: such a pattern now matches no such token (a
deliberate difference, docs/repository.md; ``--`` before it passes it as a
positional, checked as one).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boring_dispatch.errors import ResolutionFailed
from boring_dispatch.repository.bind.binding import compile_binding

IID = "demo._rtx.interface.run"
# A corpus shape (cloud-files lists-delete): exactly one positional, under lists/.
INTERFACE = {
    "version": 1,
    "process_binding": {
        "kind": "process",
        "entry": "Interface",
        "patterns": [
            {"min_positionals": 1, "max_positionals": 1, "positional_patterns": {"0": "^lists/"}}
        ],
    },
}
NUMBERS = ("-1", "-0", "-12", "-.5", "-1.5")
TOKENS = (*NUMBERS, "lists/a", "plans/b", "--force", "-")


def gateway_positionals(argv: list[str]) -> list[str] | None:
    """What a gateway parser with one ``*`` positional reads, or ``None`` if it refuses."""
    parser = argparse.ArgumentParser(allow_abbrev=False, exit_on_error=False)
    parser.add_argument("--force", action="store_true")
    parser.add_argument("paths", nargs="*")
    try:
        namespace, rest = parser.parse_known_args(argv)
    except (argparse.ArgumentError, SystemExit):
        return None
    return None if rest else list(namespace.paths)


def test_every_accepted_argv_gives_the_gateway_the_positionals_the_pattern_checked() -> None:
    for size in range(1, 4):
        for argv in itertools.product(TOKENS, repeat=size):
            try:
                compile_binding(INTERFACE, interface_id=IID, argv=list(argv), stdin=False)
            except ResolutionFailed:
                continue
            seen = gateway_positionals(list(argv))
            assert seen is None or (len(seen) == 1 and seen[0].startswith("lists/")), argv


# --------------------------------------------------------------------------- #
# The general rule, as a family: for generated patterns and a gateway parser
# that has every option the pattern declares (value flags take a value, the
# rest are switches) and maybe switches of its own (a value option the pattern
# does not declare breaks the pattern's contract: the tokeniser cannot know it
# takes the next token), every argv the pattern mode
# accepts is read by the gateway (abbreviations off, as the runner sets it) as
# something the pattern checked: its positionals fit the count and the
# positional patterns, every declared value flag it reads fully matches its
# regex, no forbidden flag is set, and with ``allowed_flags`` only those are.

SHORT = ("-a", "-f", "-v")
LONG = ("--folder", "--force", "-force")
FLAGS = (*SHORT, *LONG)
ARGV_TOKENS = (
    *FLAGS,
    "-aok",
    "-abad",
    "-vf",
    "-fv",
    "-va",
    "-fo",
    "-forc",
    "-a=ok",
    "--folder=ok",
    "--folder=bad",
    "-1",
    "-.5",
    "-x y",
    "-v ok",
    "--force=a b",
    "ok",
    "bad",
    "lists/a",
    "--",
    "-",
)


@st.composite
def _pattern_and_gateway(draw: st.DrawFn) -> tuple[dict[str, object], dict[str, bool]]:
    """A pattern, and the gateway's options: flag -> takes a value."""
    gateway = {flag: draw(st.booleans()) for flag in draw(st.sets(st.sampled_from(FLAGS)))}
    values = [flag for flag, takes in gateway.items() if takes]
    switches = [flag for flag, takes in gateway.items() if not takes]
    pattern: dict[str, object] = {
        "min_positionals": draw(st.integers(1, 2)),
        "max_positionals": 2,
        "positional_patterns": {"0": "^lists/"},
    }
    if values:  # the pattern's contract: the gateway's value options are its flag_patterns
        pattern["flag_patterns"] = dict.fromkeys(sorted(values), "ok")
    forbid: bool = draw(st.booleans())
    if switches and forbid:
        pattern["forbidden_flags"] = sorted(draw(st.sets(st.sampled_from(switches), min_size=1)))
    if draw(st.booleans()):
        pattern["allowed_flags"] = sorted(draw(st.sets(st.sampled_from(sorted(gateway) or FLAGS))))
    return pattern, gateway


def _gateway_reads(gateway: dict[str, bool], argv: list[str]) -> argparse.Namespace | None:
    parser = argparse.ArgumentParser(allow_abbrev=False, exit_on_error=False, add_help=False)
    for index, (flag, takes) in enumerate(sorted(gateway.items())):
        if takes:
            parser.add_argument(flag, dest=f"o{index}")
        else:
            parser.add_argument(flag, dest=f"o{index}", action="store_true")
    parser.add_argument("paths", nargs="*")
    try:
        namespace, rest = parser.parse_known_args(argv)
    except (argparse.ArgumentError, SystemExit, ValueError):
        return None
    return None if rest else namespace


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    _pattern_and_gateway(),
    st.lists(st.sampled_from(ARGV_TOKENS), max_size=3).map(lambda argv: [*argv, "lists/a"]),
)
def test_what_the_gateway_reads_is_what_the_pattern_checked(
    setup: tuple[dict[str, object], dict[str, bool]], argv: list[str]
) -> None:
    pattern, gateway = setup
    binding = {"kind": "process", "entry": "Interface", "patterns": [pattern]}
    interface = {"version": 1, "process_binding": binding}
    try:
        compile_binding(interface, interface_id=IID, argv=argv, stdin=False)
    except ResolutionFailed:
        return
    with contextlib.redirect_stderr(io.StringIO()):
        namespace = _gateway_reads(gateway, argv)
    if namespace is None:
        return  # the gateway refuses it (bad usage): nothing unchecked runs
    names = {f"o{index}": flag for index, flag in enumerate(sorted(gateway))}
    read = {
        names[dest]: value
        for dest, value in vars(namespace).items()
        if dest != "paths" and value not in (None, False)
    }
    paths = namespace.paths
    assert int(pattern["min_positionals"]) <= len(paths) <= 2, (argv, paths)  # type: ignore[call-overload]
    assert not paths or paths[0].startswith("lists/"), (argv, paths)
    for flag, value in read.items():
        if flag in pattern.get("flag_patterns", {}):  # type: ignore[operator]
            assert value == "ok", (argv, flag, value)
        assert flag not in pattern.get("forbidden_flags", ()), (argv, flag)  # type: ignore[operator]
        if "allowed_flags" in pattern:
            assert flag in pattern["allowed_flags"], (argv, flag)  # type: ignore[operator]
