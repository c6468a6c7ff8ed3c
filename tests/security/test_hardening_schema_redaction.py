"""Redaction follows every spelling of a sensitive type and every path its input takes.

Finding 4: ``NewType`` over a secret, type aliases (``TypeAliasType``),
generics and other spellings escaped the sensitive tree, so the value was
audited in clear. Finding 2: a field read through an alias (``AliasPath``,
``AliasChoices``, ``alias``, ``validation_alias``) was audited in clear, and
the keys of a sensitive mapping appeared in ``invalid_arguments`` paths.

Each case sends a canary through ``dispatch`` and ``dispatch_json``, valid and
invalid, with an in-memory sink, a JSON-lines audit file and a replay trace
attached, and checks that the handler got the canary and nothing else did.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, Generic, NewType, Optional, TypeVar, Union, cast

import pydantic
import pytest
import typing_extensions
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import (
    AfterValidator,
    AliasChoices,
    AliasGenerator,
    AliasPath,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Secret,
    SecretBytes,
    SecretStr,
)
from pydantic.alias_generators import to_camel
from pydantic_core import core_schema
from typing_extensions import TypeAliasType

from boring_dispatch import Registry, Sensitive, Tool
from boring_dispatch.observe.audit import AuditSink, JsonLinesAuditSink, TraceRecorder
from boring_dispatch.observe.redact import sensitive_paths
from boring_dispatch.registry.schema import sensitive_node
from boring_dispatch.testing import CapturingSink

CANARY = "CANARY-4e1d-secret"
STRICT = ConfigDict(strict=True, extra="forbid")
T = TypeVar("T")

Token = NewType("Token", SecretStr)
MarkedToken = NewType("MarkedToken", Annotated[str, Sensitive])
TokenOfToken = NewType("TokenOfToken", Token)
SecretAlias = TypeAliasType("SecretAlias", Annotated[str, Sensitive])
SecretStrAlias = TypeAliasType("SecretStrAlias", SecretStr)
AliasOfAlias = TypeAliasType("AliasOfAlias", SecretAlias)
ListOf = TypeAliasType("ListOf", list[T], type_params=(T,))


class Creds(BaseModel):
    token: SecretStr
    user: str


class MarkedCreds(BaseModel):
    token: Annotated[str, Sensitive]
    user: str


class CredsTypedDict(typing_extensions.TypedDict):
    token: Annotated[str, Sensitive]
    user: str


@dataclasses.dataclass
class CredsDataclass:
    token: Annotated[str, Sensitive]
    user: str


@pydantic.dataclasses.dataclass
class CredsPydanticDataclass:
    token: Token
    user: str


class Box(BaseModel, Generic[T]):
    item: T


class BoxTypedDict(typing_extensions.TypedDict, Generic[T]):
    item: T


@dataclasses.dataclass
class BoxDataclass(Generic[T]):
    item: T


class Deep(BaseModel):
    creds: list[Creds]
    boxes: dict[str, Box[SecretAlias]] = {}


class Whole(BaseModel):
    token: str
    user: str


def _creds(canary: str) -> dict[str, object]:
    return {"token": canary, "user": "ada"}


#: (annotation, the JSON value that carries the canary)
SPELLINGS: list[tuple[object, Callable[[str], object]]] = [
    (SecretStr, lambda c: c),
    (SecretBytes, lambda c: c),
    (Secret[str], lambda c: c),
    (Annotated[str, Sensitive], lambda c: c),
    (Annotated[str, Sensitive()], lambda c: c),
    (Annotated[str, Field(min_length=4), Sensitive], lambda c: c),
    (Annotated[str, Sensitive, Field(min_length=4)], lambda c: c),
    (Annotated[str, BeforeValidator(str.strip), Sensitive], lambda c: c),
    (Annotated[str, Sensitive, AfterValidator(str.strip)], lambda c: c),
    (Token, lambda c: c),
    (MarkedToken, lambda c: c),
    (TokenOfToken, lambda c: c),
    (SecretAlias, lambda c: c),
    (SecretStrAlias, lambda c: c),
    (AliasOfAlias, lambda c: c),
    (ListOf[SecretStr], lambda c: [c]),
    (Optional[SecretStr], lambda c: c),  # noqa: UP045 - the Optional spelling is under test
    (SecretStr | None, lambda c: c),
    (Optional[SecretAlias], lambda c: c),  # noqa: UP045
    (Union[int, SecretStr], lambda c: c),  # noqa: UP007 - the Union spelling is under test
    (int | Token, lambda c: c),
    (Annotated[Optional[str], Sensitive], lambda c: c),  # noqa: UP045
    (list[Annotated[str, Sensitive]], lambda c: ["a", c]),
    (tuple[SecretStr, ...], lambda c: [c]),
    (tuple[int, SecretStr], lambda c: [1, c]),
    (list[list[Token]], lambda c: [[c]]),
    (dict[str, SecretStr], lambda c: {"k": c}),
    (dict[str, list[MarkedToken]], lambda c: {"k": [c]}),
    (Mapping[str, SecretAlias], lambda c: {"k": c}),
    (Creds, _creds),
    (MarkedCreds, _creds),
    (CredsTypedDict, _creds),
    (CredsDataclass, _creds),
    (CredsPydanticDataclass, _creds),
    (Optional[list[Creds]], lambda c: [_creds(c)]),  # noqa: UP045
    (Box[SecretStr], lambda c: {"item": c}),
    (Box[list[Token]], lambda c: {"item": [c]}),
    (BoxTypedDict[SecretAlias], lambda c: {"item": c}),
    (BoxDataclass[Token], lambda c: {"item": c}),
    (Deep, lambda c: {"creds": [_creds(c)], "boxes": {"b": {"item": c}}}),
    (Annotated[Whole, Sensitive], _creds),
    (Annotated[dict[str, str], Sensitive], lambda c: {c: "v"}),
    (dict[Annotated[str, Sensitive], int], lambda c: {c: 1}),
    (dict[Token, int], lambda c: {c: 1}),
    (list[Annotated[dict[str, int], Sensitive]], lambda c: [{c: 1}]),
]


def _texts(value: object) -> list[str]:
    """Every text inside a value the handler received (secrets unwrapped)."""
    if isinstance(value, SecretStr | SecretBytes | Secret):
        value = value.get_secret_value()
    if isinstance(value, BaseModel) or dataclasses.is_dataclass(value):
        value = dict(vars(value))
    if isinstance(value, str | bytes):
        return [value if isinstance(value, str) else value.decode()]
    if isinstance(value, Mapping):
        return [text for pair in value.items() for part in pair for text in _texts(part)]
    if isinstance(value, list | tuple | set | frozenset):
        return [text for item in value for text in _texts(item)]
    return []


class Recorded:
    """A table with the three kinds of record a call leaves: sink, audit file, trace."""

    def __init__(self, tmp_path: Path, tools: dict[str, Tool]) -> None:
        self.sink = CapturingSink()
        self.audit = tmp_path / "audit.jsonl"
        self.trace = tmp_path / "trace.jsonl"
        sinks: list[AuditSink] = [
            self.sink,
            JsonLinesAuditSink(self.audit),
            TraceRecorder(self.trace),
        ]
        self.table = Registry(tools, sinks=sinks)

    def both(self, name: str, args: dict[str, object]) -> list[dict[str, object]]:
        direct = self.table.dispatch(name, args).to_dict()
        parsed = self.table.dispatch_json(json.dumps({"name": name, "args": args})).to_dict()
        assert direct == parsed
        return [direct, parsed]

    def records(self) -> str:
        texts = [json.dumps(event.args) for event in self.sink.events]
        texts += [repr(event) for event in self.sink.events]
        for path in (self.audit, self.trace):
            if path.exists():
                texts.append(path.read_text(encoding="utf-8"))
        return "\n".join(texts)


def _model_of(annotation: Any) -> type[BaseModel]:
    return pydantic.create_model("Args", __config__=STRICT, secret=(annotation, ...), n=(int, ...))


def _tool(annotation: object, received: list[object], via: str) -> Tool:
    def take(secret: Any, n: int) -> dict[str, object]:
        received.append(secret)
        return {"n": n}

    take.__annotations__ = {"secret": annotation, "n": int, "return": dict[str, object]}
    args = _model_of(annotation) if via == "model" else None
    return Tool(take, description="Take a secret.", args=args)


@pytest.mark.parametrize("via", ["signature", "model"])
@pytest.mark.parametrize(("annotation", "carry"), SPELLINGS, ids=repr)
def test_every_spelling_of_a_secret_is_redacted_in_every_record(
    tmp_path: Path, via: str, annotation: object, carry: Callable[[str], object]
) -> None:
    received: list[object] = []
    recorded = Recorded(tmp_path, {"take": _tool(annotation, received, via)})
    value = carry(CANARY)
    ok = recorded.both("take", {"secret": value, "n": 1})
    assert ok == [{"ok": True, "result": {"n": 1}}] * 2
    # The handler does get the secret (otherwise this test could not fail).
    assert all(CANARY in _texts(item) for item in received)
    refused = recorded.both("take", {"secret": value, "n": "1"})
    assert all(item["ok"] is False for item in refused)
    extra = recorded.both("take", {"secret": value, "n": 1, "secret_": value})
    assert all(item["ok"] is False for item in extra)
    assert len(received) == 2
    assert CANARY not in recorded.records()
    assert CANARY not in json.dumps(refused + extra)
    schemas = json.dumps([recorded.table.tool_schemas(style) for style in ("openai", "mcp")])
    assert CANARY not in schemas


@pytest.mark.parametrize(("annotation", "carry"), SPELLINGS, ids=repr)
def test_the_sensitive_tree_marks_every_spelling(
    annotation: object, carry: Callable[[str], object]
) -> None:
    del carry
    assert sensitive_paths(sensitive_node(annotation)) != ()


@pytest.mark.parametrize(
    "secret", [SecretStr, Annotated[str, Sensitive]], ids=["SecretStr", "Sensitive"]
)
@pytest.mark.parametrize(
    ("field", "config", "args"),
    [
        (Field(alias="apiToken"), {}, {"apiToken": CANARY}),
        (Field(validation_alias="api-token"), {}, {"api-token": CANARY}),
        (Field(alias="k", validation_alias="api-token"), {}, {"api-token": CANARY}),
        (Field(validation_alias=AliasChoices("key_a", "key_b")), {}, {"key_a": CANARY}),
        (Field(validation_alias=AliasChoices("key_a", "key_b")), {}, {"key_b": CANARY}),
        (Field(validation_alias=AliasPath("creds", "token")), {}, {"creds": {"token": CANARY}}),
        (Field(validation_alias=AliasPath("tokens", 1)), {}, {"tokens": ["x", CANARY]}),
        (
            Field(validation_alias=AliasPath("a", 0, "b", "c")),
            {},
            {"a": [{"b": {"c": CANARY}}]},
        ),
        (
            Field(validation_alias=AliasChoices(AliasPath("x", "y"), "z")),
            {},
            {"x": {"y": CANARY}},
        ),
        (Field(validation_alias=AliasChoices(AliasPath("x", "y"), "z")), {}, {"z": CANARY}),
        (Field(serialization_alias="out"), {}, {"token": CANARY}),
        (Field(), {"alias_generator": to_camel}, {"token": CANARY}),
        (Field(alias="tokenAlias"), {"validate_by_name": True}, {"token": CANARY}),
        (Field(alias="tokenAlias"), {"validate_by_name": True}, {"tokenAlias": CANARY}),
        (
            Field(),
            {"alias_generator": AliasGenerator(validation_alias=lambda name: f"in_{name}")},
            {"in_token": CANARY},
        ),
    ],
    ids=repr,
)
def test_a_secret_read_through_an_alias_is_redacted_where_it_was_read(
    tmp_path: Path, secret: Any, field: Any, config: dict[str, Any], args: dict[str, object]
) -> None:
    merged = cast("ConfigDict", {"strict": True, "extra": "forbid", **config})
    model = pydantic.create_model("Args", __config__=merged, token=(secret, field))
    received: list[object] = []

    def login(token: object) -> dict[str, object]:
        received.append(token)
        return {"done": True}

    recorded = Recorded(tmp_path, {"login": Tool(login, description="Log in.", args=model)})
    assert recorded.both("login", args) == [{"ok": True, "result": {"done": True}}] * 2
    assert all(CANARY in _texts(item) for item in received)
    refused = recorded.both("login", {**args, "unknown": 1})
    assert all(item["ok"] is False for item in refused)
    assert CANARY not in recorded.records()


class NestedAliases(BaseModel):
    token: Annotated[str, Sensitive] = Field(validation_alias=AliasPath("auth", "bearer"))
    user: str = Field(alias="userName")


class AliasedTypedDict(typing_extensions.TypedDict):
    token: Annotated[SecretStr, Field(alias="apiToken")]


@pydantic.dataclasses.dataclass
class AliasedDataclass:
    token: Annotated[str, Sensitive] = Field(validation_alias=AliasChoices("tok", "key"))


@pytest.mark.parametrize(
    ("annotation", "value"),
    [
        (NestedAliases, {"auth": {"bearer": CANARY}, "userName": "ada"}),
        (list[NestedAliases], [{"auth": {"bearer": CANARY}, "userName": "ada"}]),
        (AliasedTypedDict, {"apiToken": CANARY}),
        (dict[str, AliasedTypedDict], {"k": {"apiToken": CANARY}}),
        (AliasedDataclass, {"tok": CANARY}),
        (AliasedDataclass, {"key": CANARY}),
    ],
    ids=repr,
)
def test_aliases_inside_nested_models_are_followed_too(
    tmp_path: Path, annotation: object, value: object
) -> None:
    received: list[object] = []
    recorded = Recorded(tmp_path, {"take": _tool(annotation, received, "signature")})
    assert recorded.both("take", {"secret": value, "n": 1})[0]["ok"] is True
    assert all(CANARY in _texts(item) for item in received)
    recorded.both("take", {"secret": value, "n": "1"})
    assert CANARY not in recorded.records()


class KeyedCreds(BaseModel):
    keys: dict[Annotated[str, Sensitive], int]


#: Mappings whose keys are secret, and how to wrap one such mapping into the argument.
SECRET_KEYS: list[tuple[object, Callable[[dict[str, object]], object]]] = [
    (dict[Annotated[str, Sensitive], int], lambda m: m),
    (Annotated[dict[str, int], Sensitive], lambda m: m),
    (dict[Token, int], lambda m: m),
    (dict[SecretAlias, int], lambda m: m),
    (list[Annotated[dict[str, int], Sensitive]], lambda m: [m]),
    (dict[str, dict[Annotated[str, Sensitive], int]], lambda m: {"outer": m}),
    (KeyedCreds, lambda m: {"keys": m}),
    (int | KeyedCreds, lambda m: {"keys": m}),
    (Optional[list[KeyedCreds]], lambda m: [{"keys": m}]),  # noqa: UP045
]
_KEYED: dict[int, Recorded] = {}


@pytest.mark.parametrize("case", range(len(SECRET_KEYS)), ids=lambda i: repr(SECRET_KEYS[i][0]))
@settings(max_examples=25)
@given(
    key=st.text(min_size=1).map(lambda text: f"CANARY-{text}"),
    bad=st.sampled_from(["1", 1.5, None, [1]]),
)
def test_keys_of_a_sensitive_mapping_appear_in_no_path_and_no_record(
    tmp_path_factory: pytest.TempPathFactory, case: int, key: str, bad: object
) -> None:
    annotation, wrap = SECRET_KEYS[case]
    if case not in _KEYED:
        tool = _tool(annotation, [], "signature")
        _KEYED[case] = Recorded(tmp_path_factory.mktemp("keyed"), {"take": tool})
    recorded = _KEYED[case]
    ok = recorded.both("take", {"secret": wrap({key: 1}), "n": 1})
    assert ok[0]["ok"] is True
    refused = recorded.both("take", {"secret": wrap({key: bad}), "n": 1})
    assert refused[0]["ok"] is False
    shown = json.dumps(refused) + recorded.records()
    assert "CANARY-" not in shown


def test_a_misspelled_member_under_a_union_is_redacted_in_the_audit_record(tmp_path: Path) -> None:
    received: list[object] = []
    recorded = Recorded(tmp_path, {"take": _tool(int | Creds, received, "signature")})
    refused = recorded.both("take", {"secret": {"tokne": CANARY, "user": "ada"}, "n": 1})
    assert refused[0]["ok"] is False
    assert received == []
    assert CANARY not in recorded.records()


class SharedDefinition(str):
    """A type whose core schema is a named definition, shared by every use."""

    __slots__ = ()

    @classmethod
    def __get_pydantic_core_schema__(cls, source: object, handler: object) -> Any:
        del source, handler
        return core_schema.str_schema(ref="shared-definition")


def test_marking_one_use_of_a_shared_definition_marks_only_that_use(tmp_path: Path) -> None:
    def pair(secret: Annotated[SharedDefinition, Sensitive], plain: SharedDefinition) -> None:
        del secret, plain

    recorded = Recorded(tmp_path, {"pair": Tool(pair, description="Pair.")})
    assert recorded.both("pair", {"secret": CANARY, "plain": "visible"})[0]["ok"] is True
    assert CANARY not in recorded.records()
    assert [event.args for event in recorded.sink.events] == [
        {"secret": "[redacted]", "plain": "visible"}
    ] * 2
    [listed] = recorded.table.tool_schemas("mcp")
    properties = listed["inputSchema"]["properties"]  # type: ignore[index]
    assert properties["secret"]["writeOnly"] is True
    assert "writeOnly" not in properties["plain"]
