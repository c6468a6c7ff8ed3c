"""Argument schemas of Python tools: strict validators built once, at table construction.

A schema comes from the handler's signature (every parameter annotated, no
``*args``/``**kwargs``/positional-only) or from an explicit pydantic model
passed as ``Tool(..., args=Model)``. Arguments are JSON data on every surface
(``dispatch``, ``dispatch_json``, MCP, replay) and are validated as JSON, in
pydantic's strict JSON mode, at every depth: ``"12"`` is not 12, ``1.0`` is
not an int, ``true`` is not an int, ``"2024-05-01"`` is a date, ``[1, 2]`` is
a tuple or a set, and unknown members are refused in nested models,
dataclasses and TypedDicts too. Parameters fixed with ``functools.partial``
are not parameters: they are left out of the schema and refused as unknown.

The schema also says which values are sensitive: ``SecretStr``,
``SecretBytes``, ``Secret[...]`` or ``Annotated[..., Sensitive]``, however the
type is spelled (``NewType``, type aliases, unions, generics) and at whatever
input path pydantic reads it from (aliases, ``AliasPath``, ``AliasChoices``).
The sensitive tree is read off pydantic's own core schema, so it follows the
same paths the validator does. The published JSON Schema marks sensitive
values ``writeOnly`` and never carries a default or an example above one.

pydantic is imported only by :func:`build_schema` (a Registry being built), so
that ``import boring_dispatch`` and the CLI's blueprint path never pay for it.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Final, cast, final

from boring_dispatch.errors import InvalidArguments, RegistryInvalid
from boring_dispatch.observe.redact import PLACEHOLDER, SensitiveNode
from boring_dispatch.registry import injected as _injected

if TYPE_CHECKING:
    from pydantic import BaseModel, GetCoreSchemaHandler, TypeAdapter, ValidationError
    from pydantic.json_schema import GenerateJsonSchema
    from pydantic_core import CoreSchema

__all__ = ["ArgumentSchema", "Sensitive", "build_schema", "sensitive_node"]

_MESSAGE: Final = "arguments do not match the tool's schema"
_MAX_DETAILS: Final = 20
_MAX_PATH: Final = 200
_WHOLE: Final = SensitiveNode(whole=True)
#: The core-schema metadata key the :class:`Sensitive` marker sets.
_MARK: Final = "boring_dispatch_sensitive"
#: Python arguments deeper than this, or with more values, are not taken for JSON data.
_MAX_NESTING: Final = 128
_MAX_VALUES: Final = 1 << 20
#: pydantic error types that name a member the schema does not know.
_EXTRA_TYPES: Final = frozenset({"extra_forbidden", "unexpected_keyword_argument"})
#: Value types a flat call (the common case) may hold, checked without a walk.
_FLAT: Final = frozenset({str, int, bool, type(None)})

#: A validator: raw arguments in, keyword arguments for the handler out.
Validator = Callable[[dict[str, object]], dict[str, object]]
#: A core-schema node (pydantic_core's TypedDicts, read as plain mappings).
_Node = Mapping[str, Any]
#: A location in the arguments: keys and indexes.
_Loc = tuple[str | int, ...]


@final
class Sensitive:
    """Marker for sensitive arguments: ``api_token: Annotated[str, Sensitive]``.

    The value is validated like any ``str`` and passed to the handler as is,
    but every record that leaves the call shows ``"[redacted]"`` instead, and
    the published schema marks it ``writeOnly`` without a default.
    """

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: object, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        from pydantic_core import core_schema

        inner = handler(source)
        if "ref" in inner:
            # A definition may be shared with unmarked uses: mark a reference to it instead.
            reference = core_schema.definition_reference_schema(
                inner["ref"], metadata={_MARK: True}
            )
            return core_schema.definitions_schema(reference, [inner])
        marked = dict(inner)
        marked["metadata"] = {**(inner.get("metadata") or {}), _MARK: True}
        return cast("CoreSchema", marked)


@final
@dataclass(frozen=True, slots=True)
class ArgumentSchema:
    """Everything the pipeline needs to know about one tool's arguments."""

    #: Raises :class:`~boring_dispatch.errors.InvalidArguments` or returns handler kwargs.
    validate: Validator
    #: The JSON Schema of the arguments object (a private copy; callers copy again).
    json_schema: Mapping[str, object]
    #: Where the sensitive values sit; ``None`` when there are none.
    sensitive: SensitiveNode | None
    #: The top-level argument names the schema accepts.
    accepted: frozenset[str] = field(default_factory=frozenset)
    #: Re-validates refused arguments and returns the paths of the extra members.
    unknown: Callable[[dict[str, object]], tuple[tuple[str | int, ...], ...]] = lambda _: ()
    #: The handler's own defaults of optional parameters (signature-derived schemas only):
    #: what a call that leaves them out gets, for the canonical arguments of a fixture.
    defaults: Mapping[str, object] = field(default_factory=dict)
    #: The parameters the caller supplies (``Injected``): never in ``json_schema``.
    injected: _injected.InjectedNames = field(default_factory=_injected.InjectedNames)


def build_schema(
    tool_name: str, handler: Callable[..., object], model: type[BaseModel] | None
) -> ArgumentSchema:
    """Build the strict validator, JSON Schema and sensitive tree of one tool.

    Raises:
        RegistryInvalid: a parameter is unannotated, variadic or positional-only;
            the handler is async; an annotation cannot be resolved or has no
            pydantic schema; an explicit model is not strict with
            ``extra="forbid"``, does not fit the handler's signature or has a
            field the handler's ``functools.partial`` fixes; a nested model
            sets ``extra="allow"``.
    """
    # Lazy: pydantic costs ~70 ms to import, and only building a Registry needs it.
    import pydantic

    if inspect.iscoroutinefunction(handler):
        raise RegistryInvalid(f"tool {tool_name!r}: async handlers are not supported")
    _check_secret_types()
    signature = _signature(tool_name, handler)
    bound = _bound_keywords(handler)
    try:
        if model is None:
            adapter = _from_signature(tool_name, signature, bound)
            defaults = {
                p.name: p.default
                for p in signature.parameters.values()
                if p.default is not p.empty and p.name not in bound
            }
            to_kwargs = None
        else:
            adapter = _from_model(tool_name, signature, bound, model)
            to_kwargs = _fields
            defaults = {}
        injected = _injected.find_injected(tool_name, signature, bound, model)
        _injected.check_markers(tool_name, adapter.core_schema, injected)
        schema = _schema(tool_name, adapter, to_kwargs, injected)
        # What the model leaves out gets these: injected values are the caller's, not defaults.
        defaults = {k: v for k, v in defaults.items() if k not in injected.names}
        return replace(schema, defaults=defaults) if defaults else schema
    except (
        pydantic.PydanticUserError,
        pydantic.PydanticSchemaGenerationError,
        NameError,
        TypeError,
    ) as error:
        raise RegistryInvalid(f"tool {tool_name!r}: schema does not build: {error}") from error


def _signature(tool_name: str, handler: Callable[..., object]) -> inspect.Signature:
    try:
        # eval_str resolves the handler's own string annotations (build time, trusted code).
        return inspect.signature(handler, eval_str=True)
    except (NameError, TypeError, ValueError, SyntaxError) as error:
        raise RegistryInvalid(f"tool {tool_name!r}: cannot read the signature: {error}") from error


def _bound_keywords(handler: Callable[..., object]) -> frozenset[str]:
    """The keywords ``functools.partial``/``partialmethod`` fix, at any nesting.

    ``inspect.signature`` shows them as optional parameters with a default,
    which the model could override; they are the operator's, not the model's.
    Bound positionals are already gone from the signature.
    """
    names: set[str] = set()
    current: object = handler
    while True:
        if isinstance(current, functools.partial):
            names.update(current.keywords)
            current = current.func
            continue
        # An unbound partialmethod (``Class.method``) keeps its descriptor here.
        method = getattr(current, "__partialmethod__", None) or getattr(
            current, "_partialmethod", None
        )
        if isinstance(method, functools.partialmethod):
            names.update(method.keywords)
            current = method.func
            continue
        return frozenset(names)


def _from_signature(
    tool_name: str, signature: inspect.Signature, bound: frozenset[str]
) -> TypeAdapter[Any]:
    import pydantic
    import typing_extensions

    fields: dict[str, object] = {}
    for parameter in signature.parameters.values():
        if parameter.name in bound:
            continue
        if parameter.kind not in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY):
            raise RegistryInvalid(
                f"tool {tool_name!r}: parameter {parameter.name!r} must be passable by keyword"
            )
        if parameter.annotation is parameter.empty:
            raise RegistryInvalid(f"tool {tool_name!r}: parameter {parameter.name!r} has no type")
        annotation = parameter.annotation
        if parameter.default is not parameter.empty:
            annotation = typing_extensions.NotRequired[annotation]
        fields[parameter.name] = annotation
    # A TypedDict validates straight into the kwargs dict, accepts any parameter
    # name (even ``json`` or ``model_config``) and is about 3x faster than a model.
    factory: Callable[..., type] = typing_extensions.TypedDict  # type: ignore[assignment]
    strict = pydantic.with_config(pydantic.ConfigDict(strict=True, extra="forbid"))
    typed_dict = strict(factory(f"{tool_name}_args", fields))
    return pydantic.TypeAdapter[Any](typed_dict)


def _from_model(
    tool_name: str, signature: inspect.Signature, bound: frozenset[str], model: type[BaseModel]
) -> TypeAdapter[Any]:
    import pydantic

    if not (isinstance(model, type) and issubclass(model, pydantic.BaseModel)):
        raise RegistryInvalid(f"tool {tool_name!r}: args must be a pydantic model class")
    config = model.model_config
    if config.get("strict") is not True or config.get("extra") != "forbid":
        raise RegistryInvalid(
            f"tool {tool_name!r}: args model must set ConfigDict(strict=True, extra='forbid')"
        )
    fixed = sorted(bound & set(model.model_fields))
    if fixed:
        raise RegistryInvalid(
            f"tool {tool_name!r}: the handler's functools.partial fixes {fixed}; "
            "a fixed argument cannot be a field of the args model"
        )
    try:
        signature.bind(**dict.fromkeys(model.model_fields))
    except TypeError as error:
        raise RegistryInvalid(
            f"tool {tool_name!r}: the handler does not accept the model's fields: {error}"
        ) from error
    return pydantic.TypeAdapter[Any](model)


def _fields(instance: object) -> dict[str, object]:
    # A pydantic model keeps its validated fields (by field name) in __dict__.
    return dict(instance.__dict__)


def _schema(
    tool_name: str,
    adapter: TypeAdapter[Any],
    to_kwargs: Callable[[object], dict[str, object]] | None,
    injected: _injected.InjectedNames,
) -> ArgumentSchema:
    import pydantic

    walk = _Walk(adapter.core_schema)
    if walk.allows_extra:
        raise RegistryInvalid(
            f"tool {tool_name!r}: a model in the arguments sets extra='allow'; "
            "arguments refuse unknown members at every depth"
        )
    sensitive = walk.tree(adapter.core_schema)
    json_schema = adapter.json_schema(schema_generator=_generator(walk))
    _drop_examples_of_secrets(json_schema)
    json_schema = _injected.strip_injected(json_schema, injected)
    # The core validator itself (TypeAdapter.validator): its wrapper costs a microsecond a call.
    validate_json = functools.partial(adapter.validator.validate_json, strict=True, extra="forbid")
    return ArgumentSchema(
        validate=_validator(validate_json, pydantic.ValidationError, to_kwargs, sensitive),
        json_schema=json_schema,
        sensitive=sensitive,
        accepted=walk.top_keys(adapter.core_schema),
        unknown=_extras(validate_json, pydantic.ValidationError),
        injected=injected,
    )


# --------------------------------------------------------------------------- #
# Validation: arguments are JSON data, validated in strict JSON mode.


def _validator(
    validate_json: Callable[[bytes], object],
    validation_error: type[ValidationError],
    to_kwargs: Callable[[object], dict[str, object]] | None,
    sensitive: SensitiveNode | None,
) -> Validator:
    from pydantic_core import to_json

    def validate(args: dict[str, object]) -> dict[str, object]:
        text = _json_text(args, sensitive, to_json)
        try:
            validated = validate_json(text)
        except validation_error as error:
            # ``from None``: the pydantic error holds the input values.
            raise InvalidArguments(_MESSAGE, _details(error, sensitive)) from None
        if to_kwargs is None:
            return validated  # type: ignore[return-value]
        return to_kwargs(validated)

    return validate


def _json_text(
    args: dict[str, object],
    sensitive: SensitiveNode | None,
    encode: Callable[[object], bytes],
) -> bytes:
    """``args`` as JSON text, or :class:`InvalidArguments` when they are not JSON data.

    A Python caller's arguments get exactly the treatment ``dispatch_json``
    gives the same call written as JSON: objects with string keys, arrays
    (lists or tuples), strings, finite numbers, booleans and null. A ``date``,
    ``UUID`` or set is not JSON data: pass its JSON form (``"2024-05-01"``).
    ``encode`` is ``pydantic_core.to_json``, given once the data is known to be JSON.
    """
    problem = None if _flat(args) else _not_json(args)
    if problem is None:
        try:
            return encode(args)
        except ValueError:  # e.g. a lone surrogate, which no JSON text can carry
            problem = ((), "not JSON data: cannot be written as JSON")
    loc, reason = problem
    raise InvalidArguments(_MESSAGE, (_detail(loc, "not_json", reason, sensitive),))


def _flat(args: dict[str, object]) -> bool:
    """The common case, checked fast: string keys, and values that are plain scalars."""
    for key, value in args.items():
        if type(key) is not str:
            return False
        if type(value) not in _FLAT and not (type(value) is float and math.isfinite(value)):
            return False
    return True


def _not_json(args: object) -> tuple[_Loc, str] | None:
    """Where ``args`` stops being JSON data, and why (``None``: it is JSON data).

    Depth and size are bounded, which also stops a cycle in Python input.
    """
    pending: list[tuple[object, _Loc]] = [(args, ())]
    budget = _MAX_VALUES
    while pending:
        value, loc = pending.pop()
        budget -= 1
        if budget < 0:
            return (), "not JSON data: too many values"
        problem = _not_json_here(value, loc)
        if problem is not None:
            return problem
        if isinstance(value, dict):
            pending.extend((value[key], (*loc, key)) for key in reversed(value))
        elif isinstance(value, list | tuple):
            pending.extend((value[i], (*loc, i)) for i in reversed(range(len(value))))
    return None


def _not_json_here(value: object, loc: _Loc) -> tuple[_Loc, str] | None:
    if value is None or isinstance(value, str | bool | int):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else (loc, "not JSON data: a non-finite number")
    if not isinstance(value, dict | list | tuple):
        return loc, f"not JSON data: {type(value).__name__}"
    if len(loc) >= _MAX_NESTING:
        return loc, "not JSON data: nested too deeply"
    if isinstance(value, dict) and not all(isinstance(key, str) for key in value):
        return loc, "not JSON data: an object key is not a string"
    return None


def _extras(
    validate_json: Callable[[bytes], object], validation_error: type[ValidationError]
) -> Callable[[dict[str, object]], tuple[tuple[str | int, ...], ...]]:
    """For audit records of refused calls: where the members the schema does not know are."""
    from pydantic_core import to_json

    def unknown(args: dict[str, object]) -> tuple[tuple[str | int, ...], ...]:
        try:
            validate_json(_json_text(args, None, to_json))
        except InvalidArguments:
            return ()  # not JSON data: the sensitive tree alone redacts the record
        except validation_error as error:
            found = error.errors(include_url=False, include_context=False, include_input=False)
            return tuple(tuple(item["loc"]) for item in found if item["type"] in _EXTRA_TYPES)
        return ()

    return unknown


def _details(
    error: ValidationError, sensitive: SensitiveNode | None
) -> tuple[tuple[str, str], ...]:
    details = []
    for item in error.errors(include_url=False, include_context=False)[:_MAX_DETAILS]:
        reason = _reason(item["type"], item["msg"], item.get("input"))
        details.append(_detail(item["loc"], item["type"], reason, sensitive))
    return tuple(details)


def _detail(
    loc: tuple[str | int, ...], kind: str, reason: str, sensitive: SensitiveNode | None
) -> tuple[str, str]:
    """One ``(path, reason)``: inside a sensitive value only the error type, and no keys."""
    path, inside = _shown_path(loc, sensitive)
    return path[:_MAX_PATH], kind if inside else reason


def _shown_path(loc: tuple[str | int, ...], node: SensitiveNode | None) -> tuple[str, bool]:
    """The path as text, cut at the first sensitive place; and whether it reaches one.

    A location may hold a union's choice label (``str``, ``Card``) as well as
    keys and indexes, so every reading of each step is followed: a place is
    sensitive when any reading makes it so (over-redaction, never under).
    """
    parts: list[str] = []
    places = [node] if node is not None else []
    for part in loc:
        if any(place.whole for place in places):
            parts.append(PLACEHOLDER)
            return ".".join(parts), True
        parts.append(str(part))
        following: dict[int, SensitiveNode] = {}
        for place in places:
            if isinstance(part, str):
                child = place.keys.get(part)
                if child is not None:
                    following[id(child)] = child
                following[id(place)] = place  # the part may be a union's choice label
            if place.items is not None:
                following[id(place.items)] = place.items
        places = list(following.values())
    return ".".join(parts), any(place.whole for place in places)


def _reason(kind: str, message: str, submitted: object) -> str:
    """pydantic's message, unless it quotes the submitted value (then only the error type)."""
    if isinstance(submitted, str | bytes | int | float) and not isinstance(submitted, bool):
        text = (
            submitted.decode("utf-8", "replace") if isinstance(submitted, bytes) else str(submitted)
        )
        if len(text) >= 4 and text in message:
            return kind
    return message


# --------------------------------------------------------------------------- #
# Sensitive values, found by walking pydantic's core schema once at build time.
#
# The core schema is what validation runs on: NewTypes, type aliases, generics
# and forward references are resolved there, and every field carries the input
# paths it is read from. A node is sensitive when the Sensitive marker tagged
# it or it is one of pydantic's secret types.

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


def sensitive_node(annotation: object) -> SensitiveNode | None:
    """Where the sensitive values sit inside a value of type ``annotation`` (``None``: nowhere).

    A recursive model that holds a secret anywhere is redacted whole from the
    first repetition on (fail closed); the tree itself stays finite.
    """
    import pydantic

    core = pydantic.TypeAdapter(cast("Any", annotation)).core_schema
    return _Walk(core).tree(core)


@functools.cache
def _secret_types_found() -> bool:
    import pydantic

    for secret in (pydantic.SecretStr, pydantic.SecretBytes, pydantic.Secret[int]):
        core = pydantic.TypeAdapter(secret).core_schema
        found = _Walk(core).tree(core)
        if found is None or not found.whole:
            return False
    return True


def _check_secret_types() -> None:
    """Fail closed when this pydantic's secret types cannot be recognised in a core schema."""
    if not _secret_types_found():
        raise RegistryInvalid(
            "this pydantic version's secret types are not recognised; "
            "refusing to build a table that could not redact them"
        )


def _marked(node: _Node) -> bool:
    metadata = node.get("metadata")
    if isinstance(metadata, Mapping) and metadata.get(_MARK) is True:
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


class _Walk:
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
_SHAPES: Final[dict[str, Callable[[_Walk, _Node, frozenset[str]], SensitiveNode | None]]] = {
    "definition-ref": _Walk._reference,  # noqa: SLF001 - the walk's own dispatch table
    "dict": _Walk._mapping,  # noqa: SLF001
    "chain": _Walk._chain,  # noqa: SLF001
    **dict.fromkeys(_ITEMS, _Walk._items),  # noqa: SLF001
    **dict.fromkeys(_OBJECTS, _Walk._object),  # noqa: SLF001
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


# --------------------------------------------------------------------------- #
# The published JSON Schema: sensitive places are writeOnly and carry no
# default or example; every object schema is closed, as validation is.


def _generator(walk: _Walk) -> type[GenerateJsonSchema]:
    from pydantic.json_schema import GenerateJsonSchema

    class _Publish(GenerateJsonSchema):
        def generate_inner(self, schema: Any) -> Any:  # noqa: ANN401 - pydantic's own types
            produced = super().generate_inner(schema)
            if isinstance(schema.get("type"), str) and walk.whole(schema):
                produced = {**produced, "writeOnly": True}
            return produced

        def default_schema(self, schema: Any) -> Any:  # noqa: ANN401
            if walk.holds(schema["schema"]):
                # The default is not even serialized: it may be (or hold) the secret.
                return self.generate_inner(schema["schema"])
            return super().default_schema(schema)

        def typed_dict_schema(self, schema: Any) -> Any:  # noqa: ANN401
            return {**super().typed_dict_schema(schema), "additionalProperties": False}

        def model_fields_schema(self, schema: Any) -> Any:  # noqa: ANN401
            return {**super().model_fields_schema(schema), "additionalProperties": False}

        def dataclass_args_schema(self, schema: Any) -> Any:  # noqa: ANN401
            return {**super().dataclass_args_schema(schema), "additionalProperties": False}

    return _Publish


#: JSON Schema keywords whose value is a subschema, a list of them, or a name -> subschema map.
_ONE_SCHEMA: Final = (
    "items",
    "additionalProperties",
    "not",
    "propertyNames",
    "contains",
    "if",
    "then",
    "else",
    "unevaluatedProperties",
    "unevaluatedItems",
)
_SCHEMA_LISTS: Final = ("anyOf", "oneOf", "allOf", "prefixItems", "items")
_SCHEMA_MAPS: Final = (
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
)
#: Keywords that publish values: never above a writeOnly place.
_VALUE_KEYWORDS: Final = ("default", "examples", "example")


def _subschemas(schema: Mapping[str, object]) -> Iterator[dict[str, Any]]:
    for key in _ONE_SCHEMA:
        value = schema.get(key)
        if isinstance(value, dict):
            yield value
    for key in _SCHEMA_LISTS:
        value = schema.get(key)
        if isinstance(value, list):
            yield from (item for item in value if isinstance(item, dict))
    for key in _SCHEMA_MAPS:
        value = schema.get(key)
        if isinstance(value, dict):
            yield from (item for item in value.values() if isinstance(item, dict))


def _drop_examples_of_secrets(root: dict[str, Any]) -> None:
    """Remove ``default``/``examples`` from every schema with a ``writeOnly`` place in it.

    A default or an example there would publish the secret (or a part of it)
    to every client that lists the tools.
    """
    definitions = root.get("$defs")
    defs = definitions if isinstance(definitions, dict) else {}
    memo: dict[int, bool] = {}

    def secret(schema: dict[str, Any], active: frozenset[int]) -> bool:
        key = id(schema)
        if key in memo:
            return memo[key]
        if key in active:
            return False  # a cycle: the other members decide
        active = active | {key}
        found = schema.get("writeOnly") is True
        reference = schema.get("$ref")
        if not found and isinstance(reference, str):
            target = defs.get(reference.removeprefix("#/$defs/"))
            # A reference this function cannot follow counts as secret (fail closed).
            found = not isinstance(target, dict) or secret(target, active)
        found = found or any(secret(sub, active) for sub in _subschemas(schema))
        if not active - {key}:
            memo[key] = found
        return found

    pending, seen = [root], set()
    while pending:
        schema = pending.pop()
        if id(schema) in seen:
            continue
        seen.add(id(schema))
        if any(keyword in schema for keyword in _VALUE_KEYWORDS) and secret(schema, frozenset()):
            for keyword in _VALUE_KEYWORDS:
                schema.pop(keyword, None)
        pending.extend(_subschemas(schema))
