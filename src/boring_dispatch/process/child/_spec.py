"""The runner's command line, checked before anything of the gateway is touched.

``--gateway=REL.py --entry=Class --level=0|1|2|- --broker-fd=N|- --owners=UID,...
... -- COMMAND...``: every option once, in a fixed order, each value checked
(identifiers, a relative ``.py`` path under the module, limits in range). A
mistake is :class:`RunnerError` (``error: ...``, exit status 2).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from boring_dispatch._limits import count_problem, seconds_problem
from boring_dispatch._value import value
from boring_dispatch.process._command import LIMIT_KEYS, OPTIONS, SEPARATOR

__all__ = ["RLIMIT_NAMES", "RunnerError", "Spec", "parse_spec"]

#: The resource limits ``--limits`` may set, in the order the runner applies them.
RLIMIT_NAMES: Final = ("cpu", "nofile", "fsize", "as")


class RunnerError(Exception):
    """Runner misuse or a refused gateway: reported as ``error: ...``, exit status 2."""


@value
class Spec:
    """The parsed runner command line."""

    module_id: str
    source_id: str
    interface_id: str
    module_root: str
    repo_root: str
    config: str
    module_roots: tuple[str, ...]
    package: str
    entrypoint: str
    timeout_s: float
    max_output_bytes: int
    max_stdin_bytes: int
    rlimits: tuple[tuple[str, int], ...]
    gateway_path: str
    entry: str
    #: The route's derived security level: the ceiling of its nested calls (None: unknown).
    level: int | None
    #: The child's end of the parent's nested-call broker (None: nested calls are unavailable).
    broker_fd: int | None
    #: The uids that may own the files and directories the confined importer serves.
    owners: frozenset[int]
    command: tuple[str, ...]


def parse_spec(argv: Sequence[str]) -> Spec:
    """Parse the runner's argv (without ``argv[0]``); the command is taken verbatim.

    Raises:
        RunnerError: an option is missing, misplaced or malformed, ``--`` is
            missing, a path is relative, a name is not an identifier, or the
            entrypoint is not the one derived from the gateway path.
    """
    count = len(OPTIONS)
    if len(argv) <= count or argv[count] != SEPARATOR:
        raise RunnerError("expected the runner options followed by --")
    values: dict[str, str] = {}
    for name, token in zip(OPTIONS, argv[:count], strict=True):
        prefix = f"--{name}="
        if not token.startswith(prefix):
            raise RunnerError(f"expected --{name}=... at its position")
        values[name] = token[len(prefix) :]
    _check_values(values)
    package = values["logical-package"]
    timeout_s, max_output, max_stdin, rlimits = _parse_limits(values["limits"])
    return Spec(
        module_id=values["module-id"],
        source_id=values["source-id"],
        interface_id=values["interface-id"],
        module_root=values["module-root"],
        repo_root=values["repo-root"],
        config=values["config"],
        module_roots=_parse_roots(values["module-roots"]),
        package=package,
        entrypoint=values["logical-entrypoint"],
        timeout_s=timeout_s,
        max_output_bytes=max_output,
        max_stdin_bytes=max_stdin,
        rlimits=rlimits,
        gateway_path=values["gateway"],
        entry=values["entry"],
        level=_parse_level(values["level"]),
        broker_fd=_parse_fd(values["broker-fd"]),
        owners=_parse_owners(values["owners"]),
        command=tuple(argv[count + 1 :]),
    )


def _check_values(values: dict[str, str]) -> None:
    for name in ("module-id", "source-id", "interface-id"):
        if not values[name]:
            raise RunnerError(f"--{name} is empty")
    for name in ("module-root", "repo-root", "config"):
        if not Path(values[name]).is_absolute():
            raise RunnerError(f"--{name} must be an absolute path")
    if not _identifier(values["logical-package"]):
        raise RunnerError("--logical-package must be an identifier")
    if not _identifier(values["entry"]):
        raise RunnerError("--entry must be an identifier")
    if values["logical-entrypoint"] != _entrypoint(values["logical-package"], values["gateway"]):
        raise RunnerError("--logical-entrypoint does not match the gateway path")


def _identifier(name: str) -> bool:
    return name.isidentifier() and name.isascii()


def _entrypoint(package: str, gateway_path: str) -> str:
    parts = gateway_path.split("/")
    if (
        not gateway_path.endswith(".py")
        or gateway_path.startswith("/")
        or any(part in {"", ".", ".."} for part in parts)
    ):
        raise RunnerError("--gateway must be a relative path to a .py file")
    names = [*parts[:-1], parts[-1].removesuffix(".py")]
    if not all(_identifier(name) for name in names):
        raise RunnerError("--gateway path parts must be identifiers")
    if names[-1] == "__init__":
        names.pop()
    return ".".join([package, *names])


def _parse_level(text: str) -> int | None:
    if text == "-":
        return None
    if text not in {"0", "1", "2"}:
        raise RunnerError("--level must be 0, 1, 2 or -")
    return int(text)


def _parse_fd(text: str) -> int | None:
    if text == "-":
        return None
    if not (text.isascii() and text.isdigit() and len(text) <= 9) or int(text) < 3:
        raise RunnerError("--broker-fd must be a descriptor number above 2 or -")
    return int(text)


def _parse_owners(text: str) -> frozenset[int]:
    parts = text.split(",")
    if not all(part.isascii() and part.isdigit() and len(part) <= 10 for part in parts):
        raise RunnerError("--owners must be a comma-separated list of uids")
    return frozenset(int(part) for part in parts)


def _parse_roots(text: str) -> tuple[str, ...]:
    try:
        roots = json.loads(text)
    except ValueError as error:
        raise RunnerError("--module-roots must be a JSON array") from error
    if not isinstance(roots, list) or not all(
        isinstance(root, str) and Path(root).is_absolute() for root in roots
    ):
        raise RunnerError("--module-roots must be a JSON array of absolute paths")
    return tuple(roots)


def _parse_limits(text: str) -> tuple[float, int, int, tuple[tuple[str, int], ...]]:
    """``(timeout_s, max_output_bytes, max_stdin_bytes, ((rlimit name, value), ...))``."""
    pairs = [item.partition("=") for item in text.split(",")]
    if [key for key, _, _ in pairs] != list(LIMIT_KEYS):
        raise RunnerError("--limits must list " + ",".join(LIMIT_KEYS))
    raw = {key: value for key, _, value in pairs}
    try:
        timeout_s = float(raw["timeout"])
        sizes = {key: int(value) for key, value in raw.items() if key != "timeout" and value != "-"}
    except ValueError as error:
        raise RunnerError("--limits values must be numbers") from error
    if seconds_problem(timeout_s) or any(count_problem(v) for v in sizes.values()):
        raise RunnerError("--limits value out of range")
    if "output" not in sizes or "stdin" not in sizes:
        raise RunnerError("--limits output and stdin are required")
    rlimits = tuple((key, sizes[key]) for key in RLIMIT_NAMES if key in sizes)
    return timeout_s, sizes["output"], sizes["stdin"], rlimits
