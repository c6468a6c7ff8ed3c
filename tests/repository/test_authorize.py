"""authorize(): namespace gates, owner-becomes-caller, interface_access, terminal export.

These run the pure stage over in-memory blueprints (``strategies.MemoryLoader``,
a double of our own loader interface). The same rules run end to end, over
real files and the real pipeline, in ``tests/cases/`` via ``tests/test_cases.py``.
"""

from __future__ import annotations

import dataclasses

import pytest

from boring_dispatch.errors import (
    AccessInvalid,
    ChildUnregistered,
    InterfaceVersionMismatch,
    InvalidCallerReference,
    InvalidModuleId,
    ModuleNotFound,
    NamespaceRouteMissing,
    NamespaceSurfaceExcludes,
    NamespaceVersionMismatch,
    ResolutionFailed,
    UnauthorizedCaller,
)
from boring_dispatch.repository import ids
from boring_dispatch.repository.authorize import Authorization, authorize
from kits.strategies import MemoryLoader, Tree

TARGET = "root.alpha.leaf.interface.execute"
INSPECT = "root.beta.interface.inspect"


def public() -> dict[str, object]:
    return {"allow_all_modules": True, "allowed_callers": []}


def only(*callers: str) -> dict[str, object]:
    return {"allow_all_modules": False, "allowed_callers": list(callers)}


def _module(
    children: tuple[str, ...] = (),
    routes: dict[str, object] | None = None,
    exports: dict[str, object] | None = None,
) -> dict[str, object]:
    return {
        "version": 1,
        "children": {child: {} for child in children},
        "namespace_exports": routes or {},
        "sources": {},
        "exports": exports or {},
    }


def _route(access: object, surface: object = None) -> dict[str, object]:
    return {"version": 1, "access": access, "surface": surface or {"only": {TARGET: 3}}}


_PUBLIC: object = object()  # sentinel: "leave this policy public"


def fixture(
    *,
    root_gate: object = _PUBLIC,
    alpha_gate: object = _PUBLIC,
    terminal: object = _PUBLIC,
) -> Tree:
    """The upstream direct-authorization fixture (BLUEPRINTS-V6 5.6), gates public by default."""
    return {
        "root": _module(
            ("alpha", "beta", "betax"),
            {
                "alpha": _route(public() if root_gate is _PUBLIC else root_gate),
                "beta": _route(public(), {"only": {INSPECT: 1}}),
            },
        ),
        "root.alpha": _module(
            ("leaf",), {"leaf": _route(public() if alpha_gate is _PUBLIC else alpha_gate)}
        ),
        "root.alpha.leaf": _module(
            exports={
                TARGET: {
                    "access": public() if terminal is _PUBLIC else terminal,
                    "source_interface": "root.alpha.leaf.source.runtime.interface.execute",
                }
            }
        ),
        "root.beta": _module(("child",), exports={INSPECT: {"access": public()}}),
        "root.beta.child": _module(),
        "root.betax": _module(),
        "outsider": _module(),
    }


def run(tree: Tree, caller: str, *, version: int = 3) -> Authorization:
    return run_with(MemoryLoader(tree), caller, version=version)


def run_with(loader: MemoryLoader, caller: str, *, version: int = 3) -> Authorization:
    target_ancestry = loader.load_ancestry("root.alpha.leaf")
    exports = target_ancestry[-1].data["exports"]
    assert isinstance(exports, dict)
    export = exports[TARGET]
    assert isinstance(export, dict)
    loader.requested.clear()
    return authorize(
        loader,
        caller=caller,
        target=TARGET,
        target_ancestry=target_ancestry,
        export=export,
        version=version,
    )


def routes_of(tree: Tree, module_id: str) -> dict[str, object]:
    routes = tree[module_id]["namespace_exports"]
    assert isinstance(routes, dict)
    return routes


def route_of(tree: Tree, module_id: str, segment: str) -> dict[str, object]:
    route = routes_of(tree, module_id)[segment]
    assert isinstance(route, dict)
    return route


# --------------------------------------------------------------------------- #
# Which boundaries are crossed, and who the caller is at each


def test_a_caller_inside_every_owner_crosses_no_gate_and_the_owner_admits_itself() -> None:
    result = run(fixture(terminal=only()), "root.alpha.leaf")
    assert result.crossed_gates == ()
    assert [(f.kind, f.caller_is_self, f.admits) for f in result.filters] == [
        ("terminal-export", True, True)
    ]
    assert result.immediate_caller == "root.alpha.leaf"


def test_only_boundaries_below_the_common_ancestor_are_crossed() -> None:
    result = run(fixture(terminal=only("root")), "root.beta")
    assert result.crossed_gates == ("root.alpha",)
    assert result.immediate_caller == "root.alpha"


def test_without_a_common_ancestor_every_boundary_is_crossed_and_owners_become_callers() -> None:
    tree = fixture(root_gate=only("outsider"), alpha_gate=only("root"), terminal=only("root.alpha"))
    result = run(tree, "outsider")
    assert result.crossed_gates == ("root", "root.alpha")
    assert [(f.kind, f.owner_module_id, f.caller_module_id) for f in result.filters] == [
        ("namespace-route", "root", "outsider"),
        ("namespace-route", "root.alpha", "root"),
        ("terminal-export", "root.alpha.leaf", "root.alpha"),
    ]
    assert [(g.route_owner_id, g.child_module_id) for g in result.gates] == [
        ("root", "root.alpha"),
        ("root.alpha", "root.alpha.leaf"),
    ]
    assert {g.interface_version for g in result.gates} == {3}


def test_the_original_caller_is_not_propagated_past_a_gate() -> None:
    tree = fixture(root_gate=only("outsider"), alpha_gate=only("root"), terminal=only("outsider"))
    with pytest.raises(UnauthorizedCaller) as refused:
        run(tree, "outsider")
    assert refused.value.message.endswith(f"[caller-filtered:terminal-export:{TARGET}]")


def test_a_gate_admitting_the_caller_does_not_let_its_owner_through_the_next_gate() -> None:
    tree = fixture(alpha_gate=only("root.beta"), terminal=only("root.alpha"))
    assert run(tree, "root.beta.child").crossed_gates == ("root.alpha",)
    with pytest.raises(UnauthorizedCaller) as refused:
        run(tree, "outsider")
    assert refused.value.message.endswith("[caller-filtered:namespace-route:root.alpha]")


# --------------------------------------------------------------------------- #
# Denials name the filter that refused


@pytest.mark.parametrize(
    ("tree", "diagnostic"),
    [
        (fixture(root_gate=only("root.beta")), "caller-filtered:namespace-route:root"),
        (fixture(alpha_gate=only("root.beta")), "caller-filtered:namespace-route:root.alpha"),
        (fixture(terminal=only("root.beta")), f"caller-filtered:terminal-export:{TARGET}"),
    ],
)
def test_a_caller_absent_from_a_policy_is_refused_by_name(tree: Tree, diagnostic: str) -> None:
    with pytest.raises(UnauthorizedCaller) as refused:
        run(tree, "outsider")
    error = refused.value
    assert error.code == "dispatcher.unauthorized_caller"
    assert error.message == f"outsider is not an allowed caller of {TARGET} [{diagnostic}]"
    assert error.caller_module_id == "outsider"
    assert error.interface_id == TARGET
    assert error.target_module_id == "root.alpha.leaf"


def test_interface_access_narrows_the_route_for_the_same_caller() -> None:
    tree = fixture(root_gate=only("outsider"), alpha_gate=only("root"), terminal=only("root.alpha"))
    route_of(tree, "root", "alpha")["interface_access"] = {TARGET: only("root.beta")}
    with pytest.raises(UnauthorizedCaller) as refused:
        run(tree, "outsider")
    assert refused.value.message.endswith("[caller-filtered:namespace-interface:root]")


def test_interface_access_that_admits_is_recorded_after_its_route() -> None:
    tree = fixture(terminal=public())
    route_of(tree, "root", "alpha")["interface_access"] = {TARGET: only("outsider")}
    result = run(tree, "outsider")
    assert [(f.kind, f.owner_module_id) for f in result.filters] == [
        ("namespace-route", "root"),
        ("namespace-interface", "root"),
        ("namespace-route", "root.alpha"),
        ("terminal-export", "root.alpha.leaf"),
    ]


def test_the_route_policy_is_judged_before_interface_access() -> None:
    tree = fixture(root_gate=only("root.beta"))
    route_of(tree, "root", "alpha")["interface_access"] = {TARGET: only("outsider")}
    with pytest.raises(UnauthorizedCaller) as refused:
        run(tree, "outsider")
    assert refused.value.message.endswith("[caller-filtered:namespace-route:root]")


def test_interface_access_for_other_exports_does_not_apply() -> None:
    tree = fixture()
    route_of(tree, "root", "alpha")["interface_access"] = {INSPECT: only()}
    assert run(tree, "outsider").crossed_gates == ("root", "root.alpha")


def test_interface_access_of_a_skipped_gate_does_not_apply() -> None:
    tree = fixture()
    route_of(tree, "root", "alpha")["interface_access"] = {TARGET: only()}
    assert run(tree, "root.beta").crossed_gates == ("root.alpha",)


# --------------------------------------------------------------------------- #
# The access predicate


def test_naming_a_module_admits_it_and_its_descendants_but_not_its_parent_or_siblings() -> None:
    tree = fixture(alpha_gate=only("root.beta"))
    assert run(tree, "root.beta").crossed_gates == ("root.alpha",)
    assert run(tree, "root.beta.child").crossed_gates == ("root.alpha",)
    for refused_caller in ("root", "root.betax"):
        with pytest.raises(UnauthorizedCaller):
            run(tree, refused_caller)


def test_naming_a_child_does_not_admit_its_parent() -> None:
    tree = fixture(alpha_gate=only("root.beta.child"))
    assert run(tree, "root.beta.child").crossed_gates == ("root.alpha",)
    with pytest.raises(UnauthorizedCaller):
        run(tree, "root.beta")


def test_a_private_policy_admits_only_its_owner() -> None:
    tree = fixture(terminal=only())
    assert run(tree, "root.alpha.leaf").filters[-1].caller_is_self
    with pytest.raises(UnauthorizedCaller):
        run(tree, "root.alpha")


@pytest.mark.parametrize("value", ["true", "True", 1, "yes", None, [True], {"x": True}])
def test_only_a_literal_true_makes_a_policy_public(value: object) -> None:
    tree = fixture(terminal={"allow_all_modules": value, "allowed_callers": []})
    with pytest.raises(UnauthorizedCaller):
        run(tree, "root.alpha")


def test_every_allowlist_entry_is_loaded_even_after_a_match() -> None:
    loader = MemoryLoader(fixture(terminal=only("root.alpha", "root.beta.child", "outsider")))
    run_with(loader, "root.alpha")
    assert loader.requested == ["root.alpha", "root.beta.child", "outsider"]


def test_a_public_policy_still_loads_the_modules_it_names() -> None:
    tree = fixture(terminal={"allow_all_modules": True, "allowed_callers": ["ghost"]})
    with pytest.raises(ModuleNotFound):
        run(tree, "root.alpha")


def test_an_allowlist_naming_a_missing_module_aborts_even_after_a_match() -> None:
    with pytest.raises(ModuleNotFound):
        run(fixture(terminal=only("root.alpha", "ghost")), "root.alpha")


def test_an_allowlist_naming_an_unregistered_child_aborts() -> None:
    tree = fixture(terminal=only("root.alpha.hidden"))
    tree["root.alpha.hidden"] = _module()
    with pytest.raises(ChildUnregistered):
        run(tree, "root.alpha")


def test_relative_references_resolve_against_the_policy_owner() -> None:
    tree = fixture(alpha_gate=only("..beta", ".leaf"), terminal=only("...alpha"))
    result = run(tree, "root.beta.child")
    assert [f.resolved_callers for f in result.filters] == [
        ("root.alpha.leaf", "root.beta"),
        ("root.alpha",),
    ]


def test_resolved_callers_are_unique() -> None:
    result = run(fixture(terminal=only("root.alpha", "root.alpha", "...alpha")), "root.alpha")
    assert result.filters[-1].resolved_callers == ("root.alpha",)


@pytest.mark.parametrize(
    ("entry", "code"),
    [
        (".", "dispatcher.invalid_caller_reference"),
        ("...", "dispatcher.invalid_caller_reference"),
        ("....root", "dispatcher.invalid_caller_reference"),
        ("", "dispatcher.invalid_module_id"),
        ("Root", "dispatcher.invalid_module_id"),
        ("root.", "dispatcher.invalid_module_id"),
        ("root..alpha", "dispatcher.invalid_module_id"),
        (".Leaf", "dispatcher.invalid_module_id"),
        ("root.alpha.__init__", "dispatcher.invalid_module_id"),
        (" root", "dispatcher.invalid_module_id"),
        ("\uff52oot", "dispatcher.invalid_module_id"),
    ],
)
def test_a_malformed_allowlist_entry_aborts_the_request(entry: str, code: str) -> None:
    with pytest.raises((InvalidCallerReference, InvalidModuleId)) as refused:
        run(fixture(terminal=only("root.alpha", entry)), "root.alpha")
    assert refused.value.code == code


# --------------------------------------------------------------------------- #
# Malformed policies fail closed


MALFORMED_ACCESS: list[object] = [
    None,
    [],
    "public",
    True,
    {},
    {"allow_all_modules": True},
    {"allow_all_modules": True, "allowed_callers": None},
    {"allow_all_modules": False, "allowed_callers": "root.alpha"},
    {"allow_all_modules": False, "allowed_callers": ("root.alpha",)},
    {"allow_all_modules": False, "allowed_callers": [1]},
    {"allow_all_modules": False, "allowed_callers": ["root.alpha", None]},
    {"allow_all_modules": False, "allowed_callers": [["root.alpha"]]},
    {"allow_all_modules": False, "allowed_callers": {"root.alpha": {}}},
]


@pytest.mark.parametrize("access", MALFORMED_ACCESS)
@pytest.mark.parametrize("where", ["route", "interface", "terminal"])
def test_a_malformed_access_object_is_refused_wherever_it_is(access: object, where: str) -> None:
    tree = fixture(terminal=access) if where == "terminal" else fixture(root_gate=access)
    if where == "interface":
        tree = fixture()
        route_of(tree, "root", "alpha")["interface_access"] = {TARGET: access}
    with pytest.raises(AccessInvalid) as refused:
        run(tree, "outsider")
    assert refused.value.code == "dispatcher.access_invalid"


def test_an_export_without_access_is_refused() -> None:
    tree = fixture()
    exports = tree["root.alpha.leaf"]["exports"]
    assert isinstance(exports, dict)
    del exports[TARGET]["access"]
    with pytest.raises(AccessInvalid):
        run(tree, "root.alpha.leaf")


@pytest.mark.parametrize("value", [None, [], [TARGET], "x", 1])
def test_interface_access_must_be_a_mapping_when_present(value: object) -> None:
    tree = fixture()
    route_of(tree, "root", "alpha")["interface_access"] = value
    with pytest.raises(AccessInvalid):
        run(tree, "outsider")


# --------------------------------------------------------------------------- #
# Route structure


def test_a_crossed_boundary_without_a_route_is_refused() -> None:
    tree = fixture()
    del routes_of(tree, "root")["alpha"]
    with pytest.raises(NamespaceRouteMissing) as refused:
        run(tree, "outsider")
    assert refused.value.message == "missing namespace export root->alpha"
    assert refused.value.code == "dispatcher.namespace_route_missing"


@pytest.mark.parametrize("route", [None, [], "public", True])
def test_a_route_that_is_not_a_mapping_is_missing(route: object) -> None:
    tree = fixture()
    routes_of(tree, "root.alpha")["leaf"] = route
    with pytest.raises(NamespaceRouteMissing) as refused:
        run(tree, "root.beta")
    assert refused.value.message == "missing namespace export root.alpha->leaf"


def test_a_skipped_boundary_needs_no_route() -> None:
    tree = fixture()
    del routes_of(tree, "root")["alpha"]
    assert run(tree, "root.beta").crossed_gates == ("root.alpha",)


@pytest.mark.parametrize("version", [2, True, 0, -1, "1", 1.0, None])
def test_a_route_must_pin_the_child_module_version_exactly(version: object) -> None:
    tree = fixture()
    route_of(tree, "root", "alpha")["version"] = version
    with pytest.raises(NamespaceVersionMismatch) as refused:
        run(tree, "outsider")
    assert refused.value.code == "dispatcher.namespace_version_mismatch"


def test_the_route_version_is_compared_with_the_child_module_not_the_interface() -> None:
    tree = fixture()
    tree["root.alpha"]["version"] = 3
    with pytest.raises(NamespaceVersionMismatch):
        run(tree, "outsider")
    route_of(tree, "root", "alpha")["version"] = 3
    assert run(tree, "outsider").crossed_gates == ("root", "root.alpha")


@pytest.mark.parametrize(
    "surface",
    [
        {"only": {}},
        {"only": {TARGET: 2}},
        {"only": {TARGET: True}},
        {"only": {TARGET: "3"}},
        {"only": {TARGET: 3.0}},
        {"only": {TARGET + "x": 3}},
        {"only": {"root.alpha.leaf.interface.Execute": 3}},
        {"only": [TARGET]},
        {"all": True},
        [],
        "all",
        None,
    ],
)
def test_a_surface_must_list_the_exact_export_at_the_chosen_version(surface: object) -> None:
    tree = fixture()
    route_of(tree, "root", "alpha")["surface"] = surface
    with pytest.raises(NamespaceSurfaceExcludes) as refused:
        run(tree, "outsider")
    assert refused.value.message == f"namespace surface excludes {TARGET}@3"


def test_surface_checks_come_before_the_route_policy() -> None:
    tree = fixture(root_gate=only("root.beta"))
    route_of(tree, "root", "alpha")["surface"] = {"only": {}}
    with pytest.raises(NamespaceSurfaceExcludes):
        run(tree, "outsider")


# --------------------------------------------------------------------------- #
# The stage's own inputs


@pytest.mark.parametrize("version", [True, 0, -3])
def test_the_chosen_version_must_be_a_strict_positive_integer(version: int) -> None:
    with pytest.raises(InterfaceVersionMismatch):
        run(fixture(), "root.alpha.leaf", version=version)


def test_an_ancestry_that_is_not_the_targets_is_refused() -> None:
    loader = MemoryLoader(fixture())
    wrong = loader.load_ancestry("root.beta")
    with pytest.raises(ResolutionFailed):
        authorize(
            loader,
            caller="outsider",
            target=TARGET,
            target_ancestry=wrong,
            export={"access": public()},
            version=3,
        )


@pytest.mark.parametrize("caller", ["", "Root", "root.", "root..beta", "root.__class__"])
def test_an_invalid_caller_id_is_refused(caller: str) -> None:
    with pytest.raises(InvalidModuleId):
        run(fixture(), caller)


def test_a_look_alike_caller_is_not_its_namesake() -> None:
    tree = fixture(alpha_gate=only("root.beta"))
    with pytest.raises(UnauthorizedCaller):
        run(tree, "root.betax")
    with pytest.raises(UnauthorizedCaller):
        run(tree, "root.beta-x")


def test_the_result_is_immutable() -> None:
    result = run(fixture(), "root.alpha.leaf")
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.immediate_caller = "outsider"  # type: ignore[misc]
    assert ids.parse_module_id(result.immediate_caller) == ("root", "alpha", "leaf")
