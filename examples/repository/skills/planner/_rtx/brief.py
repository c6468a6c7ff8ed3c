"""Gateway of ``planner._rtx``: a morning brief built from two nested calls.

``self.dispatch`` runs another export through the same pipeline as the CLI,
with this module (``planner._rtx``) as the caller: a gateway cannot claim
another identity. The policies decide: ``notes`` lets ``planner`` (and so
``planner._rtx``) read notes, and ``textkit`` is open to every module.
"""

from __future__ import annotations

import argparse
import json
import sys

from boring_dispatch.errors import RouteError
from boring_dispatch.gateway import Interface, NestedResult


def _failed(what: str, result: NestedResult) -> int:
    sys.stderr.write(f"morning-brief: {what} failed with exit code {result.exit_code}\n")
    sys.stderr.write(result.stderr)
    return 1


class MorningBrief(Interface):
    """``morning-brief [NOTE]``: the note, titled, with its word count."""

    def build_parser(self) -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(prog="morning-brief")
        parser.add_argument("note", nargs="?", default="today")
        return parser

    def run(self, args: argparse.Namespace) -> int:
        try:
            note = self.dispatch("notes._rtx.interface.read-note", positionals=[args.note])
            if not note.ok:
                return _failed("read-note", note)
            counted = self.dispatch("textkit.interface.word-count", stdin=note.stdout)
        except RouteError as error:
            # A refused nested call is a dispatcher error, not an exit code.
            sys.stderr.write(f"morning-brief: nested call refused: {error.code}\n")
            return 1
        if not counted.ok:
            return _failed("word-count", counted)
        words = json.loads(counted.stdout)["words"]
        title = f"Morning brief ({args.note}, {words} words)"
        print(title)
        print("=" * len(title))
        sys.stdout.write(note.stdout)
        return 0
