"""Argument schemas of Python tools: strict validators built once, at table construction.

A schema comes from the handler's signature (every parameter annotated, no
``*args``/``**kwargs``/positional-only) or from an explicit pydantic model
passed as ``Tool(..., args=Model)``. Validation is strict: ``"12"`` is not 12,
``1.0`` is not an int, ``true`` is not an int, and unknown arguments are
refused. The schema also says which fields are sensitive: ``SecretStr``,
``SecretBytes``, ``Secret[...]`` or ``Annotated[..., Sensitive]``, also inside
nested models, dataclasses, TypedDicts, lists and mappings.

pydantic is imported only by :func:`build_schema` (a Registry being built), so
that ``import boring_dispatch`` and the CLI's blueprint path never pay for it.
"""

from __future__ import annotations

import dataclasses
import inspect
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Final, final

from boring_dispatch.errors import InvalidArguments, RegistryInvalid
from boring_dispatch.observe.redact import SensitiveNode

if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError
    from pydantic.fields import FieldInfo

__all__ = ["ArgumentSchema", "Sensitive", "build_schema", "sensitive_node"]

_MESSAGE: Final = "arguments do not match the tool's schema"
_MAX_DETAILS: Final = 20
_MAX_PATH: Final = 200
_WHOLE: Final = SensitiveNode(whole=True)

#: A validator: raw arguments in, keyword arguments for the handler out.
Validator = Callable[[dict[str, object]], dict[str, object]]


@final
class Sensitive:
    """Marker for sensitive arguments: ``api_token: Annotated[str, Sensitive]``.

    The value is validated like any ``str`` and passed to the handler as is,
    but every record that leaves the call shows ``"[redacted]"`` instead.
    """


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


def build_schema(
    tool_name: str, handler: Callable[..., object], model: type[BaseModel] | None
) -> ArgumentSchema:
    """Build the strict validator, JSON Schema and sensitive tree of one tool.

    Raises:
        RegistryInvalid: a parameter is unannotated, variadic or positional-only;
            the handler is async; an annotation cannot be resolved or has no
            pydantic schema; an explicit model is not strict with
            ``extra="forbid"`` or does not fit the handler's signature.
    """
    # Lazy: pydantic costs ~70 ms to import, and only building a Registry needs it.
    import pydantic

    if inspect.iscoroutinefunction(handler):
        raise RegistryInvalid(f"tool {tool_name!r}: async handlers are not supported")
    signature = _signature(tool_name, handler)
    try:
        if model is None:
            return _from_signature(tool_name, signature)
        return _from_model(tool_name, signature, model)
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


def _from_signature(tool_name: str, signature: inspect.Signature) -> ArgumentSchema:
    import pydantic
    import typing_extensions

    fields: dict[str, object] = {}
    for parameter in signature.parameters.values():
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
    adapter: pydantic.TypeAdapter[dict[str, object]] = pydantic.TypeAdapter(typed_dict)
    json_schema = adapter.json_schema()
    keyed = {name: _node(annotation, frozenset()) for name, annotation in fields.items()}
    sensitive = SensitiveNode(keys={k: v for k, v in keyed.items() if v is not None})
    return ArgumentSchema(
        validate=_validator(adapter.validate_python, pydantic.ValidationError, to_kwargs=None),
        json_schema=json_schema,
        sensitive=sensitive if sensitive.keys else None,
        accepted=frozenset(fields),
        unknown=_extras(adapter.validate_python, pydantic.ValidationError),
    )


def _from_model(
    tool_name: str, signature: inspect.Signature, model: type[BaseModel]
) -> ArgumentSchema:
    import pydantic

    if not (isinstance(model, type) and issubclass(model, pydantic.BaseModel)):
        raise RegistryInvalid(f"tool {tool_name!r}: args must be a pydantic model class")
    config = model.model_config
    if config.get("strict") is not True or config.get("extra") != "forbid":
        raise RegistryInvalid(
            f"tool {tool_name!r}: args model must set ConfigDict(strict=True, extra='forbid')"
        )
    try:
        signature.bind(**dict.fromkeys(model.model_fields))
    except TypeError as error:
        raise RegistryInvalid(
            f"tool {tool_name!r}: the handler does not accept the model's fields: {error}"
        ) from error
    return ArgumentSchema(
        validate=_validator(model.model_validate, pydantic.ValidationError, to_kwargs=_fields),
        json_schema=model.model_json_schema(),
        sensitive=_node(model, frozenset()),
        accepted=frozenset(key for f in model.model_fields.items() for key in _keys(*f)),
        unknown=_extras(model.model_validate, pydantic.ValidationError),
    )


def _fields(instance: object) -> dict[str, object]:
    # A pydantic model keeps its validated fields (by field name) in __dict__.
    return dict(instance.__dict__)


def _validator(
    validate_python: Callable[[object], object],
    validation_error: type[ValidationError],
    to_kwargs: Callable[[object], dict[str, object]] | None,
) -> Validator:
    def validate(args: dict[str, object]) -> dict[str, object]:
        try:
            validated = validate_python(args)
        except validation_error as error:
            # ``from None``: the pydantic error holds the input values.
            raise InvalidArguments(_MESSAGE, _details(error)) from None
        if to_kwargs is None:
            return validated  # type: ignore[return-value]
        return to_kwargs(validated)

    return validate


def _extras(
    validate_python: Callable[[object], object], validation_error: type[ValidationError]
) -> Callable[[dict[str, object]], tuple[tuple[str | int, ...], ...]]:
    """For audit records of refused calls: where the members the schema does not know are."""

    def unknown(args: dict[str, object]) -> tuple[tuple[str | int, ...], ...]:
        try:
            validate_python(args)
        except validation_error as error:
            found = error.errors(include_url=False, include_context=False, include_input=False)
            return tuple(tuple(item["loc"]) for item in found if item["type"] == "extra_forbidden")
        return ()

    return unknown


def _details(error: ValidationError) -> tuple[tuple[str, str], ...]:
    details = []
    for item in error.errors(include_url=False, include_context=False)[:_MAX_DETAILS]:
        path = ".".join(str(part) for part in item["loc"])[:_MAX_PATH]
        details.append((path, _reason(item["type"], item["msg"], item.get("input"))))
    return tuple(details)


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
# Sensitive fields, found by walking the types once at build time.


def sensitive_node(annotation: object) -> SensitiveNode | None:
    """Where the sensitive values sit inside a value of type ``annotation`` (``None``: nowhere).

    A recursive model that holds a secret anywhere is redacted whole from the
    first repetition on (fail closed); the tree itself stays finite.
    """
    return _node(annotation, frozenset())


@dataclass(slots=True)
class _Shape:
    """One level of a type: sensitive as a whole, or members/items to look into."""

    whole: bool = False
    keys: list[tuple[str, object]] = field(default_factory=list)
    items: list[object] = field(default_factory=list)
    classes: list[type] = field(default_factory=list)


def _node(annotation: object, stack: frozenset[type]) -> SensitiveNode | None:
    shape = _Shape()
    _expand(annotation, shape)
    if shape.whole:
        return _WHOLE
    if any(cls in stack for cls in shape.classes):
        return _WHOLE if _holds_secret(annotation, set()) else None
    inner = stack | frozenset(shape.classes)
    keys: dict[str, SensitiveNode] = {}
    for key, member in shape.keys:
        found = _merge(keys.get(key), _node(member, inner))
        if found is not None:
            keys[key] = found
    items: SensitiveNode | None = None
    for item in shape.items:
        items = _merge(items, _node(item, inner))
    return SensitiveNode(keys=keys, items=items) if keys or items else None


def _holds_secret(annotation: object, seen: set[int]) -> bool:
    if id(annotation) in seen:
        return False
    seen.add(id(annotation))
    shape = _Shape()
    _expand(annotation, shape)
    members = [member for _, member in shape.keys] + shape.items
    return shape.whole or any(_holds_secret(member, seen) for member in members)


def _merge(a: SensitiveNode | None, b: SensitiveNode | None) -> SensitiveNode | None:
    if a is None or b is None:
        return a or b
    if a.whole or b.whole:
        return _WHOLE
    keys = dict(a.keys)
    for key, child in b.keys.items():
        keys[key] = _merge(keys.get(key), child) or child
    return SensitiveNode(keys=keys, items=_merge(a.items, b.items))


def _expand(annotation: object, shape: _Shape) -> None:
    import pydantic

    annotation, marked = _strip(annotation)
    origin = typing.get_origin(annotation)
    if marked or _is_secret(annotation) or _is_secret(origin):
        shape.whole = True
    elif origin in (typing.Union, types.UnionType):
        for alternative in typing.get_args(annotation):
            _expand(alternative, shape)
    elif isinstance(origin, type) and issubclass(origin, Mapping):
        shape.items.extend(typing.get_args(annotation)[1:2])
    elif isinstance(origin, type) and issubclass(origin, (tuple, list, AbstractSet, Sequence)):
        shape.items.extend(a for a in typing.get_args(annotation) if a is not Ellipsis)
    elif isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        shape.classes.append(annotation)
        for name, info in annotation.model_fields.items():
            member: object = info.annotation
            if any(_is_marker(meta) for meta in info.metadata):
                member = Annotated[member, Sensitive]
            shape.keys.extend((key, member) for key in _keys(name, info))
    elif isinstance(annotation, type) and (
        dataclasses.is_dataclass(annotation) or _is_typeddict(annotation)
    ):
        shape.classes.append(annotation)
        shape.keys.extend(typing.get_type_hints(annotation, include_extras=True).items())


def _strip(annotation: object) -> tuple[object, bool]:
    """Remove ``Annotated`` and ``Required``-style wrappers; report a Sensitive marker."""
    marked = False
    while True:
        origin = typing.get_origin(annotation)
        if origin is Annotated:
            marked = marked or any(_is_marker(meta) for meta in annotation.__metadata__)  # type: ignore[attr-defined]
            annotation = annotation.__origin__  # type: ignore[attr-defined]
        elif origin is not None and origin in _wrappers():
            annotation = typing.get_args(annotation)[0]
        else:
            return annotation, marked


def _wrappers() -> tuple[object, ...]:
    import typing_extensions

    return (
        typing.Required,
        typing.NotRequired,
        typing_extensions.Required,
        typing_extensions.NotRequired,
        typing_extensions.ReadOnly,
    )


def _is_marker(meta: object) -> bool:
    return meta is Sensitive or isinstance(meta, Sensitive)


def _is_secret(annotation: object) -> bool:
    import pydantic

    secrets = (pydantic.SecretStr, pydantic.SecretBytes, pydantic.Secret)
    return isinstance(annotation, type) and issubclass(annotation, secrets)


def _is_typeddict(annotation: type) -> bool:
    import typing_extensions

    return typing_extensions.is_typeddict(annotation)


def _keys(name: str, info: FieldInfo) -> tuple[str, ...]:
    """The input keys a model field is validated from: name, alias, validation alias(es)."""
    import pydantic

    keys = {name}
    for alias in (info.alias, info.validation_alias):
        if isinstance(alias, str):
            keys.add(alias)
        elif isinstance(alias, pydantic.AliasChoices):
            keys.update(choice for choice in alias.choices if isinstance(choice, str))
    return tuple(sorted(keys))
