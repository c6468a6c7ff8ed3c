"""The three MCP tools of a blueprint repository, as plain data (no SDK import).

``invoke_security_0``, ``invoke_security_1`` and ``invoke_security_2`` take the
same projection; the suffix is the security level the called interface must
have. The descriptions are what an assistant reads, so they state the tier,
the projection, the options compile rule and the result shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

__all__ = ["OUTPUT_SCHEMA", "TIER_TOOLS", "TierTool", "tier_of"]

_LEVELS: Final = (
    (
        "Security level 0: read-only. The interface reads, and writes only to its own "
        "stdout and stderr; no network."
    ),
    (
        "Security level 1: reads and writes only inside the declaring module's own "
        "filesystem authority (authority.owns_filesystem); no network, no external media."
    ),
    (
        "Security level 2: general read/write behaviour, including external requests "
        "and writes outside the declaring module's authority."
    ),
)

_CALLING: Final = """\
Call only interfaces whose interface block says "Security level: {level}"; any other \
level fails with dispatcher.security_level_mismatch (the message names the right tool).

Arguments (the projection):
- caller: the top-level skill you act for (a discoverable skill ID, e.g. "daily-plan").
- interface: the export ID "<module>.interface.<name>" (no @version).
- version: the interface version from its block (null: whatever the source declares).
- arguments: may be left out, and so may each of its members (then: none of them).
- arguments.positionals: strings, in order.
- arguments.options: {{flag: value}} compiled to argv: a key is a flag ("--date", "-D") \
or a bare name that gets "--" ("date"); a string or integer emits the flag and the value; \
true emits the flag alone (a switch); false and null emit nothing; a list emits the flag \
once followed by each value. Floats are refused. Options follow the positionals; if a \
positional starts with "-", the options come first, then "--", then the positionals.
- arguments.stdin: text sent on the gateway's stdin (only where the interface accepts \
stdin), or null.
- dry_run: true authorizes and compiles without launching; the result holds the \
compiled call under dispatcher.dry_run.

Result: structuredContent.result always holds the complete result: stdout, stderr, \
exit_code and dispatcher metadata (caller and target IDs, security_level, \
output_audiences, warnings, trace_id, error on failure). The text content holds only \
streams declared for a human audience; read the structured result for machine output, \
status and errors."""


@dataclass(frozen=True, slots=True)
class TierTool:
    """One listed tool: its name, tier, description and annotation hints."""

    name: str
    level: int
    title: str
    description: str
    # MCP tool annotations: hints for hosts, never a security boundary.
    read_only: bool
    destructive: bool
    open_world: bool


_STRING_OR_INT: Final[Mapping[str, object]] = {"type": ["string", "integer"]}

#: JSON Schema of the projection (the server re-validates strictly; this is for the host).
INPUT_SCHEMA: Final[Mapping[str, object]] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["caller", "interface"],
    "properties": {
        "caller": {"type": "string", "description": "Top-level skill ID you act for."},
        "interface": {"type": "string", "description": "Export ID <module>.interface.<name>."},
        "version": {"type": ["integer", "null"], "minimum": 1},
        "arguments": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "positionals": {"type": "array", "items": {"type": "string"}},
                "options": {
                    "type": "object",
                    "additionalProperties": {
                        "anyOf": [
                            {"type": ["string", "integer", "boolean", "null"]},
                            {"type": "array", "items": _STRING_OR_INT},
                        ]
                    },
                },
                "stdin": {"type": ["string", "null"]},
            },
        },
        "dry_run": {"type": "boolean", "default": False},
        "setup_flow_id": {
            "type": ["string", "null"],
            "description": "Only as a setup manager continuation tells you.",
        },
    },
}

#: Every result is ``{"result": {...}}``; declared so hosts know where to look.
OUTPUT_SCHEMA: Final[Mapping[str, object]] = {
    "type": "object",
    "required": ["result"],
    "properties": {"result": {"type": "object"}},
}


def _tool(level: int) -> TierTool:
    return TierTool(
        name=f"invoke_security_{level}",
        level=level,
        title=f"Invoke a security-level-{level} interface",
        description=_LEVELS[level] + "\n\n" + _CALLING.format(level=level),
        read_only=level == 0,
        destructive=level == 2,
        open_world=level == 2,
    )


#: The three tools, by name, in tier order.
TIER_TOOLS: Final[Mapping[str, TierTool]] = MappingProxyType(
    {tool.name: tool for tool in map(_tool, range(3))}
)


def tier_of(name: str) -> int | None:
    """The tier of the tool called ``name``, or ``None`` for any other name."""
    tool = TIER_TOOLS.get(name)
    return None if tool is None else tool.level
