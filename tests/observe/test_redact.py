from __future__ import annotations

import copy
import json
from typing import Annotated

from hypothesis import given
from pydantic import BaseModel, ConfigDict, SecretStr

from boring_dispatch.observe.redact import (
    PLACEHOLDER,
    SensitiveNode,
    redact,
    redact_invalid,
    scrub,
    sensitive_values,
)
from boring_dispatch.registry.schema import Sensitive, sensitive_node
from kits.strategies import json_values


class Card(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    number: SecretStr
    holder: str


class Payment(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    api_token: Annotated[str, Sensitive]
    cards: list[Card]
    headers: dict[str, SecretStr]
    note: str


NODE = sensitive_node(Payment)
ARGS: dict[str, object] = {
    "api_token": "tok-1",
    "cards": [{"number": "4111-1", "holder": "Ada"}, {"number": "4111-2", "holder": "Bob"}],
    "headers": {"authorization": "Bearer b-1", "accept": "a-1"},
    "note": "hello",
}


def test_sensitive_places_become_the_placeholder_and_the_rest_stays() -> None:
    assert redact(ARGS, NODE) == {
        "api_token": PLACEHOLDER,
        "cards": [
            {"number": PLACEHOLDER, "holder": "Ada"},
            {"number": PLACEHOLDER, "holder": "Bob"},
        ],
        "headers": {"authorization": PLACEHOLDER, "accept": PLACEHOLDER},
        "note": "hello",
    }


def test_redaction_does_not_change_its_input() -> None:
    before = copy.deepcopy(ARGS)
    redact(ARGS, NODE)
    assert before == ARGS


def test_without_a_tree_nothing_is_redacted() -> None:
    assert redact(ARGS, None) is ARGS


def test_a_whole_sensitive_object_is_replaced_whole() -> None:
    node = SensitiveNode(keys={"login": SensitiveNode(whole=True)})
    assert redact({"login": {"user": "u", "password": "p"}}, node) == {"login": PLACEHOLDER}


def test_values_of_unexpected_shape_at_a_sensitive_key_are_still_redacted() -> None:
    assert redact({"api_token": ["tok", "en"], "note": 1}, NODE) == {
        "api_token": PLACEHOLDER,
        "note": 1,
    }


def test_data_nested_too_deep_under_a_sensitive_branch_is_redacted_whole() -> None:
    deep: object = {"secret": "s-deep", "plain": "p-deep"}
    for _ in range(70):
        deep = [deep]
    rendered = repr(redact(deep, _chain(70)))
    assert "s-deep" not in rendered
    assert "p-deep" not in rendered
    assert PLACEHOLDER in rendered


def _chain(levels: int) -> SensitiveNode:
    node = SensitiveNode(keys={"secret": SensitiveNode(whole=True)})
    for _ in range(levels):
        node = SensitiveNode(items=node)
    return node


@given(json_values())
def test_redaction_is_idempotent(value: object) -> None:
    args = {"api_token": value, "cards": value, "headers": value, "note": value}
    once = redact(args, NODE)
    assert redact(once, NODE) == once


@given(json_values(), json_values(), json_values())
def test_after_redaction_every_sensitive_place_holds_only_the_placeholder(
    token: object, cards: object, headers: object
) -> None:
    args = {"api_token": token, "cards": cards, "headers": headers, "note": "n"}
    assert set(sensitive_values(redact(args, NODE), NODE)) <= {PLACEHOLDER}


def test_sensitive_values_are_collected_as_text() -> None:
    assert sorted(sensitive_values(ARGS, NODE)) == sorted(
        ["tok-1", "4111-1", "4111-2", "Bearer b-1", "a-1"]
    )
    wrapped = {"api_token": SecretStr("s-1"), "cards": [], "headers": {}, "note": ""}
    assert sensitive_values(wrapped, NODE) == ("s-1",)
    assert sensitive_values({"api_token": None, "note": "x"}, NODE) == ()


def test_scrub_replaces_plain_repr_and_json_forms_longest_first() -> None:
    secret = 'to"k\nen'
    text = f"a {secret} b {secret!r} c {json.dumps(secret)} d"
    scrubbed = scrub(text, [secret, "to"])
    assert "to" not in scrubbed
    assert "k\nen" not in scrubbed
    assert scrub("abc", ["", "zz"]) == "abc"


def test_invalid_arguments_redact_unknown_members_too() -> None:
    args = {"api_key": "tok-typo", "note": "n", "api_token": "tok-1"}
    accepted = frozenset({"api_token", "cards", "headers", "note"})
    assert redact_invalid(args, NODE, accepted) == {
        "api_key": PLACEHOLDER,
        "note": "n",
        "api_token": PLACEHOLDER,
    }


def test_without_a_schema_every_value_is_redacted_and_the_keys_stay() -> None:
    assert redact_invalid({"command": "rm -rf /", "n": 1}, None, None) == {
        "command": PLACEHOLDER,
        "n": PLACEHOLDER,
    }


def test_a_value_of_the_wrong_shape_where_secrets_belong_is_redacted() -> None:
    args = {"cards": "4111-1", "headers": ["Bearer b-1"], "api_token": None, "note": "n"}
    assert redact(args, NODE) == {
        "cards": PLACEHOLDER,
        "headers": [PLACEHOLDER],
        "api_token": PLACEHOLDER,
        "note": "n",
    }
    assert redact({"cards": [None, ["4111-2"]]}, NODE) == {"cards": [None, PLACEHOLDER]}


def test_members_refused_as_extra_are_redacted_at_any_depth() -> None:
    args: dict[str, object] = {
        "cards": [{"number": "4111-1", "holder": "Ada", "cvv": "123-x"}],
        "note": "n",
    }
    before = copy.deepcopy(args)
    accepted = frozenset({"api_token", "cards", "headers", "note"})
    unknown = [("cards", 0, "cvv"), ("cards", 5, "x"), ("absent", "y")]
    assert redact_invalid(args, NODE, accepted, unknown) == {
        "cards": [{"number": PLACEHOLDER, "holder": "Ada", "cvv": PLACEHOLDER}],
        "note": "n",
    }
    assert args == before
