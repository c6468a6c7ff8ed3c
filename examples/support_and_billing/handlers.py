"""Handlers shared by the support and billing surfaces.

Handlers are implementations: they know jobs and invoices. Which of them a
surface may call is policy, and lives in each surface's own table
(``support.py``, ``billing.py``). The "world" here is an in-memory fixture.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Annotated

from boring_dispatch import Sensitive, ToolError

__all__ = ["finish", "get_job", "lookup_invoice", "refund"]

_JOBS: dict[int, dict[str, object]] = {
    7: {"job_id": 7, "title": "Replace boiler valve", "status": "scheduled"},
    8: {"job_id": 8, "title": "Annual inspection", "status": "done"},
}


@dataclass(frozen=True)
class _Invoice:
    invoice_id: str
    job_id: int
    amount_cents: int
    refunded_cents: int = 0


_INVOICES = {"INV-1001": _Invoice("INV-1001", job_id=8, amount_cents=12_500)}
#: The billing provider accepts only this token (a fixture, not a real secret).
FIXTURE_TOKEN = "tok_fixture_only"  # noqa: S105 - a fixture value, not a secret


def get_job(job_id: int) -> dict[str, object]:
    """Look up one job by id."""
    job = _JOBS.get(job_id)
    if job is None:
        raise ToolError(f"no job {job_id}")
    return dict(job)


def finish(answer: str) -> dict[str, object]:
    """End the session with an answer for the customer."""
    return {"finished": True, "answer": answer}


def lookup_invoice(invoice_id: str) -> dict[str, object]:
    """Look up one invoice by id."""
    return asdict(_invoice(invoice_id))


def _invoice(invoice_id: str) -> _Invoice:
    invoice = _INVOICES.get(invoice_id)
    if invoice is None:
        raise ToolError(f"no invoice {invoice_id}")
    return invoice


def refund(
    invoice_id: str, amount_cents: int, api_token: Annotated[str, Sensitive]
) -> dict[str, object]:
    """Refund part of an invoice. The business rules live here, not in dispatch."""
    if api_token != FIXTURE_TOKEN:
        raise ToolError("the billing provider refused the token")
    invoice = _invoice(invoice_id)
    if amount_cents <= 0:
        raise ToolError("a refund must be a positive amount")
    refundable = invoice.amount_cents - invoice.refunded_cents
    if amount_cents > refundable:
        raise ToolError(f"at most {refundable} cents can be refunded")
    return {"invoice_id": invoice_id, "refunded_cents": amount_cents}
