"""Output audiences of stdout and stderr (ARCHITECTURE 3.3; seed "MCP result audiences").

The MCP boundary uses them to decide which streams appear in the text
preview; the structured result always keeps every stream. They are derived
from the already loaded implementing interface, with no further read:

* a declaration for a stream is the ``audience`` of a ``contract.outputs``
  entry whose ``direct_io_ref`` names a ``contract.direct_io.writes`` entry
  with that ``medium`` (``stdout`` or ``stderr``);
* the stream's audience is the one value every declaration agrees on, if it is
  ``machine``, ``human`` or ``both``;
* no declaration (missing or unmatched), a missing or invalid audience,
  declarations that disagree, or a malformed contract give ``machine``.

A write ID declared more than once is ambiguous: an output that names it
counts as an invalid declaration for every stream that ID is declared with.
"""

from __future__ import annotations

from collections.abc import Mapping

from boring_dispatch.records import AUDIENCES

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import Final

__all__ = ["STREAMS", "output_audiences"]

#: The streams that get an audience, in display order.
STREAMS: Final = ("stdout", "stderr")
_DEFAULT: Final = "machine"
_INVALID: Final = object()


def output_audiences(interface: Mapping[str, object]) -> dict[str, str]:
    """``{"stdout": audience, "stderr": audience}`` for one implementing interface.

    Never raises: anything malformed, missing or conflicting gives
    ``machine`` for the stream concerned.
    """
    declared: dict[str, list[object]] = {stream: [] for stream in STREAMS}
    streams_of, ambiguous = _write_streams(interface)
    for output in _list(_contract(interface).get("outputs")):
        if not isinstance(output, Mapping):
            continue
        ref = output.get("direct_io_ref")
        if not isinstance(ref, str) or ref not in streams_of:
            continue  # unmatched: contributes to no stream
        audience = output.get("audience")
        valid = isinstance(audience, str) and audience in AUDIENCES and ref not in ambiguous
        for stream in streams_of[ref]:
            declared[stream].append(audience if valid else _INVALID)
    return {stream: _agreed(values) for stream, values in declared.items()}


def _agreed(values: list[object]) -> str:
    first = values[0] if values else _INVALID
    if isinstance(first, str) and all(value == first for value in values):
        return first
    return _DEFAULT


def _write_streams(interface: object) -> tuple[dict[str, set[str]], set[str]]:
    """``{write id: stream media}`` of the stdout/stderr writes, and the duplicated IDs."""
    direct_io = _contract(interface).get("direct_io")
    writes = direct_io.get("writes") if isinstance(direct_io, Mapping) else None
    seen: set[str] = set()
    duplicated: set[str] = set()
    streams_of: dict[str, set[str]] = {}
    for entry in _list(writes):
        write_id = entry.get("id") if isinstance(entry, Mapping) else None
        if not isinstance(write_id, str):
            continue
        (duplicated if write_id in seen else seen).add(write_id)
        medium = entry.get("medium") if isinstance(entry, Mapping) else None
        if isinstance(medium, str) and medium in STREAMS:
            streams_of.setdefault(write_id, set()).add(medium)
    return streams_of, duplicated


def _contract(interface: object) -> Mapping[str, object]:
    contract = interface.get("contract") if isinstance(interface, Mapping) else None
    return contract if isinstance(contract, Mapping) else {}


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []
