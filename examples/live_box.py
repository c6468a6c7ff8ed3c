"""The essay's live box: two names, get_job and finish, and nothing else runs.

Run it with ``python examples/live_box.py``. Every line it prints comes from a
real call through the dispatcher.
"""

from __future__ import annotations

import json
import logging

from boring_dispatch import Observation, Registry, Tool

_JOBS = {7: {"job_id": 7, "status": "scheduled"}}
#: Set by a handler when it runs: proof that refused calls never reach it.
HANDLER_RAN = {"get_job": False}


def get_job(job_id: int) -> dict[str, object]:
    """Look up one job (a bug: an unknown id raises KeyError, not a ToolError)."""
    HANDLER_RAN["get_job"] = True
    return dict(_JOBS[job_id])


def finish(answer: str) -> dict[str, object]:
    """End the session."""
    return {"finished": True, "answer": answer}


BOX = Registry(
    {
        "get_job": Tool(get_job, description="Look up one job by id."),
        "finish": Tool(finish, description="End the session with an answer."),
    },
    name="live_box",
)


class _Keep(logging.Handler):
    """Keeps the server-side log lines so the demo can show them."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def _show(name: str, args: dict[str, object]) -> Observation:
    observation = BOX.dispatch(name, args)
    print(f"{name} {json.dumps(args)} -> {observation.to_json()}")
    return observation


def main() -> int:
    """Print the story; return 0 when every step behaved as the essay says."""
    log = logging.getLogger("boring_dispatch")
    keep, propagate = _Keep(), log.propagate
    log.addHandler(keep)
    log.propagate = False
    try:
        ok = _show("get_job", {"job_id": 7}).ok
        ok &= _show("finish", {"answer": "Your valve is booked for Tuesday."}).ok
        ok &= _show("os.system", {"command": "rm -rf /"}).code == "unknown_tool"
        print("bound names:", ", ".join(BOX.names()))

        HANDLER_RAN["get_job"] = False
        ok &= _show("get_job", {"job_id": "7"}).code == "invalid_arguments"
        print(f"  handler ran: {HANDLER_RAN['get_job']}")
        ok &= not HANDLER_RAN["get_job"]

        failed = _show("get_job", {"job_id": 99})
        error = failed.error
        ok &= error is not None and error.code == "internal_error"
        for line in keep.lines:
            text = line.splitlines()
            print(f"  server log: {text[0]}")
            print(f"              ... {text[-1]}")
    finally:
        log.removeHandler(keep)
        log.propagate = propagate
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
