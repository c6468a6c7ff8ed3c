"""``dispatcher serve``: the allowlist as data, read-only, behind a bearer token."""
