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

The typing rules live in :mod:`._yaml_rules`. Most blueprints are first
offered to :mod:`._fastyaml`, a line parser for the plain block subset that
returns exactly what this module would, or declines; it refuses nothing, so
every refusal above (and its line number) is made here.

Why not a second pass over events: converting nodes costs a fraction of what
PyYAML's own constructor costs, and libyaml cannot be asked to skip the
Python node objects, so the checks ride along in the one conversion walk.
Anchors and tags leave no trace on a node except its start position, which
points at the ``&`` or ``!`` of the property (a plain scalar cannot start
with either character), so the walk looks there.
"""

from __future__ import annotations

from typing import Final

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from boring_dispatch.blueprints._fastyaml import parse_block_yaml
from boring_dispatch.blueprints._fs import MAX_BLUEPRINT_BYTES
from boring_dispatch.blueprints._yaml_rules import (
    ALL_WORDS,
    MAX_DEPTH,
    NUMERIC_STARTS,
    ScalarRefused,
    plain_value,
)
from boring_dispatch.errors import BlueprintMalformed

__all__ = ["MAX_DEPTH", "MAX_YAML_BYTES", "load_yaml"]

#: Largest accepted input, in bytes (the blueprint cap of the file reader).
MAX_YAML_BYTES: Final = MAX_BLUEPRINT_BYTES

# Tags our resolver gives to implicitly tagged nodes. They contain a NUL, so no
# document can spell them; any other tag on a node was written explicitly.
_PLAIN: Final = "\x00plain"
_QUOTED: Final = "\x00quoted"
_SEQ: Final = "\x00seq"
_MAP: Final = "\x00map"

_PROPERTY_STARTS: Final = frozenset("!&")


class _Refused(Exception):
    """Internal: a rule refused the document; ``load_yaml`` turns it into the error."""

    def __init__(self, reason: str, node: Node | None = None) -> None:
        super().__init__(reason)
        where = f" (line {node.start_mark.line + 1})" if node is not None else ""
        self.reason: Final = reason + where


# Without libyaml, loading is refused rather than done by the slow pure-Python parser.
_LIBYAML = bool(getattr(yaml, "__with_libyaml__", False))

if _LIBYAML:
    from yaml._yaml import CParser

    class _StrictParser(CParser):
        """libyaml's composer with a resolver that only records how a node was written."""

        def resolve(self, kind: type[Node], _value: object, implicit: tuple[bool, bool]) -> str:
            if kind is ScalarNode:
                return _PLAIN if implicit[0] else _QUOTED
            return _SEQ if kind is SequenceNode else _MAP

        def descend_resolver(self, current_node: object, current_index: object) -> None:
            pass

        def ascend_resolver(self) -> None:
            pass


def load_yaml(data: bytes, *, what: str, target_module_id: str = "") -> dict[str, object]:
    """Parse one blueprint strictly into plain data.

    Documents in the plain block subset of :mod:`._fastyaml` are read by that
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
    if _LIBYAML:  # without libyaml, loading fails closed whatever the document
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
    # A trailing space keeps the property probe in range for an empty last node.
    probe = text + " " if ("!" in text or "&" in text) else None
    try:
        return _mapping(_compose(data), probe, 1)
    except _Refused as exc:
        raise _malformed(what, target_module_id, exc.reason) from None


def _malformed(what: str, target_module_id: str, reason: str) -> BlueprintMalformed:
    return BlueprintMalformed(f"{what}: {reason}", target_module_id=target_module_id)


def _compose(data: bytes) -> Node:
    """The node tree of the one document in ``data``; its top must be a mapping."""
    if not _LIBYAML:
        raise _Refused("strict YAML loading needs PyYAML built with libyaml")
    parser = _StrictParser(data)
    try:
        node = parser.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise _Refused(f"YAML error{where}") from None
    except (yaml.YAMLError, ValueError, RecursionError):
        raise _Refused("YAML error") from None
    finally:
        parser.dispose()
    if not isinstance(node, MappingNode):
        raise _Refused("the top level is not a mapping")
    return node


def _value(node: Node, probe: str | None, depth: int) -> object:
    if probe is not None and probe[node.start_mark.index] in _PROPERTY_STARTS:
        raise _Refused("anchors, aliases and tags are not allowed", node)
    tag = node.tag
    if tag == _QUOTED:
        return node.value
    if tag == _PLAIN:
        value = node.value
        # Fast path: most plain scalars are words that are strings in every version.
        if value and value[0] not in NUMERIC_STARTS and value not in ALL_WORDS:
            return value
        return _plain(node)
    if tag == _MAP:
        return _mapping(node, probe, depth + 1)
    if tag == _SEQ:
        if depth + 1 > MAX_DEPTH:
            raise _Refused(f"nesting deeper than {MAX_DEPTH}", node)
        return [_value(item, probe, depth + 1) for item in node.value]
    raise _Refused("explicit tags are not allowed", node)


def _mapping(node: Node, probe: str | None, depth: int) -> dict[str, object]:
    if depth > MAX_DEPTH:
        raise _Refused(f"nesting deeper than {MAX_DEPTH}", node)
    result: dict[str, object] = {}
    for key_node, value_node in node.value:
        key = _value(key_node, probe, depth)
        if not isinstance(key, str):
            raise _Refused("mapping keys must be strings", key_node)
        if key in result:
            raise _Refused("duplicate key", key_node)
        result[key] = _value(value_node, probe, depth)
    return result


def _plain(node: Node) -> object:
    """Resolve a plain scalar, refusing what YAML 1.1 and 1.2 read differently."""
    try:
        return plain_value(node.value)
    except ScalarRefused as exc:
        raise _Refused(str(exc), node) from None
