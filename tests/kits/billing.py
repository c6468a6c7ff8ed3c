"""A small billing table for the integration suites: an injected secret, a confirm tool.

``refund`` needs the caller's ``api_token`` (``Sensitive`` and ``Injected``)
and is ``confirm=True``; ``get_invoice`` takes the token too and reports it
only by length; ``fail`` raises a ``ToolError`` that quotes the token. Each
handler counts its calls in the ``Calls`` it was built with.
"""

from __future__ import annotations

from collections import Counter
from typing import Annotated

from boring_dispatch import Injected, Registry, Sensitive, Tool, ToolError

#: A value no framework may show anywhere: the suites search every record for it.
CANARY = "canary-5ecret-7f3a9c"


def billing_table(calls: Counter[str]) -> Registry:
    """The table; ``calls`` counts the handler calls by tool name."""

    def get_invoice(
        invoice_id: int, api_token: Annotated[str, Sensitive, Injected]
    ) -> dict[str, object]:
        calls["get_invoice"] += 1
        return {"invoice_id": invoice_id, "amount": 42, "token_length": len(api_token)}

    def refund(
        invoice_id: int, api_token: Annotated[str, Sensitive, Injected]
    ) -> dict[str, object]:
        calls["refund"] += 1
        return {"refunded": invoice_id}

    def fail(reason: str, api_token: Annotated[str, Sensitive, Injected]) -> None:
        calls["fail"] += 1
        raise ToolError(f"{reason}: token {api_token} rejected")

    return Registry(
        {
            "get_invoice": Tool(get_invoice, description="Look up one invoice by id."),
            "refund": Tool(refund, description="Refund one invoice.", confirm=True),
            "fail": Tool(fail, description="Always fails."),
        },
        name="billing",
    )
