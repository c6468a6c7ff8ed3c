"""Gateway of ``journal._rtx``: append to and print the topic files under data/.

Every path this file touches is ``data/<topic>.txt`` relative to the module
root, which is what the module's ``authority.owns_filesystem`` declares; the
interfaces' contracts say the same, so ``add-entry`` is security level 1.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from boring_dispatch.gateway import Interface

_DATA = Path(__file__).parent / "data"
_TOPIC = re.compile(r"[a-z0-9][a-z0-9-]{0,39}")
_MAX_ENTRY = 1000
_MAX_READ = 256 * 1024


def _topic_file(topic: str) -> Path:
    # The binding already checked the topic; checking again keeps the path inside data/.
    if not _TOPIC.fullmatch(topic):
        raise ValueError("not a topic name")
    return _DATA / f"{topic}.txt"


class AddEntry(Interface):
    """``add-entry TOPIC WORD...``: append one line to ``data/TOPIC.txt``."""

    def build_parser(self) -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(prog="add-entry")
        parser.add_argument("topic")
        parser.add_argument("words", nargs="+")
        return parser

    def run(self, args: argparse.Namespace) -> int:
        entry = " ".join(args.words)
        if len(entry) > _MAX_ENTRY or "\n" in entry:
            sys.stderr.write("add-entry: an entry is one line of at most 1000 characters\n")
            return 1
        path = _topic_file(args.topic)
        # O_NOFOLLOW: a symlink planted at data/<topic>.txt is refused, not written through.
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
        fd = os.open(path, flags, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as handle:
            handle.write(entry + "\n")
        print(f"added an entry to {args.topic}")
        return 0


class ShowEntries(Interface):
    """``show-entries TOPIC``: print ``data/TOPIC.txt``."""

    def build_parser(self) -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(prog="show-entries")
        parser.add_argument("topic")
        return parser

    def run(self, args: argparse.Namespace) -> int:
        try:
            fd = os.open(_topic_file(args.topic), os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            sys.stderr.write(f"show-entries: no entries for {args.topic}\n")
            return 1
        with os.fdopen(fd, "rb") as handle:
            sys.stdout.write(handle.read(_MAX_READ).decode("utf-8"))
        return 0
