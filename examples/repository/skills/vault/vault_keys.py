"""Gateway of ``vault``: the Python setup step (create the key) and its teardown."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from boring_dispatch.gateway import ArgvInterface

_KEY = Path(__file__).parent / "data" / "key.txt"


class CreateKey(ArgvInterface):
    """Write a fresh key to ``data/key.txt`` (0600, never through a symlink)."""

    def run(self, argv: list[str]) -> int:  # noqa: ARG002 - takes no arguments
        _KEY.parent.mkdir(exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
        with os.fdopen(os.open(_KEY, flags, 0o600), "w", encoding="ascii") as handle:
            handle.write(secrets.token_hex(16) + "\n")
        print("vault: key created")
        return 0


class RemoveKey(ArgvInterface):
    """Remove ``data/key.txt`` if it is there."""

    def run(self, argv: list[str]) -> int:  # noqa: ARG002 - takes no arguments
        _KEY.unlink(missing_ok=True)
        print("vault: key removed")
        return 0
