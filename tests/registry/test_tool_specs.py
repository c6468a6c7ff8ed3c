from __future__ import annotations

import dataclasses
import logging
from collections import Counter
from typing import Annotated

import pydantic
import pytest

from boring_dispatch import Registry, Sensitive, Tool, ToolSpec
from boring_dispatch.registry.tool_specs import sensitive_paths
from kits.billing import billing_table


class Card(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(strict=True, extra="forbid")
    number: Annotated[str, Sensitive]
    holder: str


def pay(card: Card, cards: list[Card], pin: pydantic.SecretStr, amount: int) -> None:
    return None


def test_specs_are_typed_frozen_records_sorted_by_name() -> None:
    specs = billing_table(Counter()).tool_specs()
    assert [spec.name for spec in specs] == ["fail", "get_invoice", "refund"]
    assert all(type(spec) is ToolSpec for spec in specs)
    refund = specs[2]
    assert refund.confirm is True
    assert refund.audience == "both"
    assert refund.injected == ("api_token",)
    assert refund.sensitive_paths == ("api_token",)
    assert refund.description == "Refund one invoice."
    with pytest.raises(dataclasses.FrozenInstanceError):
        refund.name = "other"  # type: ignore[misc]


def test_specs_are_fresh_copies() -> None:
    table = billing_table(Counter())
    schema = table.tool_specs()[0].input_schema
    assert isinstance(schema, dict)
    schema.clear()
    assert table.tool_specs()[0].input_schema


def test_sensitive_paths_name_every_place_at_any_depth() -> None:
    table = Registry({"pay": Tool(pay, description="Pay.")})
    (spec,) = table.tool_specs()
    assert spec.sensitive_paths == ("card.number", "cards[].number", "pin")
    assert spec.injected == ()
    assert sensitive_paths(None) == ()


@pytest.mark.parametrize(
    ("style", "shape"),
    [
        ("chat_completions", {"type", "function"}),
        ("openai", {"type", "function"}),
        ("responses", {"type", "name", "description", "parameters"}),
        ("anthropic", {"name", "description", "input_schema"}),
        ("mcp", {"name", "description", "inputSchema"}),
    ],
)
def test_every_format_is_built_from_the_specs(style: str, shape: set[str]) -> None:
    table = billing_table(Counter())
    listed = table.tool_schemas(style)  # type: ignore[arg-type]
    assert [set(item) for item in listed] == [shape] * 3
    assert listed == [spec.tool_schema(style) for spec in table.tool_specs()]  # type: ignore[arg-type]


def test_an_unknown_format_is_refused() -> None:
    spec = billing_table(Counter()).tool_specs()[0]
    with pytest.raises(ValueError, match="unknown schema format"):
        spec.tool_schema("gemini")  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["jobs.get", "a.b.c", "v1.0"])
def test_a_name_a_provider_refuses_is_warned_at_build(
    name: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="boring_dispatch"):
        Registry({name: Tool(pay, description="Pay.")})
    assert "^[a-zA-Z0-9_-]{1,64}$" in caplog.text
    assert repr(name) in caplog.text


@pytest.mark.parametrize("name", ["get_job", "Get-Job", "x" * 64])
def test_a_provider_safe_name_is_not_warned(name: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="boring_dispatch"):
        Registry({name: Tool(pay, description="Pay.")})
    assert caplog.text == ""


def test_redacted_arguments_hide_sensitive_and_unknown_members() -> None:
    table = Registry({"pay": Tool(pay, description="Pay.")})
    args = {"card": {"number": "4111", "holder": "A"}, "pin": "1234", "amount": 3, "x": "s"}
    assert table.redacted_arguments("pay", args) == {
        "card": {"number": "[redacted]", "holder": "A"},
        "pin": "[redacted]",
        "amount": 3,
        "x": "[redacted]",
    }
    assert table.redacted_arguments("nope", {"a": 1}) == {"a": "[redacted]"}
    assert table.redacted_arguments("pay", ["not", "a", "mapping"]) == {}
