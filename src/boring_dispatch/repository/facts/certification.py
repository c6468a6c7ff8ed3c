"""Advisory certification-currentness warnings (BLUEPRINTS-V6 section 8).

Warnings never grant or deny, never trigger certification work and never
cause a read: the status mapping, when a host has one, is passed in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from boring_dispatch.records import ModuleRecord, RouteWarning

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import Final

__all__ = ["certification_warnings"]

_CURRENT: Final = "current"
# A state becomes part of a warning code and of a CLI line, so only a plain word is kept.
# Compiled (and cached by ``re``) on first use, not at import: a CLI start rarely needs it.
_STATE: Final = r"[a-z0-9][a-z0-9-]{0,63}"


def certification_warnings(
    caller_ancestry: Iterable[ModuleRecord | str],
    target_ancestry: Iterable[ModuleRecord | str],
    source_id: str,
    status: Mapping[str, object] | None,
) -> tuple[RouteWarning, ...]:
    """The certification warnings of one route.

    Args:
        caller_ancestry: the caller's modules (records or IDs), outermost first.
        target_ancestry: the target's modules, outermost first.
        source_id: the implementing behavioral source.
        status: node ID -> state (``"current"``, ``"stale"``, ...), or ``None``
            when no precomputed status exists (every live request today).

    Returns:
        With no status mapping (or a value that is not a mapping): exactly one
        ``certification-status-unavailable`` warning without a subject.
        Otherwise one warning per checked node whose state is not ``current``,
        in order (caller ancestry, target ancestry, source), each node once:
        code ``certification-<state>``, message ``certification status for
        <node> is <state>``, subject ``<node>``. A missing node is
        ``unavailable``; a value that is not a plain lowercase word (non-string,
        empty, spaces, newlines, over 64 characters) is ``malformed``.
    """
    if not isinstance(status, Mapping):
        return (
            RouteWarning(
                code="certification-status-unavailable",
                message="precomputed certification status is unavailable",
            ),
        )
    nodes = [_node_id(node) for node in (*caller_ancestry, *target_ancestry)] + [source_id]
    warnings: list[RouteWarning] = []
    for node in dict.fromkeys(nodes):  # ordered, without duplicates
        state = _state(status.get(node, "unavailable"))
        if state != _CURRENT:
            warnings.append(
                RouteWarning(
                    code=f"certification-{state}",
                    message=f"certification status for {node} is {state}",
                    subject=node,
                )
            )
    return tuple(warnings)


def _node_id(node: ModuleRecord | str) -> str:
    return node.module_id if isinstance(node, ModuleRecord) else node


def _state(value: object) -> str:
    if isinstance(value, str) and re.fullmatch(_STATE, value, re.ASCII):
        return value
    return "malformed"
