"""Asking a person, through MCP elicitation, to approve one call of a ``confirm=True`` tool.

A table tool built with ``confirm=True`` is ``denied`` unless the client
confirms the call. Over MCP, the server asks the user with a form elicitation
(``{"approve": boolean}``) when, and only when, the client declared the
elicitation capability; the call is confirmed only when the user accepts
with ``approve`` exactly ``true``. Anything else (declined, cancelled, a
malformed answer, no capability, an error, no answer within
:data:`ELICIT_TIMEOUT_S`) leaves the call ``denied``. The model's arguments
are shown to the user with their sensitive values redacted; injected values
never are, being in no argument.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from boring_dispatch._quote import shown
from boring_dispatch.observe._logtext import log_text

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

__all__ = ["APPROVE_SCHEMA", "ELICIT_TIMEOUT_S", "ask_person"]

_LOG: Final = logging.getLogger("boring_dispatch")
#: How long a person has to answer before the call is denied.
ELICIT_TIMEOUT_S: Final = 300.0
#: The form the user fills in: one boolean.
APPROVE_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "approve": {
            "type": "boolean",
            "title": "Approve this call",
            "description": "Run this one call of the tool.",
        }
    },
    "required": ["approve"],
}


async def ask_person(ctx: ServerRequestContext[Any, Any], name: str, shown_args: str) -> bool:
    """Whether the user approved this one call (``False`` on anything but a clear yes)."""
    import anyio
    import mcp_types as types

    session = ctx.session
    if not session.check_client_capability(
        types.ClientCapabilities(elicitation=types.ElicitationCapability())
    ):
        return False
    message = (
        f"The assistant asks to run the tool {shown(name, 64)} with the arguments "
        f"{shown(shown_args, 2000)}. Approve this one call?"
    )
    try:
        with anyio.fail_after(ELICIT_TIMEOUT_S):
            answer = await session.elicit_form(
                message, APPROVE_SCHEMA, related_request_id=ctx.request_id
            )
    except Exception as error:  # noqa: BLE001 - no answer is a refusal, never a confirmation
        _LOG.warning(
            "elicitation for tool %s failed (%s): the call stays denied",
            log_text(name[:64]),
            log_text(type(error).__name__),
        )
        return False
    content = answer.content if answer.action == "accept" else None
    return isinstance(content, Mapping) and content.get("approve") is True and len(content) == 1
