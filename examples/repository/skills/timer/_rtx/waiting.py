"""Gateway of ``timer._rtx``: sleep, bounded, then report.

The dispatcher already refused anything outside 0..30 (the argument's type);
the gateway checks again, as every gateway should.
"""

from __future__ import annotations

import argparse
import sys
import time

from boring_dispatch.gateway import Interface

_LIMIT_S = 30.0


class Wait(Interface):
    """``wait SECONDS``."""

    def build_parser(self) -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(prog="wait")
        parser.add_argument("seconds", type=float)
        return parser

    def run(self, args: argparse.Namespace) -> int:
        seconds: float = args.seconds
        if not 0 <= seconds <= _LIMIT_S:
            sys.stderr.write("wait: seconds must be between 0 and 30\n")
            return 2
        time.sleep(seconds)
        print(f"waited {seconds:g} s")
        return 0
