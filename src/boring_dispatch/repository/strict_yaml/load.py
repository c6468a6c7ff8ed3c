"""Strict YAML for blueprints (ARCHITECTURE 3.4, SECURITY.md section B).

libyaml (through PyYAML's C parser) composes the node tree; this module turns
it into plain data (``dict``, ``list``, ``str``, ``int``, ``float``,
``bool``, ``None``) and refuses, with ``dispatcher.blueprint_malformed``:

* input over the size cap, invalid UTF-8 or a byte-order mark;
* YAML syntax errors and streams with more than one document (libyaml);
* any anchor, alias or explicit tag, including ``!`` and ``!!str``
  (merge keys ``<<`` need an alias or are refused as ambiguous, below);
* duplicate mapping keys at any depth, and keys that are not strings
  (``~``, ``1``, ``true``, ``[a]``...);
* nesting deeper than :data:`MAX_DEPTH`;
* plain scalars that YAML 1.1 (what PyYAML, the existing dispatcher and the
  corpus's dumper use) and YAML 1.2 (most other parsers) read differently:
  ``yes``/``no``/``on``/``off``, ``0777``, ``1_000``, ``1:30``, ``1e3``,
  ``0o7``, dates, ``<<``, ``=``. Such a file means different things to
  different tools, so it is refused; quoting the value fixes it. Every
  accepted document therefore has one meaning under both versions.
* non-finite floats (``.inf``, ``.nan``) and integers too long to convert
  (Python's 4300-digit limit): no blueprint field needs them.

The typing rules live in :mod:`._rules`. Every blueprint is first
offered to :mod:`._fast`, a line parser for the plain block subset that
returns exactly what libyaml would, or declines; it refuses nothing. A declined
document goes to :mod:`._libyaml` (imported only then), which makes every
refusal above, with its line number. Without libyaml that fallback fails
closed; the fast parser does not use PyYAML at all.
"""

from __future__ import annotations

from boring_dispatch.errors import BlueprintMalformed
from boring_dispatch.repository.load.files import MAX_BLUEPRINT_BYTES
from boring_dispatch.repository.strict_yaml._fast import parse_block_yaml
from boring_dispatch.repository.strict_yaml._rules import MAX_DEPTH

TYPE_CHECKING = False  # typing is not imported at run time: the CLI's start pays for it
if TYPE_CHECKING:
    from typing import Final

__all__ = ["MAX_DEPTH", "MAX_YAML_BYTES", "load_yaml"]

#: Largest accepted input, in bytes (the blueprint cap of the file reader).
MAX_YAML_BYTES: Final = MAX_BLUEPRINT_BYTES


def load_yaml(data: bytes, *, what: str, target_module_id: str = "") -> dict[str, object]:
    """Parse one blueprint strictly into plain data.

    Documents in the plain block subset of :mod:`._fast` are read by that
    parser; it declines everything else, which libyaml then reads. Both give
    the same data, and every refusal comes from libyaml's side.

    Args:
        data: The file's bytes.
        what: Names the document in messages (a path or an ID, never content).
        target_module_id: Copied onto the error.

    Returns:
        The top-level mapping.

    Raises:
        BlueprintMalformed: anything the module docstring lists, or a top level
            that is not a mapping. Messages give a line number, never content.
    """
    text = _text(data, what, target_module_id)
    fast = parse_block_yaml(text)
    if fast is not None:
        return fast
    return _load_libyaml(data, text, what, target_module_id)


def _load_yaml_libyaml(data: bytes, *, what: str, target_module_id: str = "") -> dict[str, object]:
    """:func:`load_yaml` without the fast parser (the reference its tests compare to)."""
    return _load_libyaml(data, _text(data, what, target_module_id), what, target_module_id)


def _text(data: bytes, what: str, target_module_id: str) -> str:
    """``data`` decoded, refusing oversized input, invalid UTF-8 and a byte-order mark."""
    if len(data) > MAX_YAML_BYTES:
        raise _malformed(what, target_module_id, f"larger than {MAX_YAML_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _malformed(what, target_module_id, f"not UTF-8 (byte {exc.start})") from None
    if text.startswith("\ufeff"):
        raise _malformed(what, target_module_id, "starts with a byte-order mark")
    return text


def _load_libyaml(data: bytes, text: str, what: str, target_module_id: str) -> dict[str, object]:
    # Imported here: PyYAML is needed only for documents the fast parser declines.
    from boring_dispatch.repository.strict_yaml._libyaml import load_libyaml

    return load_libyaml(data, text, what, target_module_id)


def _malformed(what: str, target_module_id: str, reason: str) -> BlueprintMalformed:
    return BlueprintMalformed(f"{what}: {reason}", target_module_id=target_module_id)
