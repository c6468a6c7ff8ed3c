"""derive_level: the security level derived from the contract and the module authority."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from boring_dispatch.errors import SecurityLevelUnavailable
from boring_dispatch.records import ModuleRecord
from boring_dispatch.repository.facts.levels import (
    EXTERNAL_MEDIA,
    FILESYSTEM_MEDIA,
    PROCESS_MEDIA,
    derive_level,
)

STDOUT = {"id": "out", "medium": "stdout", "access": "write"}
STDERR = {"id": "err", "medium": "stderr", "access": "write"}


def io(
    medium: str, path: str | None = None, path_match: str | None = None, id_: str = "x"
) -> dict[str, object]:
    entry: dict[str, object] = {"id": id_, "medium": medium, "access": "read"}
    if path is not None:
        entry["path"] = path
    if path_match is not None:
        entry["path_match"] = path_match
    return entry


def interface(
    state: str = "mutating",
    reads: Sequence[object] = (),
    writes: Sequence[object] = (STDOUT, STDERR),
    network: Sequence[object] = (),
) -> dict[str, object]:
    return {
        "contract": {
            "execution": {"state_effect": state},
            "direct_io": {"reads": list(reads), "writes": list(writes), "network": list(network)},
        }
    }


def module(*owns: dict[str, object], authority: object = None) -> ModuleRecord:
    data: dict[str, object] = {"id": "m"}
    if authority is not None:
        data["authority"] = authority
    elif owns:
        data["authority"] = {"owns_filesystem": list(owns)}
    return ModuleRecord(
        module_id="m._rtx", root=Path("/r/m/_rtx"), configured_root=Path("/r"), version=1, data=data
    )


def owned(path: str, match: str = "exact") -> dict[str, object]:
    return {"path": path, "match": match, "allowed_readers": [], "reason": "r"}


HOME_CONFIG = owned("$home/.config/m/config.json")
SUBTREE = owned(r"^\$state-root/.*$", "regex")
NARROW = owned(r"^\.certificates/[^/]+\.jsonl$", "regex")


# --------------------------------------------------------------------------- #
# Level 0


def test_read_only_with_only_stdout_and_stderr_writes_is_level_0() -> None:
    assert derive_level(interface("read-only"), module()) == 0
    assert derive_level(interface("read-only", writes=[]), module()) == 0


def test_level_0_does_not_restrict_reads() -> None:
    reads = [io("local-filesystem", "/anywhere"), io("remote-filesystem"), io("stdin")]
    assert derive_level(interface("read-only", reads=reads), module()) == 0


def test_read_only_with_network_is_not_level_0() -> None:
    assert derive_level(interface("read-only", network=[io("network-request")]), module()) == 2


def test_read_only_writing_a_file_is_not_level_0() -> None:
    writes = [STDOUT, io("local-filesystem", "$home/.config/m/config.json")]
    assert derive_level(interface("read-only", writes=writes), module(HOME_CONFIG)) == 1
    assert derive_level(interface("read-only", writes=writes), module()) == 2


def test_mutating_with_only_streams_is_level_1() -> None:
    assert derive_level(interface("mutating"), module()) == 1


# --------------------------------------------------------------------------- #
# Media


@pytest.mark.parametrize("medium", sorted(EXTERNAL_MEDIA))
def test_every_external_medium_makes_level_2(medium: str) -> None:
    assert derive_level(interface(reads=[io(medium)]), module(HOME_CONFIG)) == 2
    assert derive_level(interface(writes=[io(medium)]), module(HOME_CONFIG)) == 2


@pytest.mark.parametrize("medium", sorted(PROCESS_MEDIA))
def test_process_channels_are_allowed_at_level_1(medium: str) -> None:
    assert derive_level(interface(reads=[io(medium)]), module()) == 1


def test_a_prompt_write_is_not_level_0() -> None:
    assert derive_level(interface("read-only", writes=[io("prompt")]), module()) == 1


def test_any_network_entry_makes_level_2() -> None:
    assert derive_level(interface(network=[io("network")]), module(HOME_CONFIG)) == 2


# --------------------------------------------------------------------------- #
# Owned filesystem


@pytest.mark.parametrize("medium", sorted(FILESYSTEM_MEDIA))
def test_every_filesystem_medium_needs_an_owned_path(medium: str) -> None:
    entry = io(medium, "$home/.config/m/config.json", "exact")
    assert derive_level(interface(writes=[entry]), module(HOME_CONFIG)) == 1
    assert derive_level(interface(writes=[entry]), module()) == 2


@pytest.mark.parametrize(
    ("entry", "level"),
    [
        (io("local-filesystem"), 2),
        (io("local-filesystem", "$home/.config/m/config.json"), 1),
        (io("local-filesystem", "$home/.config/m/config.json", "exact"), 1),
        (io("local-filesystem", "$home/.config/m/other.json", "exact"), 2),
        (io("local-filesystem", "$home/.config/m/config.json", "glob"), 1),
        (io("local-filesystem", "$home/.config/m/*.json", "glob"), 2),
        (io("local-filesystem", "$home/.config/m/config.json", "regex"), 2),
        (io("local-filesystem", "$state-root/jobs.json", "exact"), 1),
        (io("local-filesystem", "$state-root/a/b/c.log", "exact"), 1),
        (io("local-filesystem", "$state-root", "exact"), 2),
        (io("local-filesystem", "$state-rootx/a", "exact"), 2),
        (io("local-filesystem", "$state-root/../etc/passwd", "exact"), 2),
        (io("local-filesystem", "$state-root/./a", "exact"), 2),
        (io("local-filesystem", "$state-root/logs/*.log", "glob"), 1),
        (io("local-filesystem", "$state-root*/x", "glob"), 2),
        (io("local-filesystem", "$state-root/../*", "glob"), 2),
        (io("local-filesystem", r"^\$state-root/logs/[0-9]+\.log$", "regex"), 1),
        (io("local-filesystem", r"^\$state-root/.*$", "regex"), 1),
        (io("local-filesystem", r"^\$state-roo.*$", "regex"), 2),
        (io("local-filesystem", r"^\$state-root/\.\./x$", "regex"), 2),
        (io("local-filesystem", r"^\$state-root/a|^/etc/passwd$", "regex"), 2),
        (io("local-filesystem", r"\$state-root/a$", "regex"), 2),
        (io("local-filesystem", r"^\$state-rootx?/a$", "regex"), 2),
        (io("local-filesystem", r"^\$state-root\d/a$", "regex"), 2),
        (io("repository-filesystem", ".certificates/x.jsonl"), 1),
        (io("repository-filesystem", ".certificates/a/x.jsonl"), 2),
        (io("repository-filesystem", r"^\.certificates/[^/]+\.jsonl$", "regex"), 1),
    ],
)
def test_filesystem_entries_are_inside_only_when_provably_owned(
    entry: dict[str, object], level: int
) -> None:
    owner = module(HOME_CONFIG, SUBTREE, NARROW)
    assert derive_level(interface(reads=[entry]), owner) == level
    assert derive_level(interface(writes=[STDOUT, entry]), owner) == level


def test_paths_longer_than_the_subject_cap_are_never_matched() -> None:
    entry = io("local-filesystem", "$state-root/" + "a" * 4096, "exact")
    assert derive_level(interface(reads=[entry]), module(SUBTREE)) == 2


def test_one_unowned_entry_among_owned_ones_makes_level_2() -> None:
    entries = [
        io("local-filesystem", "$home/.config/m/config.json"),
        io("temporary-filesystem", "$tmp/x"),
    ]
    assert derive_level(interface(writes=entries), module(HOME_CONFIG)) == 2


def test_a_missing_authority_owns_nothing() -> None:
    entry = io("local-filesystem", "$home/.config/m/config.json")
    assert derive_level(interface(reads=[entry]), module(authority={})) == 2
    assert derive_level(interface(reads=[entry]), module(authority={"owns_filesystem": []})) == 2


# --------------------------------------------------------------------------- #
# Unavailable


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"contract": None},
        {"contract": {}},
        {"contract": {"direct_io": {"reads": [], "writes": [], "network": []}}},
        {"contract": {"execution": {}, "direct_io": {"reads": [], "writes": [], "network": []}}},
        {
            "contract": {
                "execution": {"state_effect": "pure"},
                "direct_io": {"reads": [], "writes": [], "network": []},
            }
        },
        {
            "contract": {
                "execution": {"state_effect": ["x"]},
                "direct_io": {"reads": [], "writes": [], "network": []},
            }
        },
        {"contract": {"execution": {"state_effect": "read-only"}}},
        {"contract": {"execution": {"state_effect": "read-only"}, "direct_io": []}},
        {
            "contract": {
                "execution": {"state_effect": "read-only"},
                "direct_io": {"reads": [], "writes": []},
            }
        },
        interface(reads=[None]),
        interface(reads=[{"id": "x"}]),
        interface(reads=[io("carrier-pigeon")]),
        interface(reads=[{"medium": ["stdout"]}]),
        interface(writes=[{"medium": "stdout", "path": 3}]),
        interface(writes=[{"medium": "local-filesystem", "path": "/x", "path_match": "fuzzy"}]),
        interface(writes=[{"medium": "local-filesystem", "path": "/x", "path_match": ["exact"]}]),
        interface(network="none"),
        [],
    ],
)
def test_a_missing_or_malformed_contract_makes_the_level_unavailable(body: object) -> None:
    with pytest.raises(SecurityLevelUnavailable) as caught:
        derive_level(body, module())  # type: ignore[arg-type]
    assert caught.value.code == "dispatcher.security_level_unavailable"
    assert caught.value.target_module_id == "m._rtx"


@pytest.mark.parametrize(
    "authority",
    [
        [],
        {"owns_filesystem": {}},
        {"owns_filesystem": [None]},
        {"owns_filesystem": [{"path": "/x"}]},
        {"owns_filesystem": [{"path": "", "match": "exact"}]},
        {"owns_filesystem": [{"path": "/x", "match": "glob"}]},
        {"owns_filesystem": [{"path": 1, "match": "exact"}]},
        {"owns_filesystem": [{"path": "(", "match": "regex"}]},
        {"owns_filesystem": [{"path": "^(a+)+$", "match": "regex"}]},
    ],
)
def test_a_malformed_authority_makes_the_level_unavailable(authority: object) -> None:
    with pytest.raises(SecurityLevelUnavailable):
        derive_level(interface("read-only"), module(authority=authority))
