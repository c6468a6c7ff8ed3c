"""The gateway authoring API: what a blueprint's ``process_binding.entry`` class subclasses.

A gateway module is imported by the child-side runner
(:mod:`boring_dispatch.process.child.runner`); the class named by the binding's
``entry`` is instantiated with no arguments and run::

    import argparse
    from boring_dispatch.gateway import Interface

    class Greet(Interface):
        def build_parser(self) -> argparse.ArgumentParser:
            parser = argparse.ArgumentParser(prog="greet")
            parser.add_argument("--name", required=True)
            return parser

        def run(self, args: argparse.Namespace) -> int | None:
            print(f"hello {args.name}")
            return 0  # None or True -> 0, False -> 1, an int 0..255 -> that exit code

``self.dispatch(...)`` makes a nested call that the dispatcher process decides
as the running route's module, under the route's level. This module stays
light: importing it never imports pydantic, mcp or the tables.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from boring_dispatch.process.child.interface import ArgvInterface, Interface
from boring_dispatch.process.context import RuntimeContext, runtime_context

if TYPE_CHECKING:
    from boring_dispatch.records import ExecutionResult as NestedResult

__all__ = ["ArgvInterface", "Interface", "NestedResult", "RuntimeContext", "runtime_context"]


def __getattr__(name: str) -> object:
    # ``NestedResult`` is :class:`boring_dispatch.records.ExecutionResult`, resolved lazily so
    # that a gateway that never dispatches does not load the dispatcher's records.
    if name == "NestedResult":
        from boring_dispatch.records import ExecutionResult

        return ExecutionResult
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
