"""A result that quotes a sensitive value is withheld from the records whatever the quoting.

The result reaches the model (the handler chose to return it), but its copy in
the audit and trace records is withheld whole when it holds a sensitive value.
A secret with a tab, a quote, a backslash or non-ASCII text looks different
once quoted by ``repr`` (or as bytes) and then written as JSON: the check must
look at the result's text values, not only at their JSON spelling. Families:
secrets with special characters times quoting forms times places in the result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from hypothesis import given, settings
from hypothesis import strategies as st

from boring_dispatch import Registry, Sensitive, Tool
from boring_dispatch.observe.redact import PLACEHOLDER
from boring_dispatch.testing import CapturingSink

_SECRETS = st.text(
    alphabet=st.characters(exclude_categories=["Cs"], min_codepoint=0x09), min_size=6
).filter(lambda s: any(c in s for c in "\t\n\"'\\") or not s.isascii())

_QUOTES: dict[str, Callable[[Any], str]] = {
    "plain": lambda v: v if isinstance(v, str) else v.decode(),
    "repr": repr,
    "str": str,
    "format": lambda v: f"got {v!r} here",
}


@given(
    secret=_SECRETS,
    quote=st.sampled_from(sorted(_QUOTES)),
    place=st.sampled_from(["value", "key", "list"]),
    kind=st.sampled_from(["str", "bytes"]),
)
@settings(max_examples=300)
def test_a_result_quoting_a_secret_is_withheld_in_the_records(
    secret: str, quote: str, place: str, kind: str
) -> None:
    def echo_str(key: Annotated[str, Sensitive]) -> object:
        return _placed(_QUOTES[quote](key), place)

    def echo_bytes(key: Annotated[bytes, Sensitive]) -> object:
        return _placed(_QUOTES[quote](key), place)

    sink = CapturingSink()
    table = Registry(
        {"str": Tool(echo_str, description="s"), "bytes": Tool(echo_bytes, description="b")},
        sinks=[sink],
    )
    observation = table.dispatch(kind, {"key": secret})
    assert observation.ok
    (event,) = sink.events
    assert event.observation.result == PLACEHOLDER


def _placed(text: str, place: str) -> object:
    if place == "key":
        return {text: 1}
    if place == "list":
        return {"items": ["x", text]}
    return {"echo": text}
