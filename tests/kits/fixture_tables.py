"""A table whose real handlers leave a mark when they run, and its fixtures.

Importable as ``kits.fixture_tables:TABLE`` from ``tests/`` (the
CLI tests name it with ``--registry``). ``RAN`` holds the name of every real
handler that ran: a fixture world must leave it empty.
"""

from __future__ import annotations

from typing import Annotated

from boring_dispatch import Fixture, Recorded, Registry, Sensitive, Tool, ToolError

__all__ = ["RAN", "TABLE", "UNFIXTURED", "fixtures", "tools"]

#: Names of the real handlers that ran, in order.
RAN: list[str] = []


def get_job(job_id: int, verbose: bool = False) -> dict[str, object]:
    RAN.append("get_job")
    if job_id < 0:
        raise ToolError("job ids are positive")
    return {"job_id": job_id, "status": "scheduled", "verbose": verbose}


def refund(invoice_id: int, api_token: Annotated[str, Sensitive]) -> dict[str, object]:
    RAN.append("refund")
    return {"refunded": invoice_id, "token_length": len(api_token)}


def finish(answer: str) -> dict[str, object]:
    RAN.append("finish")
    return {"answer": answer}


def fake_finish(answer: str) -> dict[str, object]:
    """The stand-in of ``finish``: same signature, no side effect."""
    return {"answer": answer}


def fixtures() -> dict[str, Fixture]:
    """The fixtures of every tool of :data:`TABLE`."""
    return {
        "get_job": Fixture(
            Recorded({"job_id": 7}, result={"job_id": 7, "status": "scheduled", "verbose": False}),
            Recorded({"job_id": -1}, error="job ids are positive"),
        ),
        "refund": Fixture(Recorded({"invoice_id": 1, "api_token": "tok"}, result={"refunded": 1})),
        "finish": Fixture(stand_in=fake_finish),
    }


def tools(*, with_fixtures: bool = True) -> dict[str, Tool]:
    """The tools of :data:`TABLE`; ``refund`` needs confirmation, ``hidden`` is disabled."""
    chosen = fixtures() if with_fixtures else {}
    return {
        "get_job": Tool(get_job, description="Look up one job.", fixture=chosen.get("get_job")),
        "refund": Tool(
            refund, description="Refund an invoice.", confirm=True, fixture=chosen.get("refund")
        ),
        "finish": Tool(finish, description="End the session.", fixture=chosen.get("finish")),
        "hidden": Tool(finish, description="Disabled.", enabled=False),
    }


TABLE = Registry(tools(), name="support")
#: The same table with no fixture at all.
UNFIXTURED = Registry(tools(with_fixtures=False), name="support")
