"""Hypothesis strategies shared by the test suite (attrs ``tests/strategies.py`` style).

Each section belongs to one subject; append new sections at the end. Tests
run under the ``ci`` profile when ``CI=true`` (deterministic, bounded), see
``tests/conftest.py``.
"""

from __future__ import annotations

import copy
import ipaddress
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import yaml
from hypothesis import strategies as st

from boring_dispatch.errors import BlueprintMalformed, ChildUnregistered, ModuleNotFound
from boring_dispatch.records import ModuleRecord
from boring_dispatch.repository import ids

# --------------------------------------------------------------------------- #
# Authorization: small in-memory module trees with random policies.
#
# A tree is ``{module_id: module blueprint data}``. Every module exports
# ``<id>.interface.run`` (interface version 1); every parent registers its
# children and routes to each of them with a surface listing every export of
# the child's subtree, so routes never fail for structural reasons and the
# decisions depend on the access policies only. Policies name existing
# modules only: naming a missing one aborts the request, which a property
# about admitted sets must not confuse with a denial.

_TOP_SEGMENTS: Final = ("a", "b", "c")
_CHILD_SEGMENTS: Final = ("x", "y", "_rtx")
_MAX_DEPTH: Final = 3
_MEMORY_ROOT: Final = Path("/memory/skills")

Tree = dict[str, dict[str, object]]


class MemoryLoader:
    """A test double of ``ModuleLoader.load_ancestry`` over a dict of blueprints.

    It applies the same registration rules as the real loader (a missing
    module is ``module_not_found``, an unregistered child is
    ``child_unregistered``, a version must be a strict integer >= 1) and
    records every module ID it was asked for, in order.
    """

    def __init__(self, modules: Mapping[str, Mapping[str, object]]) -> None:
        self._modules = modules
        #: Every ``load_ancestry`` argument, in call order.
        self.requested: list[str] = []

    def load_ancestry(self, module_id: str) -> tuple[ModuleRecord, ...]:
        self.requested.append(module_id)
        ids.parse_module_id(module_id)
        records: list[ModuleRecord] = []
        for prefix in ids.ancestry(module_id):
            if records:
                parent = records[-1]
                children = parent.data.get("children")
                segment = prefix.rpartition(".")[2]
                if not isinstance(children, Mapping) or children.get(segment) != {}:
                    raise ChildUnregistered(
                        f"{parent.module_id} does not register child {segment}",
                        target_module_id=prefix,
                    )
            data = self._modules.get(prefix)
            if data is None:
                raise ModuleNotFound(f"module not found: {prefix}", target_module_id=prefix)
            version = data.get("version")
            if type(version) is not int or version < 1:
                raise BlueprintMalformed(f"bad version: {prefix}", target_module_id=prefix)
            root = _MEMORY_ROOT.joinpath(*prefix.split("."))
            records.append(ModuleRecord(prefix, root, _MEMORY_ROOT, version, data))
        return tuple(records)

    def load(self, module_id: str) -> ModuleRecord:
        return self.load_ancestry(module_id)[-1]


def export_id(module_id: str) -> str:
    """The one export every generated module declares."""
    return f"{module_id}.interface.run"


def relative_references(owner: str, module_id: str) -> list[str]:
    """Every relative ``allowed_callers`` spelling of ``module_id`` for ``owner``."""
    segments = owner.split(".")
    found = []
    for climb in range(len(segments)):
        base = ".".join(segments[: len(segments) - climb])
        if module_id.startswith(base + "."):
            found.append("." * (climb + 1) + module_id[len(base) + 1 :])
    return found


@st.composite
def access_policies(draw: st.DrawFn, owner: str, module_ids: Sequence[str]) -> dict[str, object]:
    """An access object naming existing modules, absolutely or relatively."""
    public = draw(st.sampled_from([False, False, False, True]))
    named = draw(st.lists(st.sampled_from(list(module_ids)), max_size=3))
    entries = []
    for module_id in named:
        spellings = [module_id, *relative_references(owner, module_id)]
        entries.append(draw(st.sampled_from(spellings)))
    return {"allow_all_modules": public, "allowed_callers": entries}


@st.composite
def module_ids_trees(draw: st.DrawFn, max_modules: int = 7) -> list[str]:
    """A sorted set of module IDs closed under prefixes (1..3 segments)."""
    found = set(draw(st.lists(st.sampled_from(_TOP_SEGMENTS), min_size=1, max_size=3, unique=True)))
    for _ in range(draw(st.integers(0, max_modules))):
        parent = draw(st.sampled_from(sorted(found)))
        if parent.count(".") + 1 < _MAX_DEPTH:
            found.add(f"{parent}.{draw(st.sampled_from(_CHILD_SEGMENTS))}")
    return sorted(found)


@st.composite
def module_trees(draw: st.DrawFn, max_modules: int = 7) -> Tree:
    """A well-formed tree whose policies (routes, per-interface, exports) are random."""
    module_ids = draw(module_ids_trees(max_modules))
    tree: Tree = {}
    for module_id in module_ids:
        children = [m for m in module_ids if m.rpartition(".")[0] == module_id]
        routes: dict[str, object] = {}
        for child in children:
            surface = {export_id(m): 1 for m in module_ids if m in _subtree(child, module_ids)}
            route: dict[str, object] = {
                "version": 1,
                "access": draw(access_policies(module_id, module_ids)),
                "surface": {"only": surface},
            }
            restricted = draw(st.lists(st.sampled_from(sorted(surface)), max_size=2, unique=True))
            if restricted:
                route["interface_access"] = {
                    export: draw(access_policies(module_id, module_ids)) for export in restricted
                }
            routes[child.rpartition(".")[2]] = route
        tree[module_id] = {
            "version": 1,
            "children": {child.rpartition(".")[2]: {} for child in children},
            "namespace_exports": routes,
            "sources": {},
            "exports": {
                export_id(module_id): {
                    "access": draw(access_policies(module_id, module_ids)),
                    "source_interface": f"{module_id}.source.main.interface.run",
                }
            },
        }
    return tree


def policy_paths(tree: Tree) -> list[tuple[str, tuple[str, ...]]]:
    """``(module, key path)`` of every access object in the tree, in a stable order."""
    paths: list[tuple[str, tuple[str, ...]]] = []
    for module_id, data in sorted(tree.items()):
        paths.append((module_id, ("exports", export_id(module_id), "access")))
        routes = data["namespace_exports"]
        assert isinstance(routes, dict)
        for segment, route in sorted(routes.items()):
            paths.append((module_id, ("namespace_exports", segment, "access")))
            paths.extend(
                (module_id, ("namespace_exports", segment, "interface_access", export))
                for export in sorted(route.get("interface_access", {}))
            )
    return paths


def policy_at(tree: Tree, module_id: str, path: Sequence[str]) -> dict[str, object]:
    """The access object at ``path`` (a live reference into ``tree``)."""
    node: object = tree[module_id]
    for key in path:
        assert isinstance(node, dict)
        node = node[key]
    assert isinstance(node, dict)
    return node


def tree_copy(tree: Tree) -> Tree:
    return copy.deepcopy(tree)


def _subtree(root: str, module_ids: Sequence[str]) -> set[str]:
    return {m for m in module_ids if m == root or m.startswith(root + ".")}


#: Spellings that resemble ``a.b`` but are not it, nor one of its descendants.
LOOK_ALIKES_OF_A_B: Final = (
    "a.bc",
    "a.b-c",
    "a.b_evil",
    "ab",
    "a-b",
    "a..b",
    ".a.b",
    "a.b.",
    "a.b..",
    "a.b.__class__",
    "a.__init__",
    "a.__b__",
    "a._b",
    "A.b",
    "a.B",
    "A.B",
    "\uff41.b",  # full-width a
    "a\uff0eb",  # full-width full stop
    "a.\uff42",  # full-width b
    "a.\u0432",  # Cyrillic ve
    "\u0430.b",  # Cyrillic a
    "a.b\u200b",  # zero-width space
    "a.b ",
    " a.b",
    "a.b\n",
    "a.b\x00",
    "a/b",
    "a.b/",
    "a.b\\c",
    "a.b@1",
    "a.b.interface.run",
    "a.source.b",
    "a.b-rtx",
    "",
    ".",
)

_EDIT_ALPHABET: Final = "ab.-_ Bc\uff41\uff0e\u0430\u200b/\\\x00"


@st.composite
def edited_ids(draw: st.DrawFn, base: str = "a.b") -> str:
    """``base`` after one to three random character insertions, deletions or swaps."""
    text = base
    for _ in range(draw(st.integers(1, 3))):
        position = draw(st.integers(0, len(text)))
        char = draw(st.sampled_from(_EDIT_ALPHABET))
        operation = draw(st.sampled_from(["insert", "delete", "replace"]))
        if operation == "insert":
            text = text[:position] + char + text[position:]
        elif operation == "delete" and position < len(text):
            text = text[:position] + text[position + 1 :]
        elif position < len(text):
            text = text[:position] + char + text[position + 1 :]
    return text


# --------------------------------------------------------------------------- #
# HTTP tool: addresses it must refuse and addresses it may contact.
#
# Written out here from the IANA special-purpose address registries,
# independently of ``boring_dispatch.tools._netcheck``, so the two check each
# other. IPv6 outside global unicast 2000::/3 is refused as a whole.

HTTP_REFUSED_V4: Final = tuple(
    ipaddress.IPv4Network(net)
    for net in (
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
        "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16",
        "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
    )
)  # fmt: skip
HTTP_REFUSED_V6: Final = tuple(
    ipaddress.IPv6Network(net)
    for net in (
        "64:ff9b:1::/48", "2001::/23", "2001:db8::/32", "2002::/16", "3fff::/20",
        "5f00::/16", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
    )
)  # fmt: skip
_GLOBAL_UNICAST: Final = ipaddress.IPv6Network("2000::/3")
_MAPPED: Final = ipaddress.IPv6Network("::ffff:0:0/96")
_NAT64: Final = ipaddress.IPv6Network("64:ff9b::/96")


def http_mapped(address: ipaddress.IPv4Address) -> ipaddress.IPv6Address:
    """The IPv4-mapped IPv6 form ``::ffff:a.b.c.d``."""
    return ipaddress.IPv6Address(int(_MAPPED.network_address) | int(address))


def http_nat64(address: ipaddress.IPv4Address) -> ipaddress.IPv6Address:
    """The well-known-prefix NAT64 form ``64:ff9b::a.b.c.d``."""
    return ipaddress.IPv6Address(int(_NAT64.network_address) | int(address))


def http_refused_ipv4() -> st.SearchStrategy[ipaddress.IPv4Address]:
    """IPv4 addresses in a special-purpose block."""
    return st.one_of(*(st.ip_addresses(network=net) for net in HTTP_REFUSED_V4)).map(
        lambda a: ipaddress.IPv4Address(int(a))
    )


def http_public_ipv4() -> st.SearchStrategy[ipaddress.IPv4Address]:
    """IPv4 addresses outside every special-purpose block."""
    return (
        st.ip_addresses(v=4)
        .map(lambda a: ipaddress.IPv4Address(int(a)))
        .filter(lambda a: not any(a in net for net in HTTP_REFUSED_V4))
    )


def http_refused_ipv6() -> st.SearchStrategy[ipaddress.IPv6Address]:
    """IPv6 addresses that are special-purpose, outside 2000::/3, or wrap a refused IPv4."""
    blocks = st.one_of(*(st.ip_addresses(network=net) for net in HTTP_REFUSED_V6))
    outside = st.ip_addresses(v=6).filter(
        lambda a: a not in _GLOBAL_UNICAST and a not in _MAPPED and a not in _NAT64
    )
    wrapped = http_refused_ipv4().flatmap(
        lambda a: st.sampled_from([http_mapped(a), http_nat64(a)])
    )
    return st.one_of(blocks, outside, wrapped).map(lambda a: ipaddress.IPv6Address(int(a)))


def http_public_ipv6() -> st.SearchStrategy[ipaddress.IPv6Address]:
    """Global unicast IPv6 outside every special block, or a public IPv4 wrapped."""
    plain = st.ip_addresses(network=_GLOBAL_UNICAST).filter(
        lambda a: not any(a in net for net in HTTP_REFUSED_V6)
    )
    wrapped = http_public_ipv4().flatmap(lambda a: st.sampled_from([http_mapped(a), http_nat64(a)]))
    return st.one_of(plain, wrapped).map(lambda a: ipaddress.IPv6Address(int(a)))


# --------------------------------------------------------------------------- #
# Python table: JSON values, argument objects and names that are not in a table.

#: Names that must never reach code through a Python table, whatever is bound.
HOSTILE_TOOL_NAMES: Final = (
    "os.system",
    "__import__",
    "get_job.__globals__",
    "GET_JOB",
    "get_job ",
    " get_job",
    "get_job\n",
    "get_job\x00",
    "\uff47\uff45\uff54_\uff4a\uff4f\uff42",  # full-width get_job
    "get_j\u043eb",  # Cyrillic o
    "get_job\u200b",  # zero-width space
    "eval",
    "exec",
    "globals",
    "getattr",
    "builtins.open",
    "subprocess.run",
    "__class__",
    "__builtins__",
    "handlers.get_job",
    "secret_helper",
    "../get_job",
    "get_job()",
    "get_job; rm -rf /",
    "",
)


def json_values(max_leaves: int = 12) -> st.SearchStrategy[object]:
    """Arbitrary JSON values (finite floats, text with any code point)."""
    scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
        max_leaves=max_leaves,
    )


def argument_objects() -> st.SearchStrategy[dict[str, object]]:
    """A JSON object as a model might send for ``args``."""
    return st.dictionaries(st.text(max_size=12), json_values(), max_size=5)


# --------------------------------------------------------------------------- #
# Process launch: argv tokens that must reach a child byte for byte, never
# through a shell (no NUL, no lone surrogates: those are refused before launch).

HOSTILE_ARGV_TOKENS: Final = (
    "",
    "-",
    "--",
    "-h",
    "--help",
    "--module-id=evil",
    "--entry=os.system",
    "--gateway=../../evil.py",
    "$(touch /tmp/pwned)",
    "`id`",
    "a; rm -rf /",
    "a && b || c",
    "| cat /etc/passwd",
    "> /tmp/out",
    "'single' \"double\"",
    "back\\slash",
    "line\nbreak",
    "tab\tcr\r",
    "*?[glob]",
    "~root",
    "${HOME}",
    "\u00e9\u4e2d\U0001f600",
    "\u202eRTL",
    " leading and trailing ",
)


def argv_tokens() -> st.SearchStrategy[str]:
    """One argument: shell metacharacters, quotes, newlines, leading dashes, unicode."""
    text = st.text(
        alphabet=st.characters(codec="utf-8", exclude_characters="\x00"),
        max_size=24,
    )
    return st.one_of(
        st.sampled_from(HOSTILE_ARGV_TOKENS),
        text,
        text.map(lambda value: "-" + value),
        text.map(lambda value: "--" + value),
    )


def argv_vectors() -> st.SearchStrategy[list[str]]:
    """A whole gateway argv."""
    return st.lists(argv_tokens(), max_size=8)


# --------------------------------------------------------------------------- #
# Blueprint loading: mutations of real blueprint text and data.
#
# Text mutations insert the YAML features the strict loader refuses (tags,
# anchors, aliases, merge keys, extra documents, ambiguous scalars, control
# characters), duplicate or drop lines (duplicate keys, broken structure) and
# shift indentation. Data mutations delete keys and change value types, for
# the dispatcher's own checks behind the parser.

_YAML_SNIPPETS: Final = (
    "&a ",
    "*a",
    "!!str ",
    "!x ",
    "! ",
    "!!python/object/apply:os.system ['true'] ",
    "<<: {k: 1}\n",
    "---\n",
    "...\n",
    "%YAML 1.1\n",
    "\t",
    "\x00",
    "\x85",
    "\ufeff",
    "\u202e",
    ": ",
    "- ",
    "? ",
    "{",
    "}",
    "[",
    "]",
    "'",
    '"',
    "#",
    "|",
    ">",
    "\\",
    "yes",
    "0777",
    "1e3",
    ".nan",
    "2024-01-01",
    "~: x\n",
    "1: x\n",
    "CANARY-7f3a",
    " ",
    "\n",
)
_REPLACEMENT_VALUES: Final = ("true", "[]", "{}", "1", "-1", "0", "'x'", "null", "{a: 1}", "[a]")


@st.composite
def yaml_mutations(draw: st.DrawFn, text: str) -> str:
    """``text`` after one to four random edits (see the section comment)."""
    lines = text.split("\n")
    for _ in range(draw(st.integers(1, 4))):
        index = draw(st.integers(0, max(len(lines) - 1, 0)))
        line = lines[index] if lines else ""
        operation = draw(st.sampled_from(["insert", "duplicate", "delete", "indent", "value"]))
        if operation == "insert":
            position = draw(st.integers(0, len(line)))
            line = line[:position] + draw(st.sampled_from(_YAML_SNIPPETS)) + line[position:]
            lines[index : index + 1] = [line]
        elif operation == "duplicate":
            lines.insert(index, line)
        elif operation == "delete" and lines:
            del lines[index]
        elif operation == "indent":
            lines[index : index + 1] = [draw(st.sampled_from(["  ", " ", ""])) + line.lstrip(" ")]
        elif ": " in line:
            head = line.partition(": ")[0]
            lines[index : index + 1] = [f"{head}: {draw(st.sampled_from(_REPLACEMENT_VALUES))}"]
    return "\n".join(lines)


_ANY_VALUE: Final = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=8),
    st.just([]),
    st.just({}),
    st.lists(st.text(max_size=4), max_size=2),
    st.dictionaries(st.text(max_size=4), st.integers(0, 2), max_size=2),
)


@st.composite
def blueprint_data_mutations(draw: st.DrawFn, data: Mapping[str, object]) -> dict[str, object]:
    """A deep copy of ``data`` with one to three keys deleted or given another value."""
    mutated = copy.deepcopy(dict(data))
    for _ in range(draw(st.integers(1, 3))):
        node: dict[str, object] = mutated
        while True:  # walk down a random path of mappings
            keys = sorted(node)
            if not keys:
                break
            key = draw(st.sampled_from(keys))
            child = node[key]
            if isinstance(child, dict) and child and draw(st.booleans()):
                node = child
                continue
            if draw(st.booleans()):
                del node[key]
            else:
                node[key] = draw(_ANY_VALUE)
            break
    return mutated


# --------------------------------------------------------------------------- #
# Binding: argv vectors that exercise pattern tokenising, random pattern-mode
# bindings, and mutations that also reach inside lists (patterns, fixed
# bindings, direct_io entries).

BINDING_FLAGS: Final = ("--a", "--b", "-c", "--date", "--route-smoke")
_BINDING_TOKENS: Final = (
    *BINDING_FLAGS,
    "--a=1",
    "--b=",
    "-c=x",
    "--",
    "-",
    "x",
    "1",
    "",
    "-5",
    "2026-01-02",
)


def binding_argv() -> st.SearchStrategy[list[str]]:
    """An argv mixing declared-looking flags, inline values, ``--`` and hostile tokens."""
    return st.lists(st.sampled_from(_BINDING_TOKENS) | argv_tokens(), max_size=8)


_JUNK: Final = _ANY_VALUE | st.sampled_from(
    [
        "(",
        "[a-",
        "(a+)+$",
        "^.*$",
        "x" * 1100,
        "\x00",
        "%Y %Y",
        "iso-8601",
        "{value}",
        "--x",
        "secret",
    ]
)
_FLAG_LISTS: Final = st.lists(st.sampled_from(BINDING_FLAGS), max_size=3)
_REGEXES: Final = st.sampled_from(["^.+$", r"^\d+$", "x", "^(a|b)$", "(", "(a+)+", "a" * 1030])


def pattern_objects() -> st.SearchStrategy[dict[str, object]]:
    """One pattern: plausible values for its keys, or junk of any type."""

    def either(good: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
        return good | _JUNK

    return st.fixed_dictionaries(
        {},
        optional={
            "name": either(st.sampled_from(["one", "two", "one"])),
            "min_positionals": either(st.integers(0, 3)),
            "max_positionals": either(st.integers(0, 4)),
            "allow_extra_positionals": either(st.booleans()),
            "allow_stdin": either(st.booleans()),
            "positional_patterns": either(
                st.dictionaries(st.sampled_from(["0", "1", 2]), _REGEXES, max_size=2)
            ),
            "flag_patterns": either(
                st.dictionaries(st.sampled_from(BINDING_FLAGS), _REGEXES, max_size=3)
            ),
            "required_flags": either(_FLAG_LISTS),
            "allowed_flags": either(_FLAG_LISTS),
            "forbidden_flags": either(_FLAG_LISTS),
            "notes": _JUNK,
        },
    )


def pattern_bindings() -> st.SearchStrategy[dict[str, object]]:
    """A pattern-mode source interface with one to three random patterns."""
    binding = st.fixed_dictionaries(
        {
            "kind": st.just("process") | _JUNK,
            "entry": st.just("Interface") | _JUNK,
            "patterns": st.lists(pattern_objects(), min_size=1, max_size=3) | _JUNK,
        },
        optional={"args_prefix": st.lists(st.sampled_from(["read", "x", ""]), max_size=2) | _JUNK},
    )
    return binding.map(lambda body: {"version": 1, "process_binding": body})


@st.composite
def nested_mutations(draw: st.DrawFn, data: object) -> object:
    """A deep copy of ``data`` with one to three mapping or list nodes dropped or replaced."""
    mutated = copy.deepcopy(data)
    for _ in range(draw(st.integers(1, 3))):
        node: Any = mutated
        while isinstance(node, dict | list) and node:
            keys = sorted(node, key=repr) if isinstance(node, dict) else list(range(len(node)))
            key = draw(st.sampled_from(keys))
            child = node[key]
            if isinstance(child, dict | list) and child and draw(st.integers(0, 3)):
                node = child
                continue
            if draw(st.booleans()):
                del node[key]
            else:
                node[key] = draw(_JUNK)
            break
    return mutated


# --------------------------------------------------------------------------- #
# Fast YAML path: documents as ``yaml.safe_dump`` writes them, and line edits.
#
# ``dumped_yaml`` draws nested data whose strings are meant to trip a
# hand-written parser (quotes, colons, "#", indicators, spaces at either end,
# line breaks, control and line-break characters, numbers and YAML words as
# strings, unicode, long words to wrap) and dumps it with random dumper
# settings: width, flow leaves or not, quoting style, indentation, unicode.
# ``yaml_line_edits`` edits text line by line: insert characters that matter
# to the fast parser, delete, duplicate, re-indent and swap lines.

_TRICKY_STRINGS: Final = (
    *("", " ", "a b", " lead", "trail ", "a  b", "a: b", "a:b", "a:", "a #b", "a#b", "#x"),
    *("- a", "-a", "-", "--", "? a", "?a", ": a", ":a", "[a]", "{a: 1}", "a, b", "a]"),
    *("&a", "*a", "!a", "!!str", "|", ">", "|-", "%x", "@x", "`x", "a'b", "'", "''", '"'),
    *("'a'", '"a"', 'say "hi"', "\\", "a\\nb", "a\\", "\n", "a\nb", "a\n\nb", "a\n", "\na"),
    *(" \n ", "a \n b", "\t", "a\tb", "\r", "a\r\nb", "\x85", "\u2028", "\u2029", "\ufeff"),
    *("\x00", "\x07", "\x1b", "\x7f", "\x9f", "\xa0", "\u200b", "\u202e", "caf\u00e9"),
    *("\U0001f600", "\ud7ff", "\ue000", "\ufffd", "1", "-1", "+1", "1.0", "1.", ".5", "1e3"),
    *("1_000", "0777", "0o17", "0x1F", "0b1", "1:30", "2024-01-01", "yes", "No", "ON", "off"),
    *("y", "n", "null", "Null", "~", "true", "False", ".inf", ".nan", "<<", "=", "---"),
    *("...", "--- a", "... a", "a --- b", "x" * 90, "word " * 30, "- " * 20),
)
_YAML_TEXT: Final = st.one_of(
    st.sampled_from(_TRICKY_STRINGS),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=12),
    st.lists(st.sampled_from(_TRICKY_STRINGS), min_size=2, max_size=12).map(" ".join),
    st.lists(st.sampled_from(_TRICKY_STRINGS), min_size=2, max_size=6).map("".join),
)
# Ordinary blueprint text: words, paths, punctuation, a few quotes and colons.
_PLAIN_TEXT: Final = st.one_of(
    st.text(alphabet="abcxyz AZ019._-/:#'\",[]{}()<>=*&!|?%@\u00e9", min_size=1, max_size=16),
    st.lists(
        st.sampled_from(("word", "a:b", "x-y", "1", "it's", "1.5", "#", "- z")),
        min_size=1,
        max_size=20,
    ).map(" ".join),
)


def _yaml_data(text: st.SearchStrategy[str]) -> st.SearchStrategy[object]:
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=False, allow_infinity=False),
        text,
    )
    return st.recursive(
        scalars,
        lambda children: (
            st.lists(children, max_size=4) | st.dictionaries(text, children, max_size=4)
        ),
        max_leaves=24,
    )


@st.composite
def dumped_yaml(draw: st.DrawFn, *, hostile: bool = True) -> str:
    """A top-level mapping of random data, as ``yaml.safe_dump`` writes it.

    ``hostile`` strings are built to trip a parser; the others look like
    blueprint text, so that most documents are in the fast path's subset.
    """
    text = _YAML_TEXT if hostile else _PLAIN_TEXT
    data = draw(st.dictionaries(text, _yaml_data(text), min_size=1, max_size=5))
    return yaml.safe_dump(
        data,
        default_flow_style=draw(st.sampled_from([False, False, None])),
        default_style=draw(st.sampled_from([None, None, None, "'", '"'])),
        width=draw(st.sampled_from([10, 24, 80, 4096])),
        indent=draw(st.sampled_from([2, 3, 4])),
        allow_unicode=draw(st.booleans()),
        sort_keys=draw(st.booleans()),
    )


_LINE_SNIPPETS: Final = (
    *("  ", " ", "- ", "-", ": ", ":", " #", "#", "'", '"', "''", "\\", "\\x4", "\\u00e9"),
    *("\\ ", "\\/", "|", "|-", ">", ">-", "|+", "|2", "{}", "[]", "[a, b]", "{a: 1}", "[a,]"),
    *("{a: [1, {b: c}]}", "[", "{", "]", "}", "&a ", "*a", "!t ", "? ", "---", "...", "%"),
    *("~", "null", "yes", "0x1F", "1e3", "1", "0777", ",", "\t", "\r", "\ufeff", "\x85"),
    *("\u2028", "\x00", "\xe9", "\U0001f600", "\n", "\n\n", "\n  ", "\n- ", "k: v", "k:"),
    *("--- ", "... ", "%YAML 1.1 ", " #c", "#c", "      "),
)


@st.composite
def yaml_line_edits(draw: st.DrawFn, text: str) -> str:
    """``text`` after one to three line edits (see the section comment)."""
    lines = text.split("\n")
    for _ in range(draw(st.integers(1, 3))):
        index = draw(st.integers(0, len(lines) - 1))
        line = lines[index]
        edit = draw(st.sampled_from(["insert", "delete", "duplicate", "indent", "dedent", "swap"]))
        if edit == "insert":
            at = draw(st.integers(0, len(line)))
            lines[index] = line[:at] + draw(st.sampled_from(_LINE_SNIPPETS)) + line[at:]
        elif edit == "delete" and len(lines) > 1:
            del lines[index]
        elif edit == "duplicate":
            lines.insert(index, line)
        elif edit == "indent":
            lines[index] = " " * draw(st.integers(1, 4)) + line
        elif edit == "dedent":
            cut = min(draw(st.integers(1, 4)), len(line) - len(line.lstrip(" ")))
            lines[index] = line[cut:]
        elif edit == "swap" and index + 1 < len(lines):
            lines[index], lines[index + 1] = lines[index + 1], line
    return "\n".join(lines)


_KEYS: Final = (
    "a",
    "b",
    "c",
    "key",
    "x y",
    "'q'",
    '"d"',
    "k:v",
    "-k",
    "\u00e9",
    "n1",
    "it's",
    "a #b",
)
_TOKENS: Final = (
    *("v", "two words", "x:y", "a#b", "-x", "1", "-2", "1.5", "0x1F", "null", "~", "true"),
    *("\u00e9 \u00fc", "<a>/**", "a [b]", "a, b", "it's", 'say "x"', "a: b", "yes", "1e3"),
    *("'q'", "'it''s'", "''", '"dq"', '"\\x41\\n\\u00e9"', '"\\ lead"', "' pad '", "&a v"),
    *("{}", "[]", "[a, b]", "{a: 1, b: [c]}", "[ ]", "['x', \"y\"]", "{a: }", "[a,]", "*a"),
)
_WORDS: Final = ("w", "two", "x:y", "- z", "#", "a #b", "'", '"', "é", "[c]", "", "  ")


@st.composite
def written_yaml(draw: st.DrawFn) -> str:
    """A random tree written in block style with random layout choices.

    The writer picks indentation steps, indentless or indented sequences,
    compact entries, folded plain and quoted scalars, block scalars, comment
    and blank lines at random; it does not check what it writes, so some
    documents are invalid (both parsers must then refuse or decline alike).
    """
    lines: list[str] = []

    def pad(indent: int) -> str:
        return " " * indent

    def comment_lines(indent: int) -> None:
        if draw(st.booleans()):
            lines.append(draw(st.sampled_from(["", "  ", pad(draw(st.integers(0, 6))) + "# c"])))

    def value(head: str, parent: int) -> None:
        """``head`` (a key or entry) followed by a one-line or multi-line scalar."""
        shape = draw(st.sampled_from(["token", "token", "token", "plain", "quoted", "block"]))
        more = pad(parent + draw(st.integers(1, 4)))
        if shape == "token":
            lines.append(
                head + draw(st.sampled_from(_TOKENS)) + draw(st.sampled_from(["", " # c"]))
            )
        elif shape == "plain":
            lines.append(head + "start")
            lines.extend(
                more + draw(st.sampled_from(_WORDS)) for _ in range(draw(st.integers(1, 3)))
            )
        elif shape == "quoted":
            quote = draw(st.sampled_from(["'", '"']))
            lines.append(head + quote + draw(st.sampled_from(_WORDS)))
            lines.extend(
                more + draw(st.sampled_from([*_WORDS, "\\"]))
                for _ in range(draw(st.integers(0, 2)))
            )
            lines.append(more + "end" + quote)
        else:
            lines.append(head + draw(st.sampled_from(["|", "|-", ">", ">-"])))
            body = [more + draw(st.sampled_from(_WORDS)) for _ in range(draw(st.integers(1, 3)))]
            lines.extend(body)

    def mapping(indent: int, depth: int, head: str | None = None) -> None:
        keys = draw(st.permutations(_KEYS))[: draw(st.integers(1, 3))]
        for number, key in enumerate(keys):
            prefix = head if (head is not None and number == 0) else pad(indent)
            comment_lines(indent)
            kind = (
                draw(st.sampled_from(["scalar", "scalar", "map", "seq"])) if depth < 4 else "scalar"
            )
            if kind == "scalar":
                value(prefix + key + ": ", indent)
                continue
            lines.append(prefix + key + ":")
            if kind == "map":
                mapping(indent + draw(st.integers(1, 4)), depth + 1)
            else:
                sequence(indent + draw(st.sampled_from([0, 0, 2, 1, 4])), depth + 1)

    def sequence(indent: int, depth: int) -> None:
        for _ in range(draw(st.integers(1, 3))):
            comment_lines(indent)
            dash = pad(indent) + draw(st.sampled_from(["- ", "- ", "-   "]))
            kind = (
                draw(st.sampled_from(["scalar", "scalar", "map", "seq", "below"]))
                if depth < 4
                else "scalar"
            )
            if kind == "scalar":
                value(dash, indent)
            elif kind == "map":
                mapping(len(dash), depth + 1, head=dash)
            elif kind == "seq":
                lines.append(dash + "- " + draw(st.sampled_from(_TOKENS)))
            else:
                lines.append(pad(indent) + "-")
                mapping(indent + draw(st.integers(1, 3)), depth + 1)

    mapping(0, 1)
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n\n"]))
