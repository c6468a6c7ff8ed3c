"""Properties of authorize() over random module trees (SECURITY.md C3, C5).

Each property compares the decisions for every (caller, target) pair of a
generated tree before and after one change. A decision is ``"admit"`` or the
error code; any error counts as "not admitted".
"""

from __future__ import annotations

from collections.abc import Mapping

from hypothesis import given
from hypothesis import strategies as st

from boring_dispatch.errors import RouteError
from boring_dispatch.repository.authorize import authorize
from kits.strategies import (
    LOOK_ALIKES_OF_A_B,
    MemoryLoader,
    Tree,
    edited_ids,
    export_id,
    module_trees,
    policy_at,
    policy_paths,
    tree_copy,
)

ADMIT = "admit"


def decide(tree: Tree, caller: str, terminal: str) -> str:
    loader = MemoryLoader(tree)
    target = export_id(terminal)
    try:
        ancestry = loader.load_ancestry(terminal)
        exports = ancestry[-1].data["exports"]
        assert isinstance(exports, Mapping)
        export = exports[target]
        assert isinstance(export, Mapping)
        authorize(
            loader,
            caller=caller,
            target=target,
            target_ancestry=ancestry,
            export=export,
            version=1,
        )
    except RouteError as error:
        return error.code
    return ADMIT


def decisions(tree: Tree) -> dict[tuple[str, str], str]:
    return {
        (caller, terminal): decide(tree, caller, terminal) for caller in tree for terminal in tree
    }


def admitted(tree: Tree) -> set[tuple[str, str]]:
    return {pair for pair, decision in decisions(tree).items() if decision == ADMIT}


@given(tree=module_trees(), data=st.data())
def test_removing_an_allow_never_admits_more_pairs(tree: Tree, data: st.DataObject) -> None:
    paths = [
        (module_id, path)
        for module_id, path in policy_paths(tree)
        if policy_at(tree, module_id, path)["allowed_callers"]
        or policy_at(tree, module_id, path)["allow_all_modules"] is True
    ]
    if not paths:
        return
    module_id, path = data.draw(st.sampled_from(paths))
    narrowed = tree_copy(tree)
    policy = policy_at(narrowed, module_id, path)
    entries = policy["allowed_callers"]
    assert isinstance(entries, list)
    if policy["allow_all_modules"] is True and (not entries or data.draw(st.booleans())):
        policy["allow_all_modules"] = False
    else:
        del entries[data.draw(st.integers(0, len(entries) - 1))]
    assert admitted(narrowed) <= admitted(tree)


@given(tree=module_trees(), data=st.data())
def test_adding_an_interface_restriction_never_admits_more_pairs(
    tree: Tree, data: st.DataObject
) -> None:
    free: list[tuple[str, str, str]] = []
    for module_id, module in sorted(tree.items()):
        routes = module["namespace_exports"]
        assert isinstance(routes, dict)
        for segment, route in sorted(routes.items()):
            restricted = route.get("interface_access", {})
            free.extend(
                (module_id, segment, export)
                for export in sorted(route["surface"]["only"])
                if export not in restricted
            )
    if not free:
        return
    module_id, segment, export = data.draw(st.sampled_from(free))
    policy = data.draw(
        st.fixed_dictionaries(
            {
                "allow_all_modules": st.booleans(),
                "allowed_callers": st.lists(st.sampled_from(sorted(tree)), max_size=2),
            }
        )
    )
    narrowed = tree_copy(tree)
    routes = narrowed[module_id]["namespace_exports"]
    assert isinstance(routes, dict)
    routes[segment].setdefault("interface_access", {})[export] = policy
    assert admitted(narrowed) <= admitted(tree)


@given(tree=module_trees(), data=st.data())
def test_reordering_or_duplicating_allowed_callers_never_changes_a_decision(
    tree: Tree, data: st.DataObject
) -> None:
    shuffled = tree_copy(tree)
    for module_id, path in policy_paths(shuffled):
        policy = policy_at(shuffled, module_id, path)
        entries = policy["allowed_callers"]
        assert isinstance(entries, list)
        if not entries:
            continue
        extra = data.draw(st.lists(st.sampled_from(entries), max_size=3))
        policy["allowed_callers"] = data.draw(st.permutations([*entries, *extra]))
    assert decisions(shuffled) == decisions(tree)


# --------------------------------------------------------------------------- #
# Look-alike identities: `a.b` names exactly `a.b` and its descendants.

LOOK_ALIKE_TREE: Tree = {
    "a": {
        "version": 1,
        "children": {"b": {}, "bc": {}, "b-c": {}},
        "namespace_exports": {},
        "sources": {},
        "exports": {},
    },
    "a.b": {
        "version": 1,
        "children": {"c": {}},
        "namespace_exports": {},
        "sources": {},
        "exports": {},
    },
    "a.b.c": {"version": 1, "children": {}, "namespace_exports": {}, "sources": {}, "exports": {}},
    "a.bc": {"version": 1, "children": {}, "namespace_exports": {}, "sources": {}, "exports": {}},
    "a.b-c": {"version": 1, "children": {}, "namespace_exports": {}, "sources": {}, "exports": {}},
    "t": {
        "version": 1,
        "children": {},
        "namespace_exports": {},
        "sources": {},
        "exports": {
            "t.interface.run": {
                "access": {"allow_all_modules": False, "allowed_callers": ["a.b"]},
                "source_interface": "t.source.main.interface.run",
            }
        },
    },
}


def _with_terminal_entry(entry: str) -> Tree:
    tree = tree_copy(LOOK_ALIKE_TREE)
    policy = policy_at(tree, "t", ("exports", "t.interface.run", "access"))
    policy["allowed_callers"] = [entry]
    return tree


def _names_a_b_or_below(text: str) -> bool:
    return text == "a.b" or text.startswith("a.b.")


def test_the_look_alike_fixture_admits_its_namesake_and_descendants() -> None:
    assert decide(LOOK_ALIKE_TREE, "a.b", "t") == ADMIT
    assert decide(LOOK_ALIKE_TREE, "a.b.c", "t") == ADMIT
    assert decide(LOOK_ALIKE_TREE, "a", "t") == "dispatcher.unauthorized_caller"


@given(caller=st.sampled_from(LOOK_ALIKES_OF_A_B))
def test_a_listed_look_alike_caller_is_invalid_or_denied(caller: str) -> None:
    assert decide(LOOK_ALIKE_TREE, caller, "t") in {
        "dispatcher.invalid_module_id",
        "dispatcher.unauthorized_caller",
    }


@given(caller=edited_ids())
def test_an_edited_caller_is_admitted_only_as_the_named_module_or_below(caller: str) -> None:
    decision = decide(LOOK_ALIKE_TREE, caller, "t")
    if decision == ADMIT:
        assert caller == "t" or _names_a_b_or_below(caller)
        assert caller.isascii()
        assert "_" not in caller.replace("._rtx", "")
    else:
        assert decision in {"dispatcher.invalid_module_id", "dispatcher.unauthorized_caller"}


@given(entry=st.one_of(st.sampled_from(LOOK_ALIKES_OF_A_B), edited_ids()))
def test_a_look_alike_allowlist_entry_never_admits_the_real_module(entry: str) -> None:
    decision = decide(_with_terminal_entry(entry), "a.b", "t")
    if decision == ADMIT:
        assert entry in {"a", "a.b"}
    else:
        assert decision.startswith("dispatcher.")
        assert entry not in {"a", "a.b"}
