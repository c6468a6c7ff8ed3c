"""The support bot's table: it can read jobs and invoices and finish. It cannot refund."""

from __future__ import annotations

from boring_dispatch import Registry, Tool

from .handlers import finish, get_job, lookup_invoice

SUPPORT = Registry(
    {
        "get_job": Tool(get_job, description="Look up one job by id."),
        "lookup_invoice": Tool(lookup_invoice, description="Look up one invoice by id."),
        "finish": Tool(finish, description="End the session with an answer."),
    },
    name="support",
)
