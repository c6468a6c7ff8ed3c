"""The canonical arguments (a fixture's key) hold no secret, however a model serializes itself.

The sensitive tree is read off the validation schema (field names and
validation aliases). A model's serializer can show a field under another
name (``serialization_alias``, a ``model_serializer``), so the key must not
be the model's serialized form: it is the validated values by field name.
Families: every way a model renames or reshapes its output, checked in a
fixture file written by a real recorder and in the lookup of a fixture world
(two calls that differ only in the secret find the same outcome). Sets are
keyed in a fixed order, whatever the process's string hashing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    RootModel,
    computed_field,
    field_serializer,
    model_serializer,
)

from boring_dispatch import Registry, Sensitive, Tool
from boring_dispatch.registry.fixture_files import FixtureRecorder, read_fixtures

CANARY = "CANARY-4417"
STRICT = ConfigDict(strict=True, extra="forbid")


class SerializationAlias(BaseModel):
    model_config = STRICT
    number: Annotated[str, Sensitive] = Field(serialization_alias="num")


class BothAliases(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", populate_by_name=True)
    number: Annotated[str, Sensitive] = Field(alias="number", serialization_alias="out")


class ModelSerializer(BaseModel):
    model_config = STRICT
    number: Annotated[str, Sensitive]

    @model_serializer
    def _shown(self) -> dict[str, Any]:
        return {"n": self.number}


class WrapSerializer(BaseModel):
    model_config = STRICT
    number: Annotated[str, Sensitive]

    @model_serializer(mode="wrap")
    def _shown(self, handler: Any) -> dict[str, Any]:
        return {"copy": self.number, **handler(self)}


class ComputedCopy(BaseModel):
    model_config = STRICT
    number: Annotated[str, Sensitive]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def upper(self) -> str:
        return self.number.upper()


class FieldRename(BaseModel):
    model_config = STRICT
    number: Annotated[str, Sensitive]
    label: str = "x"

    @field_serializer("label")
    def _label(self, value: str) -> str:
        return f"{value}:{self.number}"


class Inner(BaseModel):
    model_config = STRICT
    number: Annotated[str, Sensitive]


class Rooted(RootModel[Inner]):
    model_config = ConfigDict(strict=True)


MODELS = [
    Rooted,
    SerializationAlias,
    BothAliases,
    ModelSerializer,
    WrapSerializer,
    ComputedCopy,
    FieldRename,
]


def _table(model: type[BaseModel], sinks: tuple[Any, ...] = ()) -> Registry:
    def pay(card: object) -> dict[str, bool]:
        return {"paid": True}

    pay.__annotations__ = {"card": model, "return": dict[str, bool]}

    return Registry({"pay": Tool(pay, description="Pay with a card.")}, sinks=sinks)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_a_recorded_fixture_never_holds_the_secret(model: type[BaseModel], tmp_path: Path) -> None:
    path = tmp_path / "pay.fixtures.jsonl"
    recorder = FixtureRecorder(path)
    table = _table(model, (recorder,))
    assert table.dispatch("pay", {"card": {"number": CANARY}}).ok
    recorder.close()
    text = path.read_text()
    assert text
    assert CANARY.casefold() not in text.casefold()
    # The file answers the same call, and a call with another secret, in a fixture world.
    world = _table(model).fixture_world(read_fixtures(path))
    assert world.dispatch("pay", {"card": {"number": CANARY}}).result == {"paid": True}
    assert world.dispatch("pay", {"card": {"number": "other"}}).result == {"paid": True}


_SET_KEY = """
import json
from boring_dispatch import Registry, Tool
from boring_dispatch.registry._canonical import canonical_text, fixture_args
def tag(names: frozenset[str]) -> None: ...
table = Registry({"tag": Tool(tag, description="Tag.")})
schema = table._table.entries["tag"].schema
names = [f"n{i}" for i in range(40)]
print(canonical_text(fixture_args(schema, schema.validate({"names": names}))))
"""


def test_a_set_is_keyed_in_one_order_whatever_the_hash_seed() -> None:
    keys = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", _SET_KEY],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        keys.add(done.stdout)
    assert len(keys) == 1


class Card(BaseModel):
    model_config = STRICT
    number: Annotated[str, Sensitive]


@pytest.mark.parametrize(
    ("annotation", "value"),
    [
        (list[int | Card], [1, {"number": CANARY}]),
        (tuple[int, Card], [1, {"number": CANARY}]),
        (list[str | Card], ["plain", {"number": CANARY}]),
        (dict[str, int | Card], {"a": 1, "b": {"number": CANARY}}),
    ],
    ids=["list_union", "tuple", "list_str_union", "dict_union"],
)
def test_a_recorded_fixture_of_mixed_items_loads_and_answers(
    annotation: object, value: object, tmp_path: Path
) -> None:
    """Where the schema cannot tell a plain item from one holding a secret, the recorder
    writes the placeholder (fail closed); the file must still load and answer the call."""

    def pay(cards: object) -> dict[str, bool]:
        return {"paid": True}

    pay.__annotations__ = {"cards": annotation, "return": dict[str, bool]}
    path = tmp_path / "pay.fixtures.jsonl"
    recorder = FixtureRecorder(path)
    live = Registry({"pay": Tool(pay, description="Pay.")}, sinks=[recorder])
    assert live.dispatch("pay", {"cards": value}).ok
    recorder.close()
    assert CANARY not in path.read_text()
    world = Registry({"pay": Tool(pay, description="Pay.")}).fixture_world(read_fixtures(path))
    assert world.dispatch("pay", {"cards": value}).result == {"paid": True}
