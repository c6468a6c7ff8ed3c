"""An environment for subprocesses whose imports or start-up time a test measures.

``make test`` measures coverage in the processes the tests start (coverage's
``patch = subprocess`` passes its configuration in an environment variable);
a process started with this environment runs unmeasured, as a user's would.
:func:`isolated_json` runs a probe so and reads back its last line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

_COVERAGE_VARIABLES = ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START", "COVERAGE_CORE")


def plain_environment() -> dict[str, str]:
    """``os.environ`` without coverage's variables."""
    return {k: v for k, v in os.environ.items() if k not in _COVERAGE_VARIABLES}


def isolated_json(code: str, *, timeout: float = 60) -> Any:
    """Run ``code`` as ``python -I -c`` in :func:`plain_environment`; its last line as JSON.

    The process must exit 0 (``CalledProcessError`` otherwise, its stderr kept).
    """
    done = subprocess.run(
        [sys.executable, "-I", "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=timeout,
        env=plain_environment(),
    )
    return json.loads(done.stdout.splitlines()[-1])
