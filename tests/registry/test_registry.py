from __future__ import annotations

from types import MappingProxyType

import pytest

from boring_dispatch import Registry, Tool
from boring_dispatch.errors import RegistryInvalid, UnknownTool
from boring_dispatch.observe.audit import AuditEvent
from boring_dispatch.registry.pipeline import TableLimits

CALLS: list[str] = []


def get_job(job_id: int) -> dict[str, object]:
    CALLS.append("get_job")
    return {"job_id": job_id, "status": "done"}


def finish(answer: str) -> dict[str, object]:
    CALLS.append("finish")
    return {"answer": answer}


def big(size: int) -> str:
    CALLS.append("big")
    return "x" * size


def table(**extra: Tool) -> dict[str, Tool]:
    return {
        "get_job": Tool(get_job, description="Look up one job by id."),
        "finish": Tool(finish, description="End the session with an answer."),
        **extra,
    }


def test_names_are_the_bound_names_sorted() -> None:
    assert Registry(table()).names() == ("finish", "get_job")


def test_a_known_name_returns_an_ok_observation() -> None:
    observation = Registry(table()).dispatch("get_job", {"job_id": 7})
    assert observation.ok
    assert observation.result == {"job_id": 7, "status": "done"}


def test_the_mapping_is_copied_so_later_changes_change_nothing() -> None:
    mapping = table()
    registry = Registry(mapping)
    mapping["run_shell"] = Tool(big, description="Oops.")
    del mapping["finish"]
    assert registry.names() == ("finish", "get_job")
    assert registry.dispatch("run_shell", {"size": 1}).code == "unknown_tool"
    assert registry.dispatch("finish", {"answer": "a"}).ok


def test_a_built_table_has_no_way_to_add_a_name() -> None:
    registry = Registry(table())
    for method in ("register", "add", "update", "__setitem__", "setdefault", "add_tool"):
        assert not hasattr(registry, method)
    with pytest.raises(AttributeError):
        registry._tools = {}
    with pytest.raises(AttributeError):
        registry.extra = 1
    with pytest.raises(TypeError):
        registry.tools["run_shell"] = Tool(big, description="Oops.")  # type: ignore[index]
    assert isinstance(registry.tools, MappingProxyType)
    assert registry.names() == ("finish", "get_job")


def test_a_disabled_tool_looks_exactly_like_an_unknown_one() -> None:
    registry = Registry(table(big=Tool(big, description="Big.", enabled=False)))
    CALLS.clear()
    assert registry.names() == ("finish", "get_job")
    disabled = registry.dispatch("big", {"size": 1})
    unknown = registry.dispatch("bigger", {"size": 1})
    assert disabled.code == unknown.code == "unknown_tool"
    assert CALLS == []
    with pytest.raises(UnknownTool):
        registry.restrict({"big"})


@pytest.mark.parametrize(
    "name",
    ["", "get job", "x" * 65, "get_job\n", "get/job", "\uff47et_job", "caf\u00e9", 7, None],
)
def test_a_name_outside_the_allowed_alphabet_fails_at_build(name: object) -> None:
    with pytest.raises(RegistryInvalid) as caught:
        Registry({name: Tool(get_job, description="d")})  # type: ignore[dict-item]
    assert caught.value.code == "registry_invalid"


def test_a_name_of_sixty_four_allowed_characters_is_accepted() -> None:
    name = "a.B-9_" + "x" * 58
    assert Registry({name: Tool(get_job, description="d")}).names() == (name,)


@pytest.mark.parametrize(
    "tool",
    [
        get_job,
        Tool(get_job, description=""),
        Tool(get_job, description="   \n"),
        Tool(get_job, description="Look up\u202e a job."),
        Tool(get_job, description="Look up\u200b a job."),
        Tool(get_job, description="Look up\x1b[31m a job."),
        Tool(get_job, description="Look up \U000e0041 a job."),
        Tool(get_job, description="x" * 5000),
        Tool(get_job, description="d", audience="everyone"),  # type: ignore[arg-type]
        Tool("get_job", description="d"),  # type: ignore[arg-type]
    ],
)
def test_a_row_that_is_not_a_well_described_tool_fails_at_build(tool: object) -> None:
    with pytest.raises(RegistryInvalid):
        Registry({"get_job": tool})  # type: ignore[dict-item]


def test_a_description_may_span_lines() -> None:
    assert Registry({"get_job": Tool(get_job, description="Look up.\n\tBy id.")}).names()


def test_the_surface_name_follows_the_tool_name_rules() -> None:
    assert Registry(table(), name="support").name == "support"
    with pytest.raises(RegistryInvalid):
        Registry(table(), name="support bot")


def test_a_sink_must_have_a_record_method() -> None:
    with pytest.raises(RegistryInvalid):
        Registry(table(), sinks=[object()])  # type: ignore[list-item]


def test_a_non_mapping_fails_at_build() -> None:
    with pytest.raises(RegistryInvalid):
        Registry([("get_job", Tool(get_job, description="d"))])  # type: ignore[arg-type]


def test_restrict_shrinks_the_table() -> None:
    registry = Registry(table(), name="support")
    smaller = registry.restrict({"get_job"})
    assert smaller.names() == ("get_job",)
    assert smaller.name == "support"
    assert smaller.dispatch("finish", {"answer": "a"}).code == "unknown_tool"
    assert smaller.dispatch("get_job", {"job_id": 1}).ok
    assert registry.names() == ("finish", "get_job")


def test_restrict_with_a_name_the_table_lacks_raises() -> None:
    registry = Registry(table())
    with pytest.raises(UnknownTool) as caught:
        registry.restrict({"get_job", "run_shell"})
    assert caught.value.code == "unknown_tool"


def test_a_restricted_table_cannot_get_back_what_it_dropped() -> None:
    smaller = Registry(table()).restrict(["get_job"])
    with pytest.raises(UnknownTool):
        smaller.restrict({"get_job", "finish"})


def test_restrict_refuses_a_bare_string() -> None:
    with pytest.raises(TypeError):
        Registry(table()).restrict("get_job")


def test_restrict_to_nothing_is_an_empty_table() -> None:
    empty = Registry(table()).restrict(())
    assert empty.names() == ()
    assert empty.dispatch("get_job", {"job_id": 1}).code == "unknown_tool"


def test_tool_schemas_come_in_three_styles_from_the_same_table() -> None:
    registry = Registry(table())
    openai = registry.tool_schemas("openai")
    anthropic = registry.tool_schemas("anthropic")
    mcp = registry.tool_schemas("mcp")
    assert [item["function"]["name"] for item in openai] == ["finish", "get_job"]  # type: ignore[index]
    assert all(item["type"] == "function" for item in openai)
    assert [item["name"] for item in anthropic] == [item["name"] for item in mcp]
    get_job_schema = mcp[1]["inputSchema"]
    assert get_job_schema == anthropic[1]["input_schema"]
    assert get_job_schema == openai[1]["function"]["parameters"]  # type: ignore[index]
    assert get_job_schema["properties"]["job_id"]["type"] == "integer"  # type: ignore[index]
    assert mcp[1]["description"] == "Look up one job by id."


def test_tool_schemas_are_fresh_copies() -> None:
    registry = Registry(table())
    first = registry.tool_schemas("mcp")
    first[0]["inputSchema"]["properties"] = {}  # type: ignore[index]
    assert registry.tool_schemas("mcp")[0]["inputSchema"]["properties"]  # type: ignore[index]


def test_an_unknown_schema_style_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="style"):
        Registry(table()).tool_schemas("gemini")  # type: ignore[arg-type]


def test_dispatch_accepts_none_for_no_arguments_and_any_mapping() -> None:
    def ping() -> str:
        return "pong"

    registry = Registry({"ping": Tool(ping, description="Ping."), **table()})
    assert registry.dispatch("ping").result == "pong"
    assert registry.dispatch("get_job", MappingProxyType({"job_id": 3})).ok


def test_a_result_over_the_cap_is_observation_too_large_after_the_call() -> None:
    limits = TableLimits(max_observation_bytes=100)
    registry = Registry({"big": Tool(big, description="Big.")}, limits=limits)
    CALLS.clear()
    assert registry.dispatch("big", {"size": 90}).ok
    assert registry.dispatch("big", {"size": 99}).code == "observation_too_large"
    assert CALLS == ["big", "big"]


def test_the_default_observation_cap_is_64_kib_of_json() -> None:
    registry = Registry({"big": Tool(big, description="Big.")})
    assert registry.limits.max_observation_bytes == 64 * 1024
    assert registry.dispatch("big", {"size": 64 * 1024 - 2}).ok
    assert registry.dispatch("big", {"size": 64 * 1024 - 1}).code == "observation_too_large"


@pytest.mark.parametrize("field", ["max_request_bytes", "max_depth", "max_observation_bytes"])
@pytest.mark.parametrize("value", [0, -1, 1.5, True])
def test_limits_must_be_positive_ints(field: str, value: object) -> None:
    with pytest.raises(ValueError, match="positive"):
        TableLimits(**{field: value})  # type: ignore[arg-type]


def test_the_default_audience_is_both_and_others_are_kept() -> None:
    registry = Registry(table(big=Tool(big, description="Big.", audience="machine")))
    assert registry.tools["get_job"].audience == "both"
    assert registry.tools["big"].audience == "machine"


def test_restrict_keeps_the_sinks() -> None:
    events: list[AuditEvent] = []

    class Sink:
        def record(self, event: AuditEvent) -> None:
            events.append(event)

    smaller = Registry(table(), sinks=[Sink()]).restrict({"finish"})
    smaller.dispatch("finish", {"answer": "a"})
    assert [event.tool for event in events] == ["finish"]


def test_repr_shows_the_surface_and_names() -> None:
    assert repr(Registry(table(), name="support")) == (
        "Registry(name='support', names=('finish', 'get_job'))"
    )


@pytest.mark.parametrize("made", ["built", "restricted", "fixture_world"])
def test_a_built_table_cannot_be_built_again_in_place(made: str) -> None:
    """``__init__`` called again on a table (a restricted one above all) never grows it."""
    full = Registry(table())
    chosen = {
        "built": lambda: Registry({"get_job": table()["get_job"]}),
        "restricted": lambda: full.restrict({"get_job"}),
        "fixture_world": lambda: full.restrict({"get_job"}).fixture_world(allow_missing=True),
    }[made]()
    before = chosen.names()
    with pytest.raises((RegistryInvalid, TypeError, AttributeError)):
        chosen.__init__(table())
    assert chosen.names() == before
    assert chosen.dispatch("finish", {"answer": "a"}).code == "unknown_tool"
