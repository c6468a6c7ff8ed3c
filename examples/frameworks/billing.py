"""The table every framework example shares: a secret the model never sees, a refund to approve."""

from __future__ import annotations

import os
from typing import Annotated

from boring_dispatch import Injected, Registry, Sensitive, Tool, ToolError


def get_invoice(
    invoice_id: int, api_token: Annotated[str, Sensitive, Injected]
) -> dict[str, object]:
    if invoice_id <= 0:
        raise ToolError("no such invoice")
    return {"invoice_id": invoice_id, "amount_cents": 4200, "status": "paid"}


def refund(invoice_id: int, api_token: Annotated[str, Sensitive, Injected]) -> dict[str, object]:
    return {"refunded": invoice_id}


BILLING = Registry(
    {
        "get_invoice": Tool(get_invoice, description="Look up one invoice by id."),
        "refund": Tool(refund, description="Refund one invoice.", confirm=True),
    },
    name="billing",
)


def billing_token() -> str:
    """The billing API token: from the environment, never from the model."""
    return os.environ.get("BILLING_TOKEN", "tok-example-not-a-real-secret")


def secrets() -> dict[str, object]:
    """The injected arguments for ``dispatcher mcp --registry ... --context`` (this function)."""
    return {"api_token": billing_token()}
