"""The argument-vector caps: one definition for every stage that checks an argv.

The binding stage (:mod:`boring_dispatch.blueprints.binding`) enforces them on
the caller's argv and on the compiled command; the projection compiler, the
MCP projection pre-check and the launcher (:mod:`boring_dispatch.process._argv`)
repeat the same numbers as backstops, so no stage admits what an earlier one
would refuse. Constants only: importing this module costs nothing.
"""

from __future__ import annotations

from typing import Final

__all__ = ["MAX_ARGV_BYTES", "MAX_ARGV_TOKENS", "MAX_TOKEN_BYTES"]

#: Most tokens in one argv (the caller's, the compiled command, a projection's).
MAX_ARGV_TOKENS: Final = 1024
#: Most UTF-8 bytes in one token (Linux refuses a single argument of 128 KiB).
MAX_TOKEN_BYTES: Final = 65_536
#: Most UTF-8 bytes in one whole argv (the tokens' bytes, without terminators).
MAX_ARGV_BYTES: Final = 262_144
