"""Gateway of ``textkit``: count what arrives on standard input.

``ArgvInterface`` is the variant without a parser: ``run`` gets the raw
argument list (here always empty, because the binding allows no arguments).
"""

from __future__ import annotations

import json
import sys

from boring_dispatch.gateway import ArgvInterface

_MAX_BYTES = 1024 * 1024


class WordCount(ArgvInterface):
    """``word-count``: ``{"bytes": N, "lines": N, "words": N}`` for stdin."""

    def run(self, argv: list[str]) -> int:
        if argv:  # the binding allows no arguments; a gateway checks anyway
            sys.stderr.write("word-count: takes no arguments\n")
            return 2
        data = sys.stdin.buffer.read(_MAX_BYTES + 1)
        if len(data) > _MAX_BYTES:
            sys.stderr.write("word-count: input larger than 1 MiB\n")
            return 1
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            sys.stderr.write("word-count: input is not UTF-8\n")
            return 1
        counts = {"bytes": len(data), "lines": text.count("\n"), "words": len(text.split())}
        print(json.dumps(counts, sort_keys=True))
        return 0
