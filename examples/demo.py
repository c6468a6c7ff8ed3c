"""`make demo`: the live box, the example repository, an MCP session, managed setup,
fixtures, and the timeline.

Every line printed comes from a real call: a Python table, the `dispatcher` CLI
run as a subprocess, and the MCP server driven by the official SDK's client; the
demo ends with the milestone timeline of an MCP session of its own.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from examples import (
    demo_fixtures,
    demo_mcp,
    demo_repository,
    demo_setup,
    demo_timeline,
    live_box,
)


def main() -> int:
    parts = (
        ("1. A Python table: the essay's live box", live_box.main),
        ("2. A blueprint repository through the CLI", demo_repository.main),
        ("3. The same repository over MCP", demo_mcp.main),
        ("4. Managed setup over MCP, from refusal to resumed call", demo_setup.main),
        ("5. Record, review, replay in CI, deploy", demo_fixtures.main),
        ("6. The milestone timeline of an MCP session", demo_timeline.main),
    )
    status = 0
    for title, part in parts:
        print(f"\n=== {title} " + "=" * max(0, 66 - len(title)))
        status |= part()
    return status


if __name__ == "__main__":
    raise SystemExit(main())
