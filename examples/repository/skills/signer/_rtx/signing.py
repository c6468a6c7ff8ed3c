"""Gateway of ``signer._rtx``: sign a message with a key that arrives on stdin.

The key is declared ``sensitivity: secret`` and bound ``kind: stdin``, so it
reaches this process through a pipe: it is never in the argv (visible to every
user through ``ps``), never in the environment, and never in the dispatcher's
dry-run output, traces or error messages.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import sys

from boring_dispatch.gateway import Interface

_MAX_KEY_BYTES = 4096


class SignMessage(Interface):
    """``sign-message MESSAGE [--audit-argv]``, key on stdin."""

    def build_parser(self) -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(prog="sign-message")
        parser.add_argument("message")
        parser.add_argument("--audit-argv", action="store_true")
        return parser

    def run(self, args: argparse.Namespace) -> int:
        raw = sys.stdin.buffer.read(_MAX_KEY_BYTES + 1)
        key = raw.removesuffix(b"\n")
        if not key or len(raw) > _MAX_KEY_BYTES:
            sys.stderr.write("sign-message: send a key of 1 to 4096 bytes on stdin\n")
            return 1
        digest = hmac.new(key, args.message.encode("utf-8"), hashlib.sha256).hexdigest()
        result: dict[str, object] = {"algorithm": "hmac-sha256", "signature": digest}
        if args.audit_argv:
            # The interpreter's whole command line, exactly as the OS started it.
            result["argv"] = list(sys.orig_argv)
        print(json.dumps(result, sort_keys=True))
        return 0
