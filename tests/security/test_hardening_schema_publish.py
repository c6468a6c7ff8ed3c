"""What a table publishes: no secret defaults, no hidden text, no operator-fixed parameters.

Finding 3: the default of a sensitive field (``api_key: ... = KEY``, a
``SecretStr`` default, a ``default_factory``, examples) went into
``tool_schemas()``, MCP ``tools/list`` and ``describe``. Sensitive places are
now ``writeOnly`` and carry no default or example, in all three formats.

Finding 6: hidden and bidi characters were refused in tool descriptions only;
now the same check runs over every text of the generated argument schema.

Finding 7: a keyword fixed with ``functools.partial`` showed up as an optional
parameter the model could override. Bound arguments are not parameters now.

The surfaces (MCP over stdio with the official SDK client, ``describe`` and
``replay`` as real subprocesses) are checked at the end on one table.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, Literal, NewType, Optional, cast

import pydantic
import pytest
import typing_extensions
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field, Secret, SecretStr

from boring_dispatch import Registry, Sensitive, Tool
from boring_dispatch.errors import RegistryInvalid
from kits.mcp import McpServer

KEY = "sk-live-CANARY-9d2f7a"
STRICT = ConfigDict(strict=True, extra="forbid")
STYLES = ("openai", "anthropic", "mcp")
Token = NewType("Token", SecretStr)


class Creds(BaseModel):
    token: SecretStr
    user: str


@pydantic.dataclasses.dataclass
class CredsWithDefault:
    user: str
    token: Annotated[str, Sensitive] = KEY


#: (field annotation, field default or FieldInfo): every way a secret can get a default.
DEFAULTS: list[tuple[object, object]] = [
    (Annotated[str, Sensitive], KEY),
    (Annotated[str, Sensitive()], KEY),
    (Annotated[str, Sensitive], Field(default=KEY)),
    (Annotated[str, Sensitive], Field(default_factory=lambda: KEY)),
    (Annotated[str, Sensitive], Field(KEY, alias="apiKey")),
    (Annotated[str, Sensitive], Field(KEY, examples=[KEY])),
    (Annotated[str, Sensitive], Field(examples=[KEY])),
    (Annotated[str, Sensitive], Field(json_schema_extra={"examples": [KEY]})),
    (SecretStr, SecretStr(KEY)),
    (SecretStr, Field(default_factory=lambda: SecretStr(KEY))),
    (Secret[str], Secret[str](KEY)),
    (Optional[SecretStr], SecretStr(KEY)),  # noqa: UP045 - the Optional spelling is under test
    (Token, Token(SecretStr(KEY))),
    (list[Annotated[str, Sensitive]], [KEY]),
    (dict[str, SecretStr], {"default": KEY}),
    (Creds, Creds(token=SecretStr(KEY), user="ada")),
    (Creds, Field(default_factory=lambda: Creds(token=SecretStr(KEY), user="ada"))),
    (CredsWithDefault, CredsWithDefault(user="ada")),
    (list[CredsWithDefault], []),
]


def _login(api_key: object = None) -> dict[str, object]:
    del api_key
    return {"done": True}


def _table_with_default(annotation: Any, default: Any) -> Registry:
    model = pydantic.create_model("LoginArgs", __config__=STRICT, api_key=(annotation, default))
    return Registry({"login": Tool(_login, description="Log in.", args=model)})


def _write_only_places(schema: object) -> int:
    if isinstance(schema, dict):
        found = int(schema.get("writeOnly") is True)
        return found + sum(_write_only_places(value) for value in schema.values())
    if isinstance(schema, list):
        return sum(_write_only_places(value) for value in schema)
    return 0


@pytest.mark.parametrize(("annotation", "default"), DEFAULTS, ids=repr)
@pytest.mark.parametrize("style", STYLES)
def test_a_secret_default_or_example_is_never_published(
    style: str, annotation: object, default: object
) -> None:
    table = _table_with_default(annotation, default)
    listed = table.tool_schemas(style)  # type: ignore[arg-type]
    text = json.dumps(listed)
    assert KEY not in text
    assert "**********" not in text  # not even pydantic's mask of it
    assert _write_only_places(listed) >= 1


@pytest.mark.parametrize("style", STYLES)
def test_model_level_examples_of_arguments_with_secrets_are_not_published(style: str) -> None:
    class LoginArgs(BaseModel):
        """Log in with a key."""

        model_config = ConfigDict(
            strict=True, extra="forbid", json_schema_extra={"examples": [{"api_key": KEY}]}
        )
        api_key: SecretStr

    table = Registry({"login": Tool(_login, description="Log in.", args=LoginArgs)})
    assert KEY not in json.dumps(table.tool_schemas(style))  # type: ignore[arg-type]


def test_defaults_of_plain_fields_are_still_published() -> None:
    class SearchArgs(BaseModel):
        model_config = STRICT
        query: str
        limit: int = 10
        api_key: Annotated[str, Sensitive] = KEY

    def search(query: str, limit: int, api_key: str) -> None:
        del query, limit, api_key

    table = Registry({"search": Tool(search, description="Search.", args=SearchArgs)})
    [listed] = table.tool_schemas("mcp")
    properties = listed["inputSchema"]["properties"]  # type: ignore[index]
    assert properties["limit"]["default"] == 10
    assert properties["api_key"]["writeOnly"] is True
    assert "default" not in properties["api_key"]


@pytest.mark.parametrize(
    "annotation",
    [
        SecretStr,
        Annotated[str, Sensitive],
        Token,
        typing_extensions.TypeAliasType("Key", Annotated[str, Sensitive]),
        Annotated[dict[str, int], Sensitive],
        dict[Annotated[str, Sensitive], int],
    ],
    ids=repr,
)
def test_a_signature_parameter_that_is_sensitive_is_marked_write_only(annotation: object) -> None:
    def use(key: Any, note: str) -> None:
        del key, note

    use.__annotations__ = {"key": annotation, "note": str, "return": None}
    [listed] = Registry({"use": Tool(use, description="Use.")}).tool_schemas("mcp")
    schema = listed["inputSchema"]
    assert isinstance(schema, dict)
    assert schema["properties"]["key"]["writeOnly"] is True
    assert "writeOnly" not in schema["properties"]["note"]


# --------------------------------------------------------------------------- #
# Finding 6: one hidden-character rule for every text of the schema.

_HIDDEN = st.characters(categories=["Cc", "Cf", "Co"], exclude_characters="\n\t")


def _inner_with_doc(text: str) -> Any:
    return pydantic.create_model("Inner", __doc__=f"Inner{text}.", y=(int, ...))


#: place -> (annotation, default or FieldInfo, model docstring) carrying ``text`` there.
_PLACED: dict[str, Callable[[str], tuple[Any, Any, str | None]]] = {
    "field title": lambda text: (str, Field(title=f"X{text}"), None),
    "model docstring": lambda text: (str, ..., f"Args{text}."),
    "literal value": lambda text: (cast("Any", Literal)[f"a{text}"], ..., None),
    "examples": lambda text: (str, Field(examples=[f"e{text}"]), None),
    "default": lambda text: (str, f"d{text}", None),
    "alias": lambda text: (str, Field(alias=f"x{text}"), None),
    "nested model description": lambda text: (_inner_with_doc(text), ..., None),
    "json_schema_extra": lambda text: (
        str,
        Field(json_schema_extra={"x-note": f"n{text}"}),
        None,
    ),
}


def _place_text_in(place: str, text: str) -> Registry:
    def g(x: object) -> None:
        del x

    if place == "parameter description":
        g.__annotations__ = {"x": Annotated[str, Field(description=f"x {text}")], "return": None}
        return Registry({"t": Tool(g, description="T.")})
    annotation, default, doc = _PLACED[place](text)
    model = pydantic.create_model("A", __config__=STRICT, __doc__=doc, x=(annotation, default))
    return Registry({"t": Tool(g, description="T.", args=model)})


PLACES = [
    "parameter description",
    "field title",
    "model docstring",
    "literal value",
    "examples",
    "default",
    "alias",
    "nested model description",
    "json_schema_extra",
]


@pytest.mark.parametrize("place", PLACES)
@settings(max_examples=20)
@given(char=_HIDDEN)
def test_hidden_characters_anywhere_in_the_schema_refuse_the_table(place: str, char: str) -> None:
    with pytest.raises(RegistryInvalid, match="hidden character"):
        _place_text_in(place, f"zero{char}width")


@pytest.mark.parametrize("place", PLACES)
def test_plain_text_with_newlines_and_tabs_is_fine_everywhere(place: str) -> None:
    _place_text_in(place, "plain\ttext\nwith a second line")


@dataclasses.dataclass
class Documented:
    """Holds a right-to-left override \u202e here."""

    y: int


def test_a_dataclass_docstring_used_as_a_description_is_checked_too() -> None:
    def f(x: Documented) -> None:
        del x

    with pytest.raises(RegistryInvalid, match="U\\+202E"):
        Registry({"t": Tool(f, description="T.")})


# --------------------------------------------------------------------------- #
# Finding 7: arguments bound with functools.partial are not parameters.

SENT: list[dict[str, object]] = []


def send(to: str, body: str, sender: str, *, reply_to: str = "") -> dict[str, object]:
    SENT.append({"to": to, "body": body, "sender": sender, "reply_to": reply_to})
    return {"sent": True}


class Mailer:
    def __init__(self, domain: str) -> None:
        self.domain = domain

    def send(self, to: str, body: str, sender: str) -> dict[str, object]:
        SENT.append({"to": to, "body": body, "sender": sender, "domain": self.domain})
        return {"sent": True}

    send_as_ops = functools.partialmethod(send, sender="ops@example.com")


class SubPartial(functools.partial):  # type: ignore[type-arg]
    """A partial subclass: Python does not flatten nested ones of these."""


#: (handler, the bound names, the names the model may still send)
PARTIALS: list[tuple[Callable[..., object], set[str], set[str]]] = [
    (functools.partial(send, sender="ops@example.com"), {"sender"}, {"to", "body", "reply_to"}),
    (
        functools.partial(functools.partial(send, sender="ops@example.com"), reply_to="x@y"),
        {"sender", "reply_to"},
        {"to", "body"},
    ),
    (
        SubPartial(SubPartial(send, sender="ops@example.com"), body="fixed"),
        {"sender", "body"},
        {"to", "reply_to"},
    ),
    (functools.partial(send, "boss@example.com"), {"to"}, {"body", "sender", "reply_to"}),
    (
        functools.partial(Mailer("example.com").send, sender="ops@example.com"),
        {"sender"},
        {"to", "body"},
    ),
    (Mailer("example.com").send_as_ops, {"sender"}, {"to", "body"}),
]


@pytest.mark.parametrize(("handler", "bound", "free"), PARTIALS, ids=repr)
def test_arguments_bound_by_partial_are_hidden_and_refused(
    handler: Callable[..., object], bound: set[str], free: set[str]
) -> None:
    table = Registry({"send": Tool(handler, description="Send mail.")})
    for style in STYLES:
        text = json.dumps(table.tool_schemas(style))  # type: ignore[arg-type]
        assert all(f'"{name}"' not in text for name in bound)
    [listed] = table.tool_schemas("mcp")
    assert set(listed["inputSchema"]["properties"]) == free  # type: ignore[index]
    args = {"to": "a@example.com", "body": "hi", "sender": "evil@example.com", "reply_to": ""}
    SENT.clear()
    for name in bound:
        observation = table.dispatch("send", {key: args[key] for key in free | {name}})
        assert observation.code == "invalid_arguments"
        assert observation.error is not None
        assert [path for path, _ in observation.error.details] == [name]
        text = json.dumps({"name": "send", "args": {key: args[key] for key in free | {name}}})
        assert table.dispatch_json(text).code == "invalid_arguments"
    assert SENT == []
    assert table.dispatch("send", {key: args[key] for key in free}).ok
    assert all(SENT[0][name] != args[name] for name in bound if name in SENT[0])


class SendArgs(BaseModel):
    model_config = STRICT
    to: str
    body: str
    sender: str


def test_an_args_model_cannot_expose_a_field_the_partial_fixes() -> None:
    with pytest.raises(RegistryInvalid, match="partial"):
        Registry(
            {
                "send": Tool(
                    functools.partial(send, sender="ops@example.com"),
                    description="Send.",
                    args=SendArgs,
                )
            }
        )


# --------------------------------------------------------------------------- #
# Every surface: MCP tools/list and calls, describe, replay.

TABLE_MODULE = textwrap.dedent(
    f"""
    import datetime
    import functools
    from typing import Annotated

    from pydantic import BaseModel, ConfigDict, Field

    from boring_dispatch import Registry, Sensitive, Tool

    KEY = {KEY!r}


    class LoginArgs(BaseModel):
        model_config = ConfigDict(strict=True, extra="forbid")
        user: str
        api_key: Annotated[str, Sensitive] = Field(KEY, examples=[KEY])


    def login(user: str, api_key: str) -> dict:
        return {{"user": user, "keyed": api_key == KEY}}


    def send(to: str, body: str, sender: str) -> dict:
        return {{"sender": sender, "to": to}}


    def when(day: datetime.date, at: datetime.time) -> dict:
        return {{"weekday": day.isoweekday(), "hour": at.hour}}


    class Item(BaseModel):
        count: int


    def order(items: list[Item]) -> dict:
        return {{"n": sum(item.count for item in items)}}


    TABLE = Registry({{
        "login": Tool(login, description="Log in.", args=LoginArgs),
        "send": Tool(functools.partial(send, sender="ops@example.com"), description="Send."),
        "when": Tool(when, description="Weekday and hour."),
        "order": Tool(order, description="Order items."),
    }})
    """
)


@pytest.fixture(scope="module")
def table_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("published")
    (root / "published_table.py").write_text(TABLE_MODULE, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def server(table_dir: Path) -> Iterator[McpServer]:
    with (
        (table_dir / "server.log").open("w+", encoding="utf-8") as errlog,
        McpServer(
            ["mcp", "--registry", "published_table:TABLE"], env={}, cwd=table_dir, errlog=errlog
        ) as running,
    ):
        yield running


def _error(result: dict[str, Any]) -> dict[str, Any]:
    assert result["isError"] is True
    error = result["structuredContent"]["result"]["error"]
    assert isinstance(error, dict)
    return error


def test_mcp_tools_list_publishes_no_secret_default_and_no_bound_parameter(
    server: McpServer,
) -> None:
    tools = {tool["name"]: tool for tool in server.list_tools()}
    assert KEY not in json.dumps(tools)
    api_key = tools["login"]["inputSchema"]["properties"]["api_key"]
    assert api_key["writeOnly"] is True
    assert "default" not in api_key
    assert set(tools["send"]["inputSchema"]["properties"]) == {"to", "body"}
    item = tools["order"]["inputSchema"]["$defs"]["Item"]
    assert item["additionalProperties"] is False


def test_mcp_calls_take_json_forms_and_refuse_bound_and_unknown_members(
    server: McpServer,
) -> None:
    ok = server.call("when", {"day": "2024-05-01", "at": "09:30:00"})
    assert ok["structuredContent"]["result"] == {"ok": True, "result": {"weekday": 3, "hour": 9}}
    refused = _error(server.call("send", {"to": "a@b", "body": "hi", "sender": "evil@b"}))
    assert refused["code"] == "invalid_arguments"
    assert [d["path"] for d in refused["details"]] == ["sender"]
    nested = _error(server.call("order", {"items": [{"count": 1, "price": 0}]}))
    assert [d["path"] for d in nested["details"]] == ["items.0.price"]
    lax = _error(server.call("when", {"day": 1714521600, "at": "09:30:00"}))
    assert lax["code"] == "invalid_arguments"


def _dispatcher(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "boring_dispatch", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=cwd,
    )


def test_describe_publishes_no_secret_default(table_dir: Path) -> None:
    done = _dispatcher(table_dir, "describe", "--registry", "published_table:TABLE", "login")
    assert done.returncode == 0, done.stderr
    assert KEY not in done.stdout
    described = json.loads(done.stdout)
    assert described["inputSchema"]["properties"]["api_key"]["writeOnly"] is True


def test_replay_validates_recorded_calls_as_json_too(table_dir: Path) -> None:
    calls = [
        {"name": "when", "args": {"day": "2024-05-01", "at": "09:30:00"}},
        {"name": "send", "args": {"to": "a@b", "body": "hi", "sender": "evil@b"}},
        {"name": "order", "args": {"items": [{"count": "1"}]}},
    ]
    trace = table_dir / "trace.jsonl"
    trace.write_text("".join(json.dumps(call) + "\n" for call in calls), encoding="utf-8")
    done = _dispatcher(
        table_dir, "replay", "--registry", "published_table:TABLE", "--live", str(trace)
    )
    assert done.returncode == 0, done.stderr
    outcomes = [json.loads(line) for line in done.stdout.splitlines()]
    assert outcomes[0] == {"ok": True, "result": {"hour": 9, "weekday": 3}}
    assert [o["error"]["code"] for o in outcomes[1:]] == ["invalid_arguments"] * 2
