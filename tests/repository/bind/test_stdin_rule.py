"""``stdin_rule`` (what ``dispatcher describe`` prints) says what binding really does with stdin.

For generated bindings of both modes, well-formed and malformed, the rule is
checked against :func:`compile_binding` itself: ``refused`` means no call may
send stdin, ``required`` means no call may leave it out, ``accepted`` means
some call may do either.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from boring_dispatch.errors import ResolutionFailed
from boring_dispatch.repository.bind.binding import compile_binding, stdin_rule

IID = "demo.interface.run"


def _binds(interface: dict[str, object], argv: list[str], *, stdin: bool) -> bool:
    try:
        compiled = compile_binding(interface, interface_id=IID, argv=argv, stdin=stdin)
    except ResolutionFailed:
        return False
    assert compiled.takes_stdin is stdin
    return True


_ALLOW = st.sampled_from([True, False, None, "yes"])  # "yes" is malformed: not a boolean


@st.composite
def pattern_interfaces(draw: st.DrawFn) -> tuple[dict[str, object], list[list[str]]]:
    """Pattern mode: pattern i accepts exactly ``--p<i>``; some allow stdin."""
    allows = draw(st.lists(_ALLOW, min_size=0, max_size=4))
    patterns: list[object] = []
    for index, allow in enumerate(allows):
        pattern: dict[str, object] = {"name": f"p{index}", "required_flags": [f"--p{index}"]}
        if allow is not None:
            pattern["allow_stdin"] = allow
        patterns.append(pattern)
    if draw(st.booleans()) and patterns:
        patterns.append("not a mapping")
    binding = {"kind": "process", "entry": "Interface", "patterns": patterns}
    return {"process_binding": binding}, [[f"--p{i}"] for i in range(len(allows))]


@st.composite
def argument_interfaces(draw: st.DrawFn) -> tuple[dict[str, object], list[list[str]]]:
    """Argument mode: an optional ``--name`` option and maybe a stdin argument."""
    declared: dict[str, object] = {
        "name": {
            "description": "d",
            "required": False,
            "sensitivity": "public",
            "type": {"kind": "string"},
        }
    }
    bound: dict[str, object] = {"name": {"kind": "option", "name": "--name"}}
    stdin = draw(st.sampled_from(["none", "optional", "required", "unbound", "not-bool"]))
    if stdin != "none":
        required: object = {"required": True, "not-bool": "yes"}.get(stdin, False)
        declared["body"] = {
            "description": "d",
            "required": required,
            "sensitivity": "public",
            "type": {"kind": "string"},
        }
        if stdin != "unbound":  # declared but not bound: a malformed layout
            bound["body"] = {"kind": "stdin"}
    interface: dict[str, object] = {
        "contract": {"arguments": declared},
        "process_binding": {"kind": "process", "entry": "Interface", "arguments": bound},
    }
    return interface, [[], ["--name", "x"]]


@settings(max_examples=150, deadline=None)
@given(case=st.one_of(pattern_interfaces(), argument_interfaces()))
def test_the_rule_describe_prints_is_what_binding_does(
    case: tuple[dict[str, object], list[list[str]]],
) -> None:
    interface, argvs = case
    rule = stdin_rule(interface)
    with_stdin = any(_binds(interface, argv, stdin=True) for argv in argvs)
    without_stdin = any(_binds(interface, argv, stdin=False) for argv in argvs)
    assert rule in {"accepted", "required", "refused"}
    assert with_stdin == (rule != "refused")
    if rule == "required":
        assert not without_stdin
    if rule == "accepted":
        assert without_stdin


def test_no_binding_or_a_binding_that_is_not_a_mapping_takes_no_stdin() -> None:
    bindings: tuple[object, ...] = (None, [], "process", 1)
    for binding in bindings:
        interface: dict[str, object] = {"process_binding": binding}
        assert stdin_rule(interface) == "refused"
        assert not _binds(interface, [], stdin=True)
    assert stdin_rule({}) == "refused"


_HEADER_DEFECTS: tuple[tuple[str, object], ...] = (
    ("kind", None),  # None: the key is removed
    ("kind", "python"),
    ("kind", "Process"),
    ("kind", 1),
    ("entry", None),
    ("entry", ""),
    ("entry", 3),
    ("args_prefix", "python"),
    ("args_prefix", [""]),
    ("args_prefix", [1]),
    ("args_prefix", ["a\x00b"]),
    ("args_prefix", ["\ud800"]),
    ("unknown_key", "x"),
)


@settings(max_examples=150, deadline=None)
@given(
    case=st.one_of(pattern_interfaces(), argument_interfaces()),
    defect=st.sampled_from(_HEADER_DEFECTS),
)
def test_a_binding_the_stage_refuses_in_its_header_takes_no_stdin(
    case: tuple[dict[str, object], list[list[str]]], defect: tuple[str, object]
) -> None:
    """A wrong kind, an unknown key, a bad entry or args_prefix: refused by every call."""
    interface, argvs = case
    binding = dict(interface["process_binding"])  # type: ignore[call-overload]
    key, value = defect
    if value is None:
        binding.pop(key, None)
    else:
        binding[key] = value
    damaged = {**interface, "process_binding": binding}
    for argv in argvs:
        assert not _binds(damaged, argv, stdin=True)
        assert not _binds(damaged, argv, stdin=False)
    assert stdin_rule(damaged) == "refused"
