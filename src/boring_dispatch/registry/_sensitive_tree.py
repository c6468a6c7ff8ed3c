"""Sensitive values, found by walking pydantic's core schema once at build time.

The core schema is what validation runs on: NewTypes, type aliases, generics
and forward references are resolved there, and every field carries the input
paths it is read from. A node is sensitive when the
:class:`~boring_dispatch.registry.schema.Sensitive` marker tagged it (the
:data:`MARK` metadata key) or it is one of pydantic's secret types. A
:class:`Walk` resolves one core schema's definitions and answers where the
sensitive values sit in its input; :func:`check_secret_types` fails closed
when this pydantic's secret types cannot be recognised at all.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

from boring_dispatch.errors import RegistryInvalid
from boring_dispatch.observe.redact import SensitiveNode

__all__ = ["MARK", "Walk", "check_secret_types"]

#: The core-schema metadata key the ``Sensitive`` marker sets.
MARK: Final = "boring_dispatch_sensitive"
_WHOLE: Final = SensitiveNode(whole=True)

#: A core-schema node (pydantic_core's TypedDicts, read as plain mappings).
_Node = Mapping[str, Any]

#: The members of a core-schema node that hold the schemas of its input.
_SCHEMA_KEYS: Final = (
    "schema",
    "items_schema",
    "keys_schema",
    "values_schema",
    "choices",
    "fields",
    "steps",
    "lax_schema",
    "strict_schema",
    "json_schema",
    "python_schema",
    "extras_schema",
    "extras_keys_schema",
    "definitions",
    "arguments_schema",
    "var_args_schema",
    "var_kwargs_schema",
)
#: Nodes whose input goes unchanged to their ``schema``.
_PASS_THROUGH: Final = frozenset(
    {
        "definitions",
        "nullable",
        "default",
        "function-after",
        "model",
        "dataclass",
        "custom-error",
        "model-field",
        "typed-dict-field",
        "dataclass-field",
    }
)
#: Nodes whose input is one of their alternatives.
_ALTERNATIVES: Final = frozenset({"union", "tagged-union", "lax-or-strict", "json-or-python"})
_ITEMS: Final = frozenset({"list", "set", "frozenset", "tuple", "generator"})
_OBJECTS: Final = frozenset({"model-fields", "typed-dict", "dataclass-args"})


@functools.cache
def _secret_types_found() -> bool:
    import pydantic

    for secret in (pydantic.SecretStr, pydantic.SecretBytes, pydantic.Secret[int]):
        core = pydantic.TypeAdapter(secret).core_schema
        found = Walk(core).tree(core)
        if found is None or not found.whole:
            return False
    return True


def check_secret_types() -> None:
    """Fail closed when this pydantic's secret types cannot be recognised in a core schema."""
    if not _secret_types_found():
        raise RegistryInvalid(
            "this pydantic version's secret types are not recognised; "
            "refusing to build a table that could not redact them"
        )


def _marked(node: _Node) -> bool:
    metadata = node.get("metadata")
    if isinstance(metadata, Mapping) and metadata.get(MARK) is True:
        return True
    # pydantic's SecretStr, SecretBytes and Secret[...] serialize through its secret masks.
    serializer = node.get("serialization")
    if isinstance(serializer, Mapping):
        function = serializer.get("function")
        module = getattr(function, "__module__", None)
        name = getattr(function, "__name__", "")
        return module == "pydantic.types" and "secret" in name
    return False


def _nodes(member: object) -> Iterator[_Node]:
    """The schema nodes inside one member of a node (a node, a dict of fields, a list)."""
    if isinstance(member, Mapping):
        if isinstance(member.get("type"), str):
            yield member
        else:
            for value in member.values():
                yield from _nodes(value)
    elif isinstance(member, list | tuple):
        for value in member:
            yield from _nodes(value)


def _paths(name: str, node: _Node) -> list[tuple[str | int, ...]]:
    """The input paths a field is read from: its name and every validation alias."""
    paths: list[tuple[str | int, ...]] = [(name,)]
    alias = node.get("validation_alias")
    if isinstance(alias, str):
        paths.append((alias,))
    elif isinstance(alias, list) and alias:
        if all(isinstance(choice, list) for choice in alias):
            paths.extend(tuple(choice) for choice in alias if choice)
        else:
            paths.append(tuple(alias))
    return paths


def _along(path: tuple[str | int, ...], child: SensitiveNode) -> tuple[str, SensitiveNode]:
    """The top-level key of ``path`` and the tree that leads from it to ``child``."""
    node = child
    for part in reversed(path[1:]):
        # An index (AliasPath("cards", 0)) marks every item: coarser, never weaker.
        node = (
            SensitiveNode(keys={part: node}) if isinstance(part, str) else SensitiveNode(items=node)
        )
    return str(path[0]), node


class Walk:
    """One core schema with its definitions resolved; answers sensitivity questions."""

    __slots__ = ("_holds", "_trees", "allows_extra", "refs")

    def __init__(self, root: _Node) -> None:
        self.refs: dict[str, _Node] = {}
        self.allows_extra = False
        self._holds: dict[int, bool] = {}
        self._trees: dict[int, SensitiveNode | None] = {}
        pending, seen = [root], set()
        while pending:
            node = pending.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            ref = node.get("ref")
            if isinstance(ref, str):
                self.refs.setdefault(ref, node)
            config = node.get("config")
            if node.get("extra_behavior") == "allow" or (
                isinstance(config, Mapping) and config.get("extra_fields_behavior") == "allow"
            ):
                self.allows_extra = True
            pending.extend(self._children(node, follow=False))

    def _children(self, node: _Node, *, follow: bool = True) -> Iterator[_Node]:
        for key in _SCHEMA_KEYS:
            yield from _nodes(node.get(key))
        if follow and node.get("type") == "definition-ref":
            yield self._target(node)

    def _target(self, node: _Node) -> _Node:
        name = node.get("schema_ref")
        target = self.refs.get(name) if isinstance(name, str) else None
        if target is None:
            # Fail closed: a reference this walk cannot follow could hide a secret.
            raise TypeError("a definition reference in the core schema cannot be resolved")
        return target

    def holds(self, node: _Node) -> bool:
        """Whether anything reachable from ``node`` is sensitive."""
        key = id(node)
        if key not in self._holds:
            found, pending, seen = False, [node], set()
            while pending and not found:
                current = pending.pop()
                if id(current) in seen:
                    continue
                seen.add(id(current))
                found = _marked(current)
                pending.extend(self._children(current))
            self._holds[key] = found
        return self._holds[key]

    def whole(self, node: _Node) -> bool:
        """Whether the value at ``node`` is sensitive as a whole."""
        key = id(node)
        if key not in self._trees:
            self._trees[key] = self.tree(node)
        found = self._trees[key]
        return found is not None and found.whole

    def tree(self, node: _Node, stack: frozenset[str] = frozenset()) -> SensitiveNode | None:
        """Where the sensitive values sit in the input ``node`` validates."""
        if _marked(node):
            return _WHOLE
        ref = node.get("ref")
        if isinstance(ref, str):
            stack = stack | {ref}
        kind = node.get("type")
        if kind in _PASS_THROUGH:
            return self.tree(node["schema"], stack)
        if kind in _ALTERNATIVES:
            return self._merged(self._children(node, follow=False), stack)
        shape = _SHAPES.get(kind)  # type: ignore[arg-type]
        if shape is not None:
            return shape(self, node, stack)
        # Validators that may reshape their input (before, wrap, plain), Json[...],
        # and anything else: the input is sensitive whole when a secret is below.
        return _WHOLE if self.holds(node) else None

    def _reference(self, node: _Node, stack: frozenset[str]) -> SensitiveNode | None:
        target = self._target(node)
        if node.get("schema_ref") in stack:  # a recursive type: its repetition is redacted whole
            return _WHOLE if self.holds(target) else None
        return self.tree(target, stack)

    def _items(self, node: _Node, stack: frozenset[str]) -> SensitiveNode | None:
        items = self._merged(_nodes(node.get("items_schema")), stack)
        return SensitiveNode(items=items) if items is not None else None

    def _mapping(self, node: _Node, stack: frozenset[str]) -> SensitiveNode | None:
        if self.holds(node["keys_schema"]):
            return _WHOLE  # sensitive keys: the mapping cannot be shown without them
        items = self.tree(node["values_schema"], stack)
        return SensitiveNode(items=items) if items is not None else None

    def _chain(self, node: _Node, stack: frozenset[str]) -> SensitiveNode | None:
        steps = node["steps"]
        if any(self.holds(step) for step in steps[1:]):
            return _WHOLE  # later steps see the output of earlier ones, not the input
        return self.tree(steps[0], stack)

    def _merged(self, nodes: Iterator[_Node], stack: frozenset[str]) -> SensitiveNode | None:
        merged: SensitiveNode | None = None
        for node in nodes:
            merged = _merge(merged, self.tree(node, stack))
        return merged

    def _object(self, node: _Node, stack: frozenset[str]) -> SensitiveNode | None:
        if any(self.holds(extra) for extra in self._extras_of(node)):
            return _WHOLE
        keys: dict[str, SensitiveNode] = {}
        for name, member in self._fields_of(node):
            child = self.tree(member, stack)
            if child is None:
                continue
            for path in _paths(name, member):
                head, below = _along(path, child)
                keys[head] = _merge(keys.get(head), below) or below
        return SensitiveNode(keys=keys) if keys else None

    @staticmethod
    def _fields_of(node: _Node) -> Iterator[tuple[str, _Node]]:
        fields = node.get("fields")
        if isinstance(fields, Mapping):
            yield from fields.items()
        elif isinstance(fields, list):  # dataclass-args
            yield from ((member["name"], member) for member in fields)

    @staticmethod
    def _extras_of(node: _Node) -> Iterator[_Node]:
        yield from _nodes(node.get("extras_schema"))
        yield from _nodes(node.get("extras_keys_schema"))

    def top_keys(self, node: _Node) -> frozenset[str]:
        """The top-level input keys of the arguments object."""
        while node.get("type") not in _OBJECTS:
            if node.get("type") == "definition-ref":
                node = self._target(node)
            elif isinstance(node.get("schema"), Mapping):
                node = node["schema"]
            else:
                return frozenset()
        return frozenset(
            str(path[0]) for name, member in self._fields_of(node) for path in _paths(name, member)
        )


#: How each kind of container node maps its input to the sensitive tree.
_SHAPES: Final[dict[str, Callable[[Walk, _Node, frozenset[str]], SensitiveNode | None]]] = {
    "definition-ref": Walk._reference,  # noqa: SLF001 - the walk's own dispatch table
    "dict": Walk._mapping,  # noqa: SLF001
    "chain": Walk._chain,  # noqa: SLF001
    **dict.fromkeys(_ITEMS, Walk._items),  # noqa: SLF001
    **dict.fromkeys(_OBJECTS, Walk._object),  # noqa: SLF001
}


def _merge(a: SensitiveNode | None, b: SensitiveNode | None) -> SensitiveNode | None:
    if a is None or b is None:
        return a or b
    if a.whole or b.whole:
        return _WHOLE
    keys = dict(a.keys)
    for key, child in b.keys.items():
        keys[key] = _merge(keys.get(key), child) or child
    return SensitiveNode(keys=keys, items=_merge(a.items, b.items))
