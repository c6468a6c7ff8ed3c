"""The runner's command-line layout, shared by the parent and the child.

Constants only, with no imports, so that the child-side runner can read them
without loading what the parent uses to build the command
(:mod:`~boring_dispatch.process._argv`).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import Final


__all__ = [
    "CHILD_FLAGS",
    "FORKED_BROKER_FD",
    "LIMIT_KEYS",
    "OPTIONS",
    "RUNNER_MODULE",
    "SEPARATOR",
]

#: How every child interpreter starts: isolated, no bytecode written, UTF-8 mode.
CHILD_FLAGS: Final = ("-I", "-B", "-X", "utf8")
RUNNER_MODULE: Final = "boring_dispatch.process.child.runner"
#: The runner's private options, in their fixed order.
OPTIONS: Final = (
    "module-id",
    "source-id",
    "interface-id",
    "module-root",
    "repo-root",
    "config",
    "module-roots",
    "logical-package",
    "logical-entrypoint",
    "limits",
    "gateway",
    "entry",
    "level",
    "broker-fd",
    "owners",
)
#: The token that ends the runner's options; the gateway argv follows it.
SEPARATOR: Final = "--"
#: Keys of ``--limits``, in their fixed order.
LIMIT_KEYS: Final = ("timeout", "output", "stdin", "cpu", "nofile", "fsize", "as")
#: Where a child forked by the fork server finds its broker socket (``--broker-fd``).
FORKED_BROKER_FD: Final = 4
