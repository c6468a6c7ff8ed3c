"""The libyaml side of strict blueprint YAML: every refusal listed in :mod:`.load` is made here.

Imported only when :mod:`._fast` declines a document, so a dry run whose
blueprints are all in the plain block subset never imports PyYAML.

libyaml (through PyYAML's C parser) composes the node tree; this module turns
it into plain data. Why not a second pass over events: converting nodes costs a
fraction of what PyYAML's own constructor costs, and libyaml cannot be asked to
skip the Python node objects, so the checks ride along in the one conversion
walk. Anchors and tags leave no trace on a node except its start position,
which points at the ``&`` or ``!`` of the property (a plain scalar cannot start
with either character), so the walk looks there.
"""

from __future__ import annotations

from typing import Final

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from boring_dispatch.errors import BlueprintMalformed
from boring_dispatch.repository.strict_yaml._rules import (
    ALL_WORDS,
    MAX_DEPTH,
    NUMERIC_STARTS,
    ScalarRefused,
    plain_value,
)

__all__ = ["LIBYAML", "load_libyaml"]

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
LIBYAML = bool(getattr(yaml, "__with_libyaml__", False))

if LIBYAML:
    from yaml._yaml import CParser

    class _StrictParser(CParser):
        """libyaml's composer with a resolver that only records how a node was written."""

        def resolve(self, kind: type[Node], _value: object, implicit: tuple[bool, bool]) -> str:
            if kind is ScalarNode:
                return _PLAIN if implicit[0] else _QUOTED
            return _SEQ if kind is SequenceNode else _MAP

        def descend_resolver(self, _node: object, _index: object) -> None:
            pass

        def ascend_resolver(self) -> None:
            pass


def load_libyaml(data: bytes, text: str, what: str, target_module_id: str) -> dict[str, object]:
    # A trailing space keeps the property probe in range for an empty last node.
    probe = text + " " if ("!" in text or "&" in text) else None
    try:
        return _mapping(_compose(data), probe, 1)
    except _Refused as exc:
        raise BlueprintMalformed(
            f"{what}: {exc.reason}", target_module_id=target_module_id
        ) from None


def _compose(data: bytes) -> Node:
    """The node tree of the one document in ``data``; its top must be a mapping."""
    if not LIBYAML:
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
