"""The caller's context for injected arguments, as every adapter takes it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

__all__ = ["ContextSource", "resolve_context"]

RunT = TypeVar("RunT")

#: A fixed mapping, or a function of the framework's run context that returns one.
ContextSource = Mapping[str, object] | Callable[[RunT], Mapping[str, object]] | None


def resolve_context(source: ContextSource[RunT], run: RunT) -> Mapping[str, object] | None:
    """The mapping for one call: ``source`` itself, or what it returns for ``run``.

    Raises:
        TypeError: the source returned something that is not a mapping.
    """
    if source is None or isinstance(source, Mapping):
        return source
    context = source(run)
    if not isinstance(context, Mapping):
        raise TypeError("the context function must return a mapping")
    return context
