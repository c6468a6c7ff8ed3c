"""The build-time refusal of handlers that are asynchronous in any disguise.

A table calls handlers synchronously (``adispatch`` runs the same pipeline in
a worker thread): a handler whose call yields something to await or iterate
would return an unfinished result, so it is refused when the table is built.
"""

from __future__ import annotations

from boring_dispatch.errors import RegistryInvalid

__all__ = ["check_synchronous"]


def check_synchronous(tool_name: str, handler: object) -> None:
    """Refuse a handler whose call yields something to await or iterate, however it is wrapped.

    Looked through: ``functools.wraps`` chains (``__wrapped__``), partials,
    bound methods, ``staticmethod``/``classmethod`` objects and an instance's
    ``__call__``; refused: coroutine and (async) generator functions, and a
    declared result that is awaitable or an iterator. What no signature shows
    (a plain function returning a coroutine) is refused at call time instead.
    """
    import inspect

    for candidate in _callables(handler):
        if (
            inspect.iscoroutinefunction(candidate)
            or inspect.isasyncgenfunction(candidate)
            or inspect.isgeneratorfunction(candidate)
            or _declares_deferred(candidate)
        ):
            raise RegistryInvalid(
                f"tool {tool_name!r}: the handler must be a plain synchronous function "
                "(async, generator and awaitable-returning handlers are not supported)"
            )


def _callables(handler: object) -> list[object]:
    """``handler`` and every callable it stands for, looked through each known wrapping."""
    import functools

    found: list[object] = []
    pending = [handler]
    while pending and len(found) < 64:
        current = pending.pop()
        if any(current is seen for seen in found):
            continue
        found.append(current)
        if isinstance(current, functools.partial | functools.partialmethod):
            pending.append(current.func)
        if isinstance(current, staticmethod | classmethod):
            pending.append(current.__func__)
        inner = vars(current).get("__wrapped__") if hasattr(current, "__dict__") else None
        if inner is not None:
            pending.append(inner)
        bound = getattr(current, "__func__", None)
        if bound is not None:
            pending.append(bound)
        if not isinstance(current, type) and not _is_function(current):
            # The class's own __call__ as defined (a function, or a static/class method object).
            for klass in type(current).__mro__:
                if "__call__" in vars(klass):
                    pending.append(vars(klass)["__call__"])
                    break
    return found


def _is_function(value: object) -> bool:
    import types

    return isinstance(
        value,
        types.FunctionType
        | types.BuiltinFunctionType
        | types.MethodType
        | types.MethodWrapperType
        | types.WrapperDescriptorType
        | types.MethodDescriptorType,
    )


def _declares_deferred(candidate: object) -> bool:
    """Whether ``candidate``'s return annotation is an awaitable, an iterator or a generator."""
    import collections.abc
    import inspect
    import typing

    if not callable(candidate) or isinstance(candidate, type):
        return False
    try:
        declared = inspect.signature(candidate, eval_str=True).return_annotation
    except (NameError, TypeError, ValueError, SyntaxError):
        return False
    origin = typing.get_origin(declared) or declared
    deferred = (
        collections.abc.Awaitable,
        collections.abc.AsyncIterator,
        collections.abc.AsyncIterable,
        collections.abc.Iterator,
    )
    return isinstance(origin, type) and issubclass(origin, deferred)
