"""output_audiences: stdout/stderr audiences from contract outputs (seed "MCP result audiences")."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
import yaml

from boring_dispatch.repository.facts.audiences import output_audiences
from kits.cases import corpus_config

WRITES = [
    {"id": "out", "medium": "stdout", "access": "write"},
    {"id": "out2", "medium": "stdout", "access": "write"},
    {"id": "err", "medium": "stderr", "access": "write"},
    {"id": "file", "medium": "local-filesystem", "access": "write"},
]


def output(ref: object, audience: object = "machine", **more: object) -> dict[str, object]:
    body: dict[str, object] = {"id": f"o-{ref}", "direct_io_ref": ref, **more}
    if audience is not None:
        body["audience"] = audience
    return body


def interface(outputs: Sequence[object], writes: Sequence[object] = WRITES) -> dict[str, object]:
    return {
        "contract": {
            "outputs": list(outputs),
            "direct_io": {"reads": [], "writes": list(writes), "network": []},
        }
    }


@pytest.mark.parametrize("audience", ["machine", "human", "both"])
def test_one_valid_declaration_sets_the_stream(audience: str) -> None:
    assert output_audiences(interface([output("out", audience)])) == {
        "stdout": audience,
        "stderr": "machine",
    }
    assert output_audiences(interface([output("err", audience)])) == {
        "stdout": "machine",
        "stderr": audience,
    }


def test_streams_are_classified_separately() -> None:
    outputs = [output("out", "machine"), output("err", "human")]
    assert output_audiences(interface(outputs)) == {"stdout": "machine", "stderr": "human"}


def test_agreeing_declarations_keep_their_audience() -> None:
    outputs = [output("out", "both"), output("out2", "both"), output("out", "both")]
    assert output_audiences(interface(outputs))["stdout"] == "both"


def test_conflicting_declarations_give_machine() -> None:
    outputs = [output("out", "human"), output("out2", "both"), output("err", "human")]
    assert output_audiences(interface(outputs)) == {"stdout": "machine", "stderr": "human"}


@pytest.mark.parametrize("audience", [None, "Human", "user", "", 1, True, ["human"], {"a": 1}])
def test_a_missing_or_invalid_audience_gives_machine_even_next_to_valid_ones(
    audience: object,
) -> None:
    outputs = [output("out", "human"), output("out2", audience)]
    assert output_audiences(interface(outputs))["stdout"] == "machine"


def test_unmatched_outputs_contribute_nothing() -> None:
    outputs = [
        output("nowhere", "human"),
        output("file", "human"),
        output(None, "human"),
        output(["out"], "human"),
    ]
    assert output_audiences(interface(outputs)) == {"stdout": "machine", "stderr": "machine"}
    outputs.append(output("err", "both"))
    assert output_audiences(interface(outputs)) == {"stdout": "machine", "stderr": "both"}


def test_a_reference_to_a_read_entry_is_unmatched() -> None:
    body = interface([output("in", "human")])
    body["contract"]["direct_io"]["reads"] = [{"id": "in", "medium": "stdout"}]  # type: ignore[index]
    assert output_audiences(body)["stdout"] == "machine"


def test_a_duplicated_write_id_is_ambiguous() -> None:
    writes = [{"id": "out", "medium": "stdout"}, {"id": "out", "medium": "stderr"}]
    assert output_audiences(interface([output("out", "human")], writes)) == {
        "stdout": "machine",
        "stderr": "machine",
    }


@pytest.mark.parametrize(
    "body",
    [
        None,
        [],
        {},
        {"contract": None},
        {"contract": {"outputs": "x"}},
        {"contract": {"outputs": [None, 3, "x"], "direct_io": None}},
        {"contract": {"outputs": [output("out", "human")], "direct_io": {"writes": "out"}}},
        {
            "contract": {
                "outputs": [output("out", "human")],
                "direct_io": {"writes": [None, {"id": 1}]},
            }
        },
        {
            "contract": {
                "outputs": [output("out", "human")],
                "direct_io": {"writes": [{"id": "out", "medium": ["x"]}]},
            }
        },
    ],
)
def test_malformed_contracts_give_machine_and_never_raise(body: object) -> None:
    assert output_audiences(body) == {"stdout": "machine", "stderr": "machine"}  # type: ignore[arg-type]


def test_get_weather_stdout_is_machine_and_stderr_is_human() -> None:
    path = (
        corpus_config("famulus").parent
        / "skills/get-weather/_rtx/blueprints/rtx-weather-client.yaml"
    )
    source = yaml.safe_load(path.read_text(encoding="utf-8"))
    body = source["interfaces"][
        "get-weather._rtx.source.rtx-weather-client.interface.scripts-weather"
    ]
    assert output_audiences(body) == {"stdout": "machine", "stderr": "human"}
