"""The billing bot's table: same handler code as support, a different enabled set."""

from __future__ import annotations

from boring_dispatch import Registry, Tool

from .handlers import finish, lookup_invoice, refund

BILLING = Registry(
    {
        "lookup_invoice": Tool(lookup_invoice, description="Look up one invoice by id."),
        "refund": Tool(
            refund,
            description="Refund part of an invoice (amount in cents).",
            audience="machine",
        ),
        "finish": Tool(finish, description="End the session with an answer."),
    },
    name="billing",
)
