from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Annotated

import pydantic
import pytest
from hypothesis import given
from hypothesis import strategies as st

from boring_dispatch import Injected, Registry, Sensitive, Tool
from boring_dispatch.errors import RegistryInvalid
from boring_dispatch.observe.audit import TraceRecorder
from boring_dispatch.registry.injected import SENT_BY_MODEL
from boring_dispatch.registry.replay import replay
from boring_dispatch.registry.tool_specs import SchemaFormat
from boring_dispatch.testing import CapturingSink
from kits.billing import CANARY, billing_table
from kits.strategies import json_values

STYLES: tuple[SchemaFormat, ...] = ("chat_completions", "openai", "responses", "anthropic", "mcp")


def _sinked(calls: Counter[str], sink: CapturingSink) -> Registry:
    table = billing_table(calls)
    return Registry(dict(table.tools), name="billing", sinks=[sink])


def test_an_injected_parameter_is_absent_from_every_schema_format() -> None:
    table = billing_table(Counter())
    for style in STYLES:
        text = json.dumps(table.tool_schemas(style))
        assert "api_token" not in text
        assert "invoice_id" in text


@given(secret=st.text(min_size=1))
def test_the_caller_supplies_it_and_no_record_shows_it(secret: str) -> None:
    calls: Counter[str] = Counter()
    sink = CapturingSink()
    table = _sinked(calls, sink)
    observation = table.dispatch("get_invoice", {"invoice_id": 7}, context={"api_token": secret})
    assert observation.ok
    assert observation.result == {"invoice_id": 7, "amount": 42, "token_length": len(secret)}
    (event,) = sink.events
    assert event.args == {"invoice_id": 7, "api_token": "[redacted]"}


@given(sent=json_values())
def test_the_model_sending_it_is_invalid_arguments_and_the_handler_never_runs(
    sent: object,
) -> None:
    calls: Counter[str] = Counter()
    sink = CapturingSink()
    table = _sinked(calls, sink)
    observation = table.dispatch(
        "get_invoice",
        {"invoice_id": 7, "api_token": sent},
        context={"api_token": CANARY},
    )
    assert observation.code == "invalid_arguments"
    assert observation.error is not None
    assert observation.error.details == (("api_token", SENT_BY_MODEL),)
    assert observation.error.retryable
    assert calls == Counter()
    assert CANARY not in json.dumps(sink.events[0].args)
    assert sink.events[0].args is not None
    assert sink.events[0].args["api_token"] == "[redacted]"


def test_the_model_sending_it_is_refused_by_dispatch_json_and_args_json_too() -> None:
    table = billing_table(Counter())
    request = json.dumps({"name": "get_invoice", "args": {"invoice_id": 1, "api_token": "x"}})
    assert table.dispatch_json(request).code == "invalid_arguments"
    text = json.dumps({"invoice_id": 1, "api_token": "x"})
    assert (
        table.dispatch_args_json("get_invoice", text, context={"api_token": "y"}).code
        == "invalid_arguments"
    )


@pytest.mark.parametrize("context", [None, {}, {"other": "x"}, {"invoice_id": 3}])
def test_a_missing_required_injected_value_is_internal_error_not_a_model_retry(
    context: dict[str, object] | None, caplog: pytest.LogCaptureFixture
) -> None:
    calls: Counter[str] = Counter()
    observation = billing_table(calls).dispatch("get_invoice", {"invoice_id": 1}, context=context)
    assert observation.code == "internal_error"
    assert observation.error is not None
    assert not observation.error.retryable
    assert calls == Counter()
    assert "lacks the injected arguments ['api_token']" in caplog.text


def test_context_never_overrides_a_parameter_that_is_not_injected() -> None:
    table = billing_table(Counter())
    observation = table.dispatch(
        "get_invoice", {"invoice_id": 1}, context={"api_token": "t", "invoice_id": 99}
    )
    assert observation.result == {"invoice_id": 1, "amount": 42, "token_length": 1}


def test_a_context_that_is_not_a_mapping_is_invalid_request() -> None:
    table = billing_table(Counter())
    bad: object = [("api_token", "t")]
    observation = table.dispatch("get_invoice", {"invoice_id": 1}, context=bad)  # type: ignore[arg-type]
    assert observation.code == "invalid_request"


@given(secret=st.text(min_size=4, alphabet=st.characters(codec="utf-8")))
def test_a_tool_error_quoting_the_injected_secret_is_withheld_whole(secret: str) -> None:
    secret = "S3CR3T-" + secret  # never text an observation holds on its own
    observation = billing_table(Counter()).dispatch(
        "fail", {"reason": "nope"}, context={"api_token": secret}
    )
    assert observation.code == "tool_error"
    assert secret not in observation.to_json()


def test_injected_values_are_validated_strictly_like_any_argument() -> None:
    observation = billing_table(Counter()).dispatch(
        "get_invoice", {"invoice_id": 1}, context={"api_token": 12345}
    )
    assert observation.code == "invalid_arguments"
    assert observation.error is not None
    assert observation.error.details[0][0] == "api_token"


def test_an_injected_parameter_with_a_default_may_be_left_out() -> None:
    def greet(name: str, locale: Annotated[str, Injected] = "en") -> str:
        return f"{locale}:{name}"

    table = Registry({"greet": Tool(greet, description="Greet.")})
    assert table.dispatch("greet", {"name": "a"}).result == "en:a"
    assert table.dispatch("greet", {"name": "a"}, context={"locale": "fr"}).result == "fr:a"
    assert table.tool_specs()[0].injected == ("locale",)
    assert table.tool_specs()[0].sensitive_paths == ()


def test_an_explicit_model_can_mark_a_top_level_field_injected() -> None:
    class Args(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(strict=True, extra="forbid")
        invoice_id: int
        api_token: Annotated[str, Sensitive, Injected]

    def look(invoice_id: int, api_token: str) -> int:
        return invoice_id + len(api_token)

    table = Registry({"look": Tool(look, description="Look.", args=Args)})
    assert "api_token" not in json.dumps(table.tool_schemas("mcp"))
    assert table.dispatch("look", {"invoice_id": 1}, context={"api_token": "abc"}).result == 4
    assert table.dispatch("look", {"invoice_id": 1, "api_token": "x"}).code == "invalid_arguments"


class Nested(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(strict=True, extra="forbid")
    token: Annotated[str, Injected]


def _nested(inner: Nested) -> None:
    return None


def _in_list(tokens: list[Annotated[str, Injected]]) -> None:
    return None


def _optional(token: Annotated[str, Injected] | None) -> None:
    return None


@pytest.mark.parametrize("handler", [_nested, _in_list, _optional])
def test_a_marker_that_is_not_a_top_level_parameter_refuses_the_table(handler: object) -> None:
    with pytest.raises(RegistryInvalid, match="Injected marks only top-level parameters"):
        Registry({"t": Tool(handler, description="T.")})  # type: ignore[arg-type]


def test_a_recorded_call_with_injected_values_replays_them_as_the_context(tmp_path: Path) -> None:
    def lookup(invoice_id: int, tenant: Annotated[str, Injected]) -> str:
        return f"{tenant}:{invoice_id}"

    trace = tmp_path / "trace.jsonl"
    live = Registry({"lookup": Tool(lookup, description="L.")}, sinks=[TraceRecorder(trace)])
    assert live.dispatch("lookup", {"invoice_id": 1}, context={"tenant": "acme"}).ok
    report = replay(Registry({"lookup": Tool(lookup, description="L.")}), trace)
    assert report.ok
    assert report.lines[0].observation == {"ok": True, "result": "acme:1"}
