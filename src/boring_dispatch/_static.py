"""Names only type checkers read, usable at run time without importing ``typing``.

``typing`` costs a CLI start more than some whole requests (see
docs/architecture.md, "Layers"), so the modules on the dry-run path import it
under ``if TYPE_CHECKING:`` only. The few names they also need at run time come
from here: to a type checker they are ``typing``'s own; at run time
``Protocol`` is a plain base (the protocols on that path are never checked
with ``isinstance``) and the two decorators return what they are given.
"""

from __future__ import annotations

TYPE_CHECKING = False  # never true at run time; type checkers read the branch below
if TYPE_CHECKING:
    from typing import Protocol, dataclass_transform, final
else:
    Protocol = object

    def final(cls: type) -> type:
        """``typing.final``: at run time, nothing."""
        return cls

    def dataclass_transform(**_: object) -> object:
        """``typing.dataclass_transform``: at run time, nothing."""
        return lambda cls: cls


__all__ = ["Protocol", "dataclass_transform", "final"]
