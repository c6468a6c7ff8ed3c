from __future__ import annotations

import dataclasses
import enum
import subprocess
import sys
from typing import Annotated, Literal, Optional

import pytest
from pydantic import BaseModel, ConfigDict, Field, Secret, SecretBytes, SecretStr, field_validator
from typing_extensions import TypedDict

from boring_dispatch.errors import InvalidArguments, RegistryInvalid
from boring_dispatch.observe.redact import sensitive_paths
from boring_dispatch.registry.schema import Sensitive, build_schema, sensitive_node

STRICT = ConfigDict(strict=True, extra="forbid")
CANARY = "CANARY-d41d8cd9"


def get_job(job_id: int, verbose: bool = False) -> dict[str, object]:
    return {"job_id": job_id, "verbose": verbose}


def test_valid_arguments_become_the_handler_keyword_arguments() -> None:
    schema = build_schema("get_job", get_job, None)
    assert schema.validate({"job_id": 7, "verbose": True}) == {"job_id": 7, "verbose": True}


def test_an_omitted_default_is_left_to_the_handler() -> None:
    schema = build_schema("get_job", get_job, None)
    assert schema.validate({"job_id": 7}) == {"job_id": 7}


@pytest.mark.parametrize(
    ("args", "path"),
    [
        ({"job_id": "12"}, "job_id"),
        ({"job_id": 1.0}, "job_id"),
        ({"job_id": True}, "job_id"),
        ({"job_id": None}, "job_id"),
        ({"job_id": 7, "verbose": "yes"}, "verbose"),
        ({"job_id": 7, "verbose": 1}, "verbose"),
        ({}, "job_id"),
        ({"job_id": 7, "extra": 1}, "extra"),
    ],
)
def test_strict_validation_refuses_coercion_missing_and_extra(
    args: dict[str, object], path: str
) -> None:
    schema = build_schema("get_job", get_job, None)
    with pytest.raises(InvalidArguments) as caught:
        schema.validate(args)
    assert caught.value.code == "invalid_arguments"
    assert [p for p, _ in caught.value.details] == [path]


def test_parameter_names_that_shadow_model_attributes_still_work() -> None:
    def search(json: str, model_config: int, schema: str) -> None:
        del json, model_config, schema

    built = build_schema("search", search, None)
    assert built.validate({"json": "a", "model_config": 1, "schema": "b"}) == {
        "json": "a",
        "model_config": 1,
        "schema": "b",
    }


def test_the_json_schema_forbids_additional_properties_and_lists_required_fields() -> None:
    schema = build_schema("get_job", get_job, None).json_schema
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["job_id"]
    properties = schema["properties"]
    assert isinstance(properties, dict)
    assert set(properties) == {"job_id", "verbose"}


def _no_type(job_id):  # type: ignore[no-untyped-def]  # noqa: ANN001, ANN202
    return job_id


def _variadic(*ids: int) -> None:
    del ids


def _keywords(**options: int) -> None:
    del options


def _positional(job_id: int, /) -> None:
    del job_id


async def _async(job_id: int) -> None:
    del job_id


def _unresolvable(job: NoSuchType) -> None:  # type: ignore[name-defined]  # noqa: F821
    del job


class _Opaque:
    pass


def _opaque(thing: _Opaque) -> None:
    del thing


@pytest.mark.parametrize(
    "handler", [_no_type, _variadic, _keywords, _positional, _async, _unresolvable, _opaque]
)
def test_signatures_that_cannot_be_validated_strictly_fail_at_build(handler: object) -> None:
    with pytest.raises(RegistryInvalid) as caught:
        build_schema("tool", handler, None)  # type: ignore[arg-type]
    assert caught.value.code == "registry_invalid"


class RefundArgs(BaseModel):
    model_config = STRICT
    invoice_id: str
    amount_cents: int = Field(gt=0)
    api_token: SecretStr


def refund(invoice_id: str, amount_cents: int, api_token: SecretStr) -> dict[str, object]:
    return {"invoice_id": invoice_id, "amount": amount_cents, "token": api_token}


def test_an_explicit_model_validates_and_passes_fields_by_name() -> None:
    schema = build_schema("refund", refund, RefundArgs)
    kwargs = schema.validate({"invoice_id": "I-1", "amount_cents": 5, "api_token": "t"})
    assert kwargs["invoice_id"] == "I-1"
    assert kwargs["amount_cents"] == 5
    assert isinstance(kwargs["api_token"], SecretStr)
    with pytest.raises(InvalidArguments):
        schema.validate({"invoice_id": "I-1", "amount_cents": 0, "api_token": "t"})
    with pytest.raises(InvalidArguments):
        schema.validate({"invoice_id": "I-1", "amount_cents": "5", "api_token": "t"})


class LaxArgs(BaseModel):
    invoice_id: str


class OpenArgs(BaseModel):
    model_config = ConfigDict(strict=True)
    invoice_id: str


class OtherArgs(BaseModel):
    model_config = STRICT
    customer: str


@pytest.mark.parametrize("model", [LaxArgs, OpenArgs, OtherArgs, dict])
def test_an_explicit_model_must_be_strict_closed_and_fit_the_handler(model: type) -> None:
    def lookup(invoice_id: str) -> None:
        del invoice_id

    with pytest.raises(RegistryInvalid):
        build_schema("lookup", lookup, model)


class Card(BaseModel):
    model_config = STRICT
    number: SecretStr
    holder: str


class Wallet(BaseModel):
    model_config = STRICT
    cards: list[Card]
    pin: Annotated[str, Sensitive]
    label: str


@dataclasses.dataclass
class Login:
    user: str
    password: Annotated[str, Sensitive]


class Headers(TypedDict):
    authorization: Annotated[str, Sensitive]
    accept: str


class Node(BaseModel):
    model_config = STRICT
    name: str
    key: SecretStr
    children: list[Node] = []


class Plain(BaseModel):
    model_config = STRICT
    name: str
    children: list[Plain] = []


@pytest.mark.parametrize(
    ("annotation", "paths"),
    [
        (str, ()),
        (SecretStr, ("",)),
        (SecretBytes, ("",)),
        (Secret[int], ("",)),
        (Annotated[str, Sensitive], ("",)),
        (Annotated[int, Field(gt=0), Sensitive], ("",)),
        (Optional[SecretStr], ("",)),  # noqa: UP045 - the Optional spelling is under test
        (SecretStr | None, ("",)),
        (list[SecretStr], ("[*]",)),
        (dict[str, Annotated[str, Sensitive]], ("[*]",)),
        (Card, ("number",)),
        (Wallet, ("cards[*].number", "pin")),
        (list[Wallet] | None, ("[*].cards[*].number", "[*].pin")),
        (Login, ("password",)),
        (Headers, ("authorization",)),
        (Plain, ()),
    ],
)
def test_sensitive_fields_are_found_by_type_and_marker(
    annotation: object, paths: tuple[str, ...]
) -> None:
    assert sensitive_paths(sensitive_node(annotation)) == paths


def test_a_recursive_model_with_a_secret_is_redacted_whole_from_its_first_repetition() -> None:
    assert sensitive_paths(sensitive_node(Node)) == ("children[*]", "key")


def test_signature_schemas_name_their_sensitive_parameters() -> None:
    def pay(wallet: Wallet, token: Annotated[str, Sensitive], note: str) -> None:
        del wallet, token, note

    schema = build_schema("pay", pay, None)
    assert sensitive_paths(schema.sensitive) == ("token", "wallet.cards[*].number", "wallet.pin")
    assert schema.accepted == frozenset({"wallet", "token", "note"})


def test_a_schema_without_sensitive_fields_has_no_tree() -> None:
    assert build_schema("get_job", get_job, None).sensitive is None


class Shouting(BaseModel):
    model_config = STRICT
    word: str

    @field_validator("word")
    @classmethod
    def _quiet(cls, value: str) -> str:
        raise ValueError(f"refusing {value}")


def test_validation_details_never_quote_the_submitted_value() -> None:
    def shout(word: str) -> None:
        del word

    cases = [
        (build_schema("shout", shout, Shouting), {"word": CANARY}),
        (build_schema("get_job", get_job, None), {"job_id": CANARY}),
        (build_schema("get_job", get_job, None), {"job_id": 7, CANARY: 1}),
    ]
    for schema, args in cases:
        with pytest.raises(InvalidArguments) as caught:
            schema.validate(args)  # type: ignore[arg-type]
        for path, reason in caught.value.details:
            assert CANARY not in reason
            assert path in {"word", "job_id", CANARY}
        assert caught.value.__cause__ is None
        assert caught.value.__suppress_context__


def test_pydantic_is_imported_only_when_a_table_is_built() -> None:
    probe = (
        "import sys\n"
        "import boring_dispatch.registry.registry, boring_dispatch.registry.pipeline\n"
        "import boring_dispatch.registry.replay\n"
        "assert 'pydantic' not in sys.modules, 'imported too early'\n"
        "from boring_dispatch import Registry, Tool\n"
        "def f(x: int) -> int:\n"
        "    return x\n"
        "Registry({'f': Tool(f, description='d')})\n"
        "assert 'pydantic' in sys.modules\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr


class _Level(enum.IntEnum):
    ONE = 1


class _Plain(enum.Enum):
    ONE = 1
    YES = True


@pytest.mark.parametrize(
    ("annotation", "text"),
    [
        (Literal[1], "true"),
        (Literal[1], "1.0"),
        (Literal[True], "1"),
        (_Level, "1.0"),
        (_Level, "true"),
        (_Plain, "1.0"),
        (list[Literal[1, 2]], "[true]"),
    ],
)
def test_a_literal_or_enum_value_is_not_matched_across_json_types(
    annotation: object, text: str
) -> None:
    """``true`` is not ``1`` and ``1.0`` is not ``1`` for a ``Literal`` or an ``Enum`` either:
    the published schema (``const``/``enum``) tells a JSON Schema validator they differ."""
    from boring_dispatch import Registry, Tool

    def handler(x: object) -> dict[str, str]:
        return {"x": repr(x)}

    handler.__annotations__ = {"x": annotation, "return": dict[str, str]}
    table = Registry({"t": Tool(handler, description="t")})
    observation = table.dispatch_json(f'{{"name": "t", "args": {{"x": {text}}}}}')
    assert observation.code == "invalid_arguments"


class _Pair(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    first: _Level
    second: _Level | None = None  # the enum's schema is shared by reference


@pytest.mark.parametrize(
    ("annotation", "text", "accepted"),
    [
        (Literal[1], "1", True),
        (Literal[True], "true", True),
        (Literal["1"], '"1"', True),
        (Literal["1"], "1", False),
        (Literal[None], "null", True),  # noqa: PYI061 - the literal itself is the subject
        (Literal[1, True], "true", True),
        (Literal[1, True], "1", True),
        (Literal[1, True], "1.0", False),
        (_Level, "1", True),
        (_Plain, "true", False),  # YES = True is an alias of ONE = 1 (True == 1)
        (_Plain, "1", True),
        (list[_Level], "[1, 1]", True),
        (list[_Level], "[1, true]", False),
        (dict[str, Literal[2]], '{"a": 2}', True),
        (dict[str, Literal[2]], '{"a": 2.0}', False),
        (_Pair, '{"first": 1, "second": 1}', True),
        (_Pair, '{"first": 1, "second": true}', False),
        (_Pair, '{"first": true}', False),
        (list[_Pair], '[{"first": 1}, {"first": 1, "second": 1.0}]', False),
    ],
)
def test_literal_and_enum_values_of_the_declared_json_type_are_accepted_at_any_depth(
    annotation: object, text: str, accepted: bool
) -> None:
    from boring_dispatch import Registry, Tool

    def handler(x: object) -> dict[str, str]:
        return {"x": repr(x)}

    handler.__annotations__ = {"x": annotation, "return": dict[str, str]}
    table = Registry({"t": Tool(handler, description="t")})
    observation = table.dispatch_json(f'{{"name": "t", "args": {{"x": {text}}}}}')
    assert observation.code == ("ok" if accepted else "invalid_arguments"), observation
    if not accepted:
        assert text not in str(observation.to_dict().get("error")), observation


@pytest.mark.parametrize(
    ("text", "accepted"),
    [
        ('{"first": 1}', True),
        ('{"first": 1, "second": 1}', True),
        ('{"first": true}', False),
        ('{"first": 1.0}', False),
        ('{"first": 1, "second": true}', False),
    ],
)
def test_an_explicit_args_model_checks_its_enum_fields_json_types(
    text: str, accepted: bool
) -> None:
    from boring_dispatch import Registry, Tool

    def handler(first: _Level, second: _Level | None = None) -> dict[str, str]:
        return {"first": repr(first)}

    table = Registry({"t": Tool(handler, description="t", args=_Pair)})
    observation = table.dispatch_json(f'{{"name": "t", "args": {text}}}')
    assert observation.code == ("ok" if accepted else "invalid_arguments"), observation
