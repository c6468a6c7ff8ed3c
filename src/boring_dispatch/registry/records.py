"""The frozen state of a built Python table: its limits, its rows, its sinks' health.

A :class:`~boring_dispatch.registry.registry.Registry` builds a :class:`Table`
once; the pipeline (:mod:`.pipeline`) only reads it. :class:`Request` is a
parsed ``dispatch_json`` request.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, final

from boring_dispatch.observe.audit import AuditHealth, AuditSink

if TYPE_CHECKING:
    from boring_dispatch.registry.schema import ArgumentSchema

__all__ = ["AuditHealth", "Entry", "Request", "Table", "TableLimits"]


@final
@dataclass(frozen=True, slots=True)
class TableLimits:
    """Caps of one table. Every one of them refuses; none truncates silently."""

    #: Largest ``dispatch_json`` request (bytes, or characters for ``str``), checked before parsing.
    max_request_bytes: int = 1 << 20
    #: Deepest nesting of ``[`` and ``{`` in a ``dispatch_json`` request.
    max_depth: int = 32
    #: Largest result, as compact ASCII JSON: beyond it, ``observation_too_large``.
    max_observation_bytes: int = 64 << 10
    #: ``tool_error`` messages are cut to this many characters.
    max_message_chars: int = 2000

    def __post_init__(self) -> None:
        for value in (
            self.max_request_bytes,
            self.max_depth,
            self.max_observation_bytes,
            self.max_message_chars,
        ):
            if type(value) is not int or value < 1:
                raise ValueError("every table limit is a positive int")


@final
@dataclass(frozen=True, slots=True)
class Entry:
    """One row of a built table: the handler and its checked schema."""

    handler: Callable[..., object]
    schema: ArgumentSchema
    #: Policy bit: the client (never the model's text) must confirm each call.
    confirm: bool = False
    #: The handler is a fixture world's answer: its ``NoFixture`` is the observation ``no_fixture``.
    fixture: bool = False


@final
@dataclass(frozen=True, slots=True)
class Table:
    """The frozen state a Registry hands to the pipeline."""

    surface: str
    entries: Mapping[str, Entry]
    limits: TableLimits
    sinks: tuple[AuditSink, ...]
    audit: AuditHealth = field(default_factory=AuditHealth)


@final
@dataclass(frozen=True, slots=True)
class Request:
    """A parsed request: a string name, an arguments object, maybe a recorded observation."""

    name: str
    args: dict[str, object]
    observation: dict[str, object] | None = None
