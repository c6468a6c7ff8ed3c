"""An environment for subprocesses whose imports or start-up time a test measures.

``make test`` measures coverage in the processes the tests start (coverage's
``patch = subprocess`` passes its configuration in an environment variable);
a process started with this environment runs unmeasured, as a user's would.
"""

from __future__ import annotations

import os

_COVERAGE_VARIABLES = ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START", "COVERAGE_CORE")


def plain_environment() -> dict[str, str]:
    """``os.environ`` without coverage's variables."""
    return {k: v for k, v in os.environ.items() if k not in _COVERAGE_VARIABLES}
