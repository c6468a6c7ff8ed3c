"""Gateway of ``notes._rtx``: two read-only interfaces over the files in notes/.

``process_binding.entry`` names the class to run: ``ListNotes`` or ``ReadNote``.
The runner instantiates it with no arguments, parses the argv with
``build_parser()`` and turns ``run()``'s return value into the exit code.
"""

from __future__ import annotations

import argparse
import sys

from boring_dispatch.gateway import Interface

from ._store import note_names, read_note


class ListNotes(Interface):
    """``list-notes``: one note name per line."""

    def build_parser(self) -> argparse.ArgumentParser:
        return argparse.ArgumentParser(prog="list-notes")

    def run(self, args: argparse.Namespace) -> int:  # noqa: ARG002 -- no arguments to read
        for name in note_names():
            print(name)
        return 0


class ReadNote(Interface):
    """``read-note NAME``: the note's text on stdout, or exit 1 with a diagnostic."""

    def build_parser(self) -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(prog="read-note")
        parser.add_argument("name")
        return parser

    def run(self, args: argparse.Namespace) -> int:
        try:
            text = read_note(args.name)
        except (OSError, ValueError):
            sys.stderr.write(f"read-note: no note named {args.name}\n")
            return 1
        sys.stdout.write(text)
        return 0
