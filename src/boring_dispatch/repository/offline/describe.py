"""``dispatcher describe``: the block an assistant needs to call one interface.

Describing is metadata inspection: it reads the target's ancestry and its
source, never authorizes, never launches and grants nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from boring_dispatch.errors import SecurityLevelUnavailable
from boring_dispatch.observe._logtext import log_text
from boring_dispatch.repository.bind.binding import stdin_rule
from boring_dispatch.repository.facts.audiences import output_audiences
from boring_dispatch.repository.facts.levels import derive_level
from boring_dispatch.repository.load.config import load_config
from boring_dispatch.repository.load.lookup import ModuleLoader
from boring_dispatch.repository.pipeline import resolve_target
from boring_dispatch.repository.repository import Repository

__all__ = ["Description", "describe", "render_description"]


@dataclass(frozen=True, slots=True)
class Description:
    """What a caller needs to know about one export."""

    interface: str
    version: int
    description: str
    usage: str
    #: 0, 1 or 2; ``None`` when the level cannot be derived (no tier will accept it).
    security_level: int | None
    output_audiences: Mapping[str, str]
    #: "accepted", "required" or "refused".
    stdin: str
    process_bindable: bool


def describe(repository: Repository, interface: str) -> Description:
    """Read the export ``interface`` and its source interface.

    Raises:
        RouteError: the same loading errors a request for it would see.
    """
    target = resolve_target(ModuleLoader(load_config(repository.config_path)), interface, None)
    body, version = target.interface, target.version
    try:
        level: int | None = derive_level(body, target.terminal)
    except SecurityLevelUnavailable:
        level = None
    binding = body.get("process_binding")
    return Description(
        interface=interface,
        version=version,
        description=_text(body.get("description")),
        usage=_text(body.get("usage")),
        security_level=level,
        output_audiences=output_audiences(body),
        stdin=stdin_rule(body),
        process_bindable=isinstance(binding, Mapping) and binding.get("kind") == "process",
    )


def render_description(d: Description) -> str:
    """The text block printed by ``dispatcher describe``.

    The blueprint's description and usage are a module author's text, printed on
    a person's terminal: a control, format or separator character (an ANSI or
    OSC 52 sequence, a bidi override) is written as an escape (``log_text``).
    """
    level = "unavailable" if d.security_level is None else str(d.security_level)
    tool = "none (level unavailable)" if d.security_level is None else f"invoke_security_{level}"
    lines = [
        f"Interface: {d.interface}@{d.version}",
        f"Security level: {level}",
        f"MCP tool: {tool}",
        f"Usage: {log_text(d.usage) or '(no usage declared)'}",
        f"Stdin: {d.stdin}",
        f"Output audiences: {_audiences(d.output_audiences)}",
        f"Process-bindable: {'yes' if d.process_bindable else 'no'}",
    ]
    if d.description:
        lines.append(f"Description: {log_text(d.description)}")
    return "\n".join(lines) + "\n"


def _audiences(audiences: Mapping[str, str]) -> str:
    return f"stdout={audiences['stdout']}, stderr={audiences['stderr']}"


def _text(value: object) -> str:
    return " ".join(value.split()) if isinstance(value, str) else ""
