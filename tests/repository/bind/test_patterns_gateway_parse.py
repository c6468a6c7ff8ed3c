"""Pattern mode checks positionals the way the gateway's parser will read them.

The compiled command is the caller's argv unchanged, so the positionals a
pattern's ``positional_patterns`` and counts were checked against must be the
positionals the gateway's argparse parser (abbreviations off, as the runner
sets it) reads. argparse reads a negative-number-looking token (``-1``,
``-.5``) as a positional when the parser declares no such option; the pattern
tokeniser (BLUEPRINTS-V6 6.2) reads it as a flag, which a pattern without
``allowed_flags`` admits.
"""

from __future__ import annotations

import argparse
import itertools

import pytest

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


@pytest.mark.xfail(
    strict=True,
    reason="design: the v6 tokeniser reads -1 as a flag; argparse reads it as a positional",
)
def test_every_accepted_argv_gives_the_gateway_the_positionals_the_pattern_checked() -> None:
    for size in range(1, 4):
        for argv in itertools.product(TOKENS, repeat=size):
            try:
                compile_binding(INTERFACE, interface_id=IID, argv=list(argv), stdin=False)
            except ResolutionFailed:
                continue
            seen = gateway_positionals(list(argv))
            assert seen is None or (len(seen) == 1 and seen[0].startswith("lists/")), argv
