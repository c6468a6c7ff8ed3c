"""Findings 3 and 5: a Tool is checked field by field, and no handler is asynchronous in disguise.

3. ``confirm=1`` or ``confirm="yes"`` turned confirmation off and
   ``enabled="false"`` left a tool enabled. Every typed field of a Tool must
   now have its exact type at build (``RegistryInvalid``).
5. Async handlers hidden behind ``__call__``, ``functools.wraps``, partials,
   static/class methods, async generators or an awaitable result passed the
   build check and failed every call. Every disguise is refused at build; a
   handler that still returns an awaitable or generator is ``internal_error``
   at call time, its coroutine closed (no "never awaited" warning).
"""

from __future__ import annotations

import asyncio
import collections.abc
import functools
import gc
import sys
import textwrap
import typing
import warnings
from collections.abc import AsyncIterator, Awaitable, Coroutine, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from boring_dispatch import Registry, Tool
from boring_dispatch.errors import RegistryInvalid
from boring_dispatch.registry.pipeline import TableLimits
from hardening_pipeline_kit import RawMcp, write_module


def plain(x: int) -> int:
    return x


class Args(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    x: int


class Truthy(str):
    """A string that claims to equal everything."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return hash("both")


WRONG_TYPES: dict[str, list[object]] = {
    "enabled": [1, 0, "false", "true", "", "no", None, [], [False], 1.0, 0.0, b"", object()],
    "confirm": [1, 0, "yes", "no", "true", "false", "", None, [], {}, 1.0, 0.0, b"1", object()],
    "audience": [1, None, b"both", "Both", "BOTH", " both", "everyone", Truthy("x"), ["both"]],
    "description": [b"Add.", 1, None, ["Add."], Truthy("Add."), object()],
    "args": [1, "Args", {"x": int}, Args(x=1), True, object()],
}
CASES = [(field, value) for field, values in WRONG_TYPES.items() for value in values]


@pytest.mark.parametrize(("field", "value"), CASES, ids=[f"{f}={v!r}" for f, v in CASES])
def test_every_tool_field_of_the_wrong_type_is_refused_at_build(field: str, value: object) -> None:
    fields: dict[str, Any] = {"description": "Add."}
    fields[field] = value
    tool = Tool(plain, **fields)
    with pytest.raises(RegistryInvalid):
        Registry({"t": tool})


@pytest.mark.parametrize("field", ["enabled", "confirm"])
@pytest.mark.parametrize("value", [True, False])
def test_real_bools_still_build(field: str, value: bool) -> None:
    fields: dict[str, Any] = {field: value}
    registry = Registry({"t": Tool(plain, description="Add.", **fields)})
    enabled = value if field == "enabled" else True
    assert registry.names() == (("t",) if enabled else ())
    if enabled:
        expected = "denied" if field == "confirm" and value else "ok"
        assert registry.dispatch("t", {"x": 1}).code == expected


@pytest.mark.parametrize(
    "limits", [{"max_depth": 1000}, 5, "TableLimits()", object(), TableLimits, [TableLimits()]]
)
def test_limits_of_the_wrong_type_are_refused_at_build(limits: object) -> None:
    with pytest.raises(RegistryInvalid):
        Registry({"t": Tool(plain, description="Add.")}, limits=limits)  # type: ignore[arg-type]


def test_policy_bits_of_the_wrong_type_fail_the_cli_and_the_mcp_server(tmp_path: Path) -> None:
    """``dispatcher names`` and ``dispatcher mcp`` load the table the same way: both refuse."""
    import subprocess

    write_module(
        tmp_path,
        "loose_table",
        textwrap.dedent(
            """
            from boring_dispatch import Registry, Tool

            def pay(amount: int) -> int:
                return amount

            TABLE = Registry({"pay": Tool(pay, description="Pay.", confirm=1)})
            """
        ),
    )
    for args in (
        ["names", "--registry", "loose_table:TABLE"],
        ["mcp", "--registry", "loose_table:TABLE"],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "boring_dispatch", *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=60,
            check=False,
        )
        assert done.returncode != 0, args
        assert "confirm must be True or False" in done.stderr, (args, done.stderr)


# --------------------------------------------------------------------------- #
# Finding 5: asynchronous handlers in disguise


async def coroutine_function(x: int) -> int:
    return x


async def async_generator_function(x: int) -> AsyncIterator[int]:
    yield x


def generator_function(x: int) -> Iterator[int]:
    yield x


def generator_unannotated(x: int):  # type: ignore[no-untyped-def]  # noqa: ANN201
    yield x


class AsyncCall:
    async def __call__(self, x: int) -> int:
        return x


class AsyncGenCall:
    async def __call__(self, x: int) -> AsyncIterator[int]:
        yield x


class Methods:
    @staticmethod
    async def static(x: int) -> int:
        return x

    @classmethod
    async def klass(cls, x: int) -> int:
        return x

    async def bound(self, x: int) -> int:
        return x


@functools.wraps(coroutine_function)
def wraps_wrapper(*args: Any, **kwargs: Any) -> Any:
    return coroutine_function(*args, **kwargs)


def _double_wrapped() -> Any:
    @functools.wraps(wraps_wrapper)
    def outer(*args: Any, **kwargs: Any) -> Any:
        return wraps_wrapper(*args, **kwargs)

    return outer


def declares_awaitable(x: int) -> Awaitable[int]:
    return coroutine_function(x)


def declares_coroutine(x: int) -> Coroutine[Any, Any, int]:
    return coroutine_function(x)


def declares_generator(x: int) -> Generator[int, None, None]:
    yield x


def declares_typing_awaitable(x: int) -> typing.Awaitable[int]:
    return coroutine_function(x)


def declares_abc(x: int) -> collections.abc.Awaitable[int]:
    return coroutine_function(x)


class AwaitableResult:
    def __call__(self, x: int) -> Awaitable[int]:
        return coroutine_function(x)


DISGUISES = {
    "coroutine-function": coroutine_function,
    "async-__call__": AsyncCall(),
    "async-generator-__call__": AsyncGenCall(),
    "functools.wraps": wraps_wrapper,
    "wraps-of-wraps": _double_wrapped(),
    "partial": functools.partial(coroutine_function),
    "partial-of-wraps": functools.partial(wraps_wrapper),
    "partial-of-partial": functools.partial(functools.partial(coroutine_function)),
    "async-generator-function": async_generator_function,
    "generator-function": generator_function,
    "generator-unannotated": generator_unannotated,
    "staticmethod-object": staticmethod(coroutine_function),
    "staticmethod-attribute": Methods.static,
    "classmethod-bound": Methods.klass,
    "bound-method": Methods().bound,
    "declares-Awaitable": declares_awaitable,
    "declares-Coroutine": declares_coroutine,
    "declares-Generator": declares_generator,
    "declares-typing.Awaitable": declares_typing_awaitable,
    "declares-collections.abc.Awaitable": declares_abc,
    "__call__-declares-Awaitable": AwaitableResult(),
}


@pytest.mark.parametrize("handler", DISGUISES.values(), ids=DISGUISES.keys())
def test_every_asynchronous_disguise_is_refused_at_build(handler: Any) -> None:
    with pytest.raises(RegistryInvalid, match="synchronous"):
        Registry({"t": Tool(handler, description="Async in disguise.")})


class PlainCall:
    def __call__(self, x: int) -> int:
        return x


@functools.wraps(plain)
def wraps_plain(*args: Any, **kwargs: Any) -> Any:
    return plain(*args, **kwargs)


@pytest.mark.parametrize(
    "handler",
    [plain, PlainCall(), wraps_plain, functools.partial(plain), staticmethod(plain)],
    ids=["function", "__call__", "wraps", "partial", "staticmethod"],
)
def test_synchronous_handlers_still_build_and_run(handler: Any) -> None:
    assert Registry({"t": Tool(handler, description="Sync.")}).dispatch("t", {"x": 3}).result == 3


# Call-time backstop: what no signature shows.
MADE: list[Any] = []


def returns_coroutine(x: int):  # type: ignore[no-untyped-def]  # noqa: ANN201
    made = coroutine_function(x)
    MADE.append(made)
    return made


def returns_generator_expression(x: int):  # type: ignore[no-untyped-def]  # noqa: ANN201
    made = (i for i in range(x))
    MADE.append(made)
    return made


def returns_async_generator(x: int):  # type: ignore[no-untyped-def]  # noqa: ANN201
    made = async_generator_function(x)
    MADE.append(made)
    return made


class AwaitableThing:
    def __await__(self) -> Generator[None, None, int]:
        yield
        return 1


class AwaitableDict(dict[str, int]):
    def __await__(self) -> Generator[None, None, int]:
        yield
        return 1


def returns_awaitable_object(x: int):  # type: ignore[no-untyped-def]  # noqa: ANN201
    return AwaitableThing()


def returns_awaitable_dict(x: int):  # type: ignore[no-untyped-def]  # noqa: ANN201
    return AwaitableDict(x=x)


def returns_future(x: int):  # type: ignore[no-untyped-def]  # noqa: ANN201
    loop = asyncio.new_event_loop()
    try:
        future = loop.create_future()
    finally:
        loop.close()
    return future


class CallReturnsCoroutine:
    def __call__(self, x: int):  # type: ignore[no-untyped-def]  # noqa: ANN204
        return returns_coroutine(x)


BACKSTOP = {
    "coroutine": returns_coroutine,
    "generator-expression": returns_generator_expression,
    "async-generator": returns_async_generator,
    "__await__-object": returns_awaitable_object,
    "dict-with-__await__": returns_awaitable_dict,
    "future": returns_future,
    "__call__-returning-coroutine": CallReturnsCoroutine(),
    "partial-returning-coroutine": functools.partial(returns_coroutine),
}


@pytest.mark.parametrize("handler", BACKSTOP.values(), ids=BACKSTOP.keys())
def test_a_returned_awaitable_or_generator_is_internal_error_and_is_closed(handler: Any) -> None:
    MADE.clear()
    registry = Registry({"t": Tool(handler, description="Returns something deferred.")})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        observation = registry.dispatch("t", {"x": 2})
        gc.collect()
    assert observation.code == "internal_error"
    assert [w for w in caught if issubclass(w.category, RuntimeWarning)] == []
    for made in MADE:
        if hasattr(made, "cr_frame"):
            assert made.cr_frame is None  # closed, never run
        if hasattr(made, "gi_frame"):
            assert made.gi_frame is None


def test_the_mcp_server_refuses_to_start_on_an_async_disguise(tmp_path: Path) -> None:
    write_module(
        tmp_path,
        "async_table",
        textwrap.dedent(
            """
            import functools
            from boring_dispatch import Registry, Tool

            async def fetch(x: int) -> int:
                return x

            @functools.wraps(fetch)
            def wrapper(*args, **kwargs):
                return fetch(*args, **kwargs)

            TABLE = Registry({"fetch": Tool(wrapper, description="Fetch.")})
            """
        ),
    )
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "boring_dispatch", "mcp", "--registry", "async_table:TABLE"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "synchronous" in done.stderr


def test_the_mcp_server_answers_internal_error_for_a_returned_coroutine(tmp_path: Path) -> None:
    write_module(
        tmp_path,
        "sneaky_table",
        textwrap.dedent(
            """
            from boring_dispatch import Registry, Tool

            async def fetch(x):
                return x

            def sneaky(x: int):
                return fetch(x)

            def fine(x: int) -> int:
                return x

            TABLE = Registry({
                "sneaky": Tool(sneaky, description="Sneaky."),
                "fine": Tool(fine, description="Fine."),
            })
            """
        ),
    )
    with RawMcp(["mcp", "--registry", "sneaky_table:TABLE"], cwd=tmp_path) as server:
        sneaky = server.call_raw("sneaky", '{"x": 1}')
        fine = server.call_raw("fine", '{"x": 1}')
    result = sneaky["result"]
    assert isinstance(result, dict)
    assert result["structuredContent"]["result"]["error"]["code"] == "internal_error"
    assert isinstance(fine["result"], dict)
    assert fine["result"]["isError"] is False
