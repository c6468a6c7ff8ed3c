from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from boring_dispatch import Registry, Tool, ToolError
from boring_dispatch.errors import NoFixture, RegistryInvalid
from boring_dispatch.registry.fixtures import Fixture, Recorded, unused_fixtures
from kits import fixture_tables
from kits.fixture_tables import RAN, TABLE, UNFIXTURED

_NAMES = st.sampled_from(["get_job", "refund", "finish", "hidden", "os.system"])
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)


@pytest.fixture(autouse=True)
def _no_marks() -> Iterator[None]:
    RAN.clear()
    yield
    RAN.clear()


@given(name=_NAMES, args=st.dictionaries(st.sampled_from(["job_id", "answer", "x"]), _JSON))
def test_no_real_handler_runs_in_a_fixture_world_whatever_is_called(
    name: str, args: dict[str, object]
) -> None:
    world = TABLE.fixture_world()
    world.dispatch(name, args)
    world.dispatch(name, args, confirmed=True)
    assert RAN == []


def test_the_world_has_no_real_handler_anywhere() -> None:
    world = TABLE.fixture_world()
    real = {fixture_tables.get_job, fixture_tables.refund, fixture_tables.finish}
    assert not {tool.handler for tool in world.tools.values()} & real


def test_the_world_has_the_same_names_schemas_descriptions_and_policy_bits() -> None:
    world = TABLE.fixture_world()
    assert world.names() == TABLE.names() == ("finish", "get_job", "refund")
    for style in ("openai", "anthropic", "mcp"):
        assert world.tool_schemas(style) == TABLE.tool_schemas(style)
    assert world.name == TABLE.name
    assert world.limits == TABLE.limits
    assert world.dispatch("hidden", {"answer": "a"}).code == "unknown_tool"
    assert world.dispatch("refund", {"invoice_id": 1, "api_token": "tok"}).code == "denied"
    assert world.dispatch("get_job", {"job_id": "7"}).code == "invalid_arguments"


def test_recorded_outcomes_answer_results_and_tool_errors() -> None:
    world = TABLE.fixture_world()
    assert world.dispatch("get_job", {"job_id": 7}).to_dict() == {
        "ok": True,
        "result": {"job_id": 7, "status": "scheduled", "verbose": False},
    }
    assert world.dispatch("get_job", {"job_id": -1}).to_dict() == {
        "ok": False,
        "error": {"code": "tool_error", "message": "job ids are positive"},
    }


def test_defaults_are_part_of_the_canonical_arguments() -> None:
    world = TABLE.fixture_world()
    assert world.dispatch("get_job", {"job_id": 7, "verbose": False}).ok
    assert world.dispatch("get_job", {"job_id": 7, "verbose": True}).code == "no_fixture"


@given(job_id=st.integers(-(2**31), 2**31).filter(lambda n: n not in (7, -1)))
def test_arguments_without_a_fixture_are_no_fixture_never_a_success(job_id: int) -> None:
    observation = TABLE.fixture_world().dispatch("get_job", {"job_id": job_id})
    assert observation.to_dict() == {
        "ok": False,
        "error": {
            "code": "no_fixture",
            "message": "no fixture for these arguments of tool 'get_job'",
        },
    }
    assert str(job_id) not in (observation.error.message if observation.error else "")


@given(token=st.text(min_size=1, max_size=40))
def test_a_sensitive_value_never_keys_the_lookup(token: str) -> None:
    world = TABLE.fixture_world()
    observation = world.dispatch("refund", {"invoice_id": 1, "api_token": token}, confirmed=True)
    assert observation.to_dict() == {"ok": True, "result": {"refunded": 1}}
    assert RAN == []


@given(answer=st.text(max_size=30))
def test_a_stand_in_answers_with_the_tool_signature(answer: str) -> None:
    observation = TABLE.fixture_world().dispatch("finish", {"answer": answer})
    assert observation.to_dict() == {"ok": True, "result": {"answer": answer}}
    assert RAN == []


def test_a_stand_in_with_another_signature_is_refused() -> None:
    def wrong(answer: int) -> dict[str, object]:
        return {}

    with pytest.raises(RegistryInvalid, match="stand-in's signature"):
        UNFIXTURED.fixture_world({**fixture_tables.fixtures(), "finish": Fixture(stand_in=wrong)})


def test_a_world_of_a_tool_without_a_fixture_is_refused_unless_asked() -> None:
    with pytest.raises(
        RegistryInvalid, match=r"no fixture for tools \['finish', 'get_job', 'refund'\]"
    ):
        UNFIXTURED.fixture_world()
    world = UNFIXTURED.fixture_world(allow_missing=True)
    calls: list[tuple[str, dict[str, object]]] = [
        ("get_job", {"job_id": 7}),
        ("finish", {"answer": "x"}),
    ]
    for name, args in calls:
        assert world.dispatch(name, args).code == "no_fixture"
    assert RAN == []


def test_fixtures_given_to_the_world_replace_the_tools_own() -> None:
    world = UNFIXTURED.fixture_world(fixture_tables.fixtures())
    assert world.dispatch("get_job", {"job_id": 7}).ok


@pytest.mark.parametrize(
    ("fixture", "message"),
    [
        (Fixture(Recorded({"job_id": 7}, result=1), Recorded({"job_id": 7}, result=2)), "same"),
        (
            Fixture(Recorded({"job_id": 7}, result=1), Recorded({"job_id": 7, "verbose": False})),
            "same",
        ),
        (Fixture(Recorded({"job_id": "7"}, result=1)), r"do not fit the schema at \['job_id'\]"),
        (Fixture(Recorded({"nope": 1}, result=1)), "do not fit the schema"),
        (Fixture(Recorded({"job_id": 7}, result=float("nan"))), "not JSON data"),
        (Fixture(Recorded({"job_id": 7}, result=1, error="x")), "not both"),
    ],
)
def test_a_fixture_that_does_not_fit_its_tool_is_refused(fixture: Fixture, message: str) -> None:
    with pytest.raises(RegistryInvalid, match=message):
        UNFIXTURED.fixture_world({"get_job": fixture}, allow_missing=True)


def test_a_fixture_of_a_tool_the_table_lacks_is_refused() -> None:
    with pytest.raises(RegistryInvalid, match="'nope'"):
        TABLE.fixture_world({"nope": Fixture()})
    with pytest.raises(RegistryInvalid, match="'hidden'"):  # disabled: not in the table
        TABLE.fixture_world({"hidden": Fixture()})


def test_a_fixture_must_be_a_fixture() -> None:
    with pytest.raises(RegistryInvalid, match="fixture must be a Fixture"):
        Registry({"f": Tool(fixture_tables.finish, description="x", fixture={"a": 1})})  # type: ignore[arg-type]
    with pytest.raises(RegistryInvalid, match="Recorded"):
        Fixture({"job_id": 7})  # type: ignore[arg-type]


def test_a_real_handler_raising_no_fixture_is_an_internal_error() -> None:
    def sneaky() -> None:
        raise NoFixture("pretend")

    table = Registry({"sneaky": Tool(sneaky, description="x")})
    assert table.dispatch("sneaky").code == "internal_error"


def test_unused_fixtures_are_the_outcomes_no_call_used() -> None:
    world = TABLE.fixture_world()
    world.dispatch("get_job", {"job_id": 7})
    unused = unused_fixtures({**world.tools, "real": UNFIXTURED.tools["finish"]})
    assert [(u.tool, u.args) for u in unused] == [
        ("get_job", '{"job_id":-1,"verbose":false}'),
        ("refund", '{"api_token":"[redacted]","invoice_id":1}'),
    ]


def test_a_world_never_shares_audit_health_or_handlers_with_its_table() -> None:
    def boom(job_id: int) -> None:
        raise ToolError("real")

    table = Registry({"get_job": Tool(boom, description="x", fixture=Fixture(stand_in=boom))})
    # A stand-in is the fixture author's code: it runs, the real handler object is not the entry.
    assert table.fixture_world().dispatch("get_job", {"job_id": 1}).code == "tool_error"
