"""Suite-wide configuration.

Hypothesis profiles: ``ci`` (loaded when ``CI=true``) is deterministic and
bounded; ``dev`` (the default) explores more. Neither has a deadline, since
tests must not assert on wall-clock time.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    max_examples=60,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=150, deadline=None)
settings.load_profile("ci" if os.environ.get("CI", "").lower() == "true" else "dev")
