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
This module builds the schema; its parts live in private modules:
:mod:`._sensitive_tree` (the walk of the core schema),
:mod:`._published` (the JSON Schema clients see) and :mod:`._invalid`
(arguments that are not JSON data, and the details of a refusal).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, cast, final

from boring_dispatch.errors import InvalidArguments, RegistryInvalid, TableError
from boring_dispatch.observe.redact import SensitiveNode, sensitive_values
from boring_dispatch.registry import _invalid, _published
from boring_dispatch.registry import injected as _injected
from boring_dispatch.registry._literal_types import exact_literals
from boring_dispatch.registry._sensitive_tree import MARK, Walk, check_secret_types

if TYPE_CHECKING:
    from pydantic import BaseModel, GetCoreSchemaHandler, TypeAdapter, ValidationError
    from pydantic_core import CoreSchema, SchemaValidator

__all__ = ["ArgumentSchema", "Sensitive", "build_schema", "sensitive_node"]

#: A validator: raw arguments in, keyword arguments for the handler out.
Validator = Callable[[dict[str, object]], dict[str, object]]


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
            reference = core_schema.definition_reference_schema(inner["ref"], metadata={MARK: True})
            return core_schema.definitions_schema(reference, [inner])
        marked = dict(inner)
        marked["metadata"] = {**(inner.get("metadata") or {}), MARK: True}
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
    check_secret_types()
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

    walk = Walk(adapter.core_schema)
    if walk.allows_extra:
        raise RegistryInvalid(
            f"tool {tool_name!r}: a model in the arguments sets extra='allow'; "
            "arguments refuse unknown members at every depth"
        )
    sensitive = walk.tree(adapter.core_schema)
    json_schema = adapter.json_schema(schema_generator=_published.generator(walk))
    _published.drop_examples_of_secrets(json_schema)
    json_schema = _injected.strip_injected(json_schema, injected)
    # The core validator itself (TypeAdapter.validator): its wrapper costs a microsecond a call.
    validate_json = functools.partial(
        _core_validator(adapter).validate_json, strict=True, extra="forbid"
    )
    return ArgumentSchema(
        validate=_validator(validate_json, pydantic.ValidationError, to_kwargs, sensitive),
        json_schema=json_schema,
        sensitive=sensitive,
        accepted=walk.top_keys(adapter.core_schema),
        unknown=_invalid.extras(validate_json, pydantic.ValidationError),
        injected=injected,
    )


def _core_validator(adapter: TypeAdapter[Any]) -> SchemaValidator:
    """The adapter's core validator; with Literal and Enum values checked for their JSON types."""
    core = exact_literals(dict(adapter.core_schema))
    if core is None:
        return adapter.validator  # type: ignore[return-value]
    from pydantic_core import SchemaValidator as _SchemaValidator

    # Nested models would reuse their own (unchecked) validators: build them again here.
    return _SchemaValidator(core, _use_prebuilt=False)


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
        text = _invalid.json_text(args, sensitive, to_json)
        try:
            validated = validate_json(text)
        except validation_error as error:
            # ``from None``: the pydantic error holds the input values.
            shown = _invalid.details(error, sensitive, sensitive_values(args, sensitive))
            raise InvalidArguments(_invalid.MESSAGE, shown) from None
        except TableError as error:
            # A validator of the tool's model raised one of the pipeline's own refusals:
            # a fault of that code (internal_error, its text checked for secrets), never
            # a refusal whose message reaches the model.
            raise ValidatorFault(type(error).__name__) from error
        if to_kwargs is None:
            return validated  # type: ignore[return-value]
        return to_kwargs(validated)

    return validate


class ValidatorFault(Exception):
    """An argument validator raised a table error (named here); its own text is the cause."""


def sensitive_node(annotation: object) -> SensitiveNode | None:
    """Where the sensitive values sit inside a value of type ``annotation`` (``None``: nowhere).

    A recursive model that holds a secret anywhere is redacted whole from the
    first repetition on (fail closed); the tree itself stays finite.
    """
    import pydantic

    core = pydantic.TypeAdapter(cast("Any", annotation)).core_schema
    return Walk(core).tree(core)
