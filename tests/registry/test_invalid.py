"""``invalid_arguments`` details never show a sensitive value, whoever wrote the message.

A custom validator's message (``Value error, ...``) is written by the tool's
author, and the usual way to write one quotes the value. A model validator
sees every field, a field validator sees the others through ``info.data``:
their message can quote a sensitive value whose own path is not the error's
path. Families: validator kinds times the forms in which the secret is quoted
times the ways a field is sensitive. The details reach the model, and the
observation reaches the trace recorder.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import (
    BaseModel,
    ConfigDict,
    SecretStr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from boring_dispatch import Registry, Sensitive, Tool
from boring_dispatch.observe.audit import TraceRecorder

CANARY = "Canary-5Hq2xw"
QUOTES: list[Callable[[str], str]] = [
    lambda s: s,
    repr,
    lambda s: json.dumps({"token": s}),
    str.upper,
]
STRICT = ConfigDict(strict=True, extra="forbid")


def _secret(value: object) -> str:
    return value.get_secret_value() if isinstance(value, SecretStr) else str(value)


def _models(quote: Callable[[str], str]) -> dict[str, type[BaseModel]]:
    class AfterModel(BaseModel):
        model_config = STRICT
        user: str
        token: Annotated[str, Sensitive]

        @model_validator(mode="after")
        def check(self) -> AfterModel:
            raise ValueError(f"token {quote(self.token)} is not {self.user}'s")

    class InfoField(BaseModel):
        model_config = STRICT
        token: Annotated[str, Sensitive]
        user: str

        @field_validator("user")
        @classmethod
        def check(cls, _value: str, info: ValidationInfo) -> str:
            raise ValueError(f"this user cannot use {quote(_secret(info.data.get('token')))}")

    class SecretAfter(BaseModel):
        model_config = STRICT
        user: str
        token: SecretStr

        @model_validator(mode="after")
        def check(self) -> SecretAfter:
            raise ValueError(f"refused {quote(self.token.get_secret_value())}")

    class Inner(BaseModel):
        model_config = STRICT
        tokens: list[Annotated[str, Sensitive]]

        @model_validator(mode="after")
        def check(self) -> Inner:
            raise ValueError(f"refused {quote(self.tokens[0])}")

    class Outer(BaseModel):
        model_config = STRICT
        user: str
        inner: Inner

    class WrapModel(BaseModel):
        model_config = STRICT
        user: str
        token: Annotated[str, Sensitive]

        @model_validator(mode="wrap")
        @classmethod
        def check(cls, data: Any, _handler: Any) -> WrapModel:
            raise ValueError(f"refused {quote(str(data.get('token')))}")

    return {
        "after": AfterModel,
        "info": InfoField,
        "secret_str": SecretAfter,
        "nested": Outer,
        "wrap": WrapModel,
    }


def _args(kind: str) -> dict[str, object]:
    if kind == "nested":
        return {"user": "someone", "inner": {"tokens": [CANARY]}}
    return {"user": "someone", "token": CANARY}


@pytest.mark.parametrize("quote", QUOTES, ids=["plain", "repr", "json", "upper"])
@pytest.mark.parametrize("kind", ["after", "info", "secret_str", "nested", "wrap"])
def test_a_validator_quoting_a_secret_never_shows_it(
    kind: str, quote: Callable[[str], str], tmp_path: Path
) -> None:
    model = _models(quote)[kind]

    def handler(user: str, token: object = None, inner: object = None) -> None:
        raise AssertionError("never called")

    trace = TraceRecorder(tmp_path / "trace.jsonl")
    table = Registry({"t": Tool(handler, description="t", args=model)}, sinks=[trace])
    observation = table.dispatch("t", _args(kind))
    trace.close()
    assert observation.code == "invalid_arguments"
    shown = observation.model_text() + (tmp_path / "trace.jsonl").read_text()
    assert CANARY.casefold() not in shown.casefold()
    assert observation.error is not None
    assert observation.error.details  # the error still says where


def _table_errors() -> list[Callable[[str], BaseException]]:
    from boring_dispatch.errors import (
        Denied,
        InvalidArguments,
        InvalidRequest,
        NoFixture,
        ObservationTooLarge,
        ToolError,
        UnknownTool,
    )

    return [
        ToolError,
        lambda text: InvalidArguments("refused", (("token", text),)),
        InvalidArguments,
        Denied,
        UnknownTool,
        InvalidRequest,
        ObservationTooLarge,
        NoFixture,
    ]


@pytest.mark.parametrize("make", range(8))
@pytest.mark.parametrize("mode", ["before", "after"])
def test_a_table_error_raised_by_a_validator_is_an_internal_error(
    make: int, mode: str, tmp_path: Path
) -> None:
    """The pipeline's own refusals are the pipeline's: an args model's validator that raises
    one (its message quoting the secret) is a fault of that validator, never a refusal
    whose text reaches the model."""
    error = _table_errors()[make]

    class Before(BaseModel):
        model_config = STRICT
        token: Annotated[str, Sensitive]

        @model_validator(mode="before")
        @classmethod
        def check(cls, data: Any) -> Any:
            raise error(f"refused {data['token']}")

    class After(BaseModel):
        model_config = STRICT
        token: Annotated[str, Sensitive]

        @model_validator(mode="after")
        def check(self) -> After:
            raise error(f"refused {self.token}")

    model = Before if mode == "before" else After

    def handler(token: str) -> None:
        raise AssertionError("never called")

    trace = TraceRecorder(tmp_path / "trace.jsonl")
    table = Registry({"t": Tool(handler, description="t", args=model)}, sinks=[trace])
    observation = table.dispatch("t", {"token": CANARY})
    trace.close()
    assert observation.code == "internal_error"
    assert CANARY not in observation.model_text() + (tmp_path / "trace.jsonl").read_text()
