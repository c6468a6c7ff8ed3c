"""load_config: BLUEPRINTS-V6 section 1.3, every failure fails closed as runtime_misconfigured."""

from __future__ import annotations

import os
import re
import threading
from email.headerregistry import Address
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from boring_dispatch.errors import RuntimeMisconfigured
from boring_dispatch.repository.load import config as config_module
from boring_dispatch.repository.load.config import load_config
from kits.blueprints import corpus_dir
from kits.regex_twins import MANY, texts_near

CORPUS = corpus_dir()
GOOD = 'schema_version = 1\n\n[modules]\nroots = ["skills", "src/officina"]\n'


def repo_with(tmp_path: Path, text: str | bytes, dirs: tuple[str, ...] = ()) -> Path:
    root = tmp_path / "repo"
    for name in ("skills", "src/officina", *dirs):
        (root / name).mkdir(parents=True, exist_ok=True)
    path = root / "officina.toml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def misconfigured(path: object) -> RuntimeMisconfigured:
    with pytest.raises(RuntimeMisconfigured) as info:
        load_config(path)  # type: ignore[arg-type]
    assert info.value.code == "dispatcher.runtime_misconfigured"
    assert "CANARY" not in info.value.message
    return info.value


def test_a_valid_configuration_gives_lexical_absolute_roots_in_order(tmp_path: Path) -> None:
    text = GOOD + '\n[feedback]\nemail = "a.b@example.org"\ngithub_repo = "owner/name"\n'
    path = repo_with(tmp_path, text)
    config = load_config(path)
    assert config.config_path == path
    assert config.repository_root == path.parent
    assert config.module_roots == (path.parent / "skills", path.parent / "src" / "officina")
    assert config.feedback_email == "a.b@example.org"
    assert config.feedback_github_repo == "owner/name"


def test_feedback_is_optional_and_str_or_pathlike_both_work(tmp_path: Path) -> None:
    path = repo_with(tmp_path, GOOD)
    assert load_config(str(path)) == load_config(path)
    assert load_config(path).feedback_email is None


def test_dot_and_double_slash_segments_are_normalised_lexically(tmp_path: Path) -> None:
    path = repo_with(tmp_path, GOOD)
    spelled = str(path.parent) + "/./" + "/officina.toml"
    assert load_config(spelled).config_path == path


def test_the_corpus_configuration_loads() -> None:
    config = load_config(CORPUS / "officina.toml")
    assert config.module_roots == (CORPUS / "skills", CORPUS / "src" / "officina")
    assert config.feedback_github_repo == "MoeenNehzati/famulus"


# --------------------------------------------------------------------------- #
# The path


@pytest.mark.parametrize(
    "path",
    [
        "officina.toml",
        "repo/officina.toml",
        "",
        "/tmp/config.toml",
        "/tmp/officina.TOML",
        "/tmp/officina.toml/",
        "/tmp/x/../officina.toml",
        "/tmp/officina.toml\x00",
        "/",
        None,
        7,
        b"/tmp/officina.toml",
    ],
)
def test_paths_that_are_not_one_exact_absolute_officina_toml_are_refused(path: object) -> None:
    misconfigured(path)


def test_a_missing_file_is_refused(tmp_path: Path) -> None:
    misconfigured(tmp_path / "officina.toml")


def test_a_symlinked_file_or_parent_directory_is_refused(tmp_path: Path) -> None:
    real = repo_with(tmp_path, GOOD)
    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / "officina.toml").symlink_to(real)
    misconfigured(tmp_path / "linked" / "officina.toml")
    (tmp_path / "alias").symlink_to(real.parent)
    misconfigured(tmp_path / "alias" / "officina.toml")


def test_a_directory_named_officina_toml_is_refused(tmp_path: Path) -> None:
    (tmp_path / "officina.toml").mkdir()
    misconfigured(tmp_path / "officina.toml")


def test_a_fifo_named_officina_toml_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "officina.toml")
    errors: list[str] = []

    def attempt() -> None:
        errors.append(misconfigured(tmp_path / "officina.toml").code)

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(timeout=10)
    assert not worker.is_alive(), "loading a FIFO blocked"
    assert errors == ["dispatcher.runtime_misconfigured"]


def test_a_world_writable_file_is_refused(tmp_path: Path) -> None:
    path = repo_with(tmp_path, GOOD)
    path.chmod(0o666)
    misconfigured(path)


def test_an_oversized_file_is_refused(tmp_path: Path) -> None:
    padding = "#" * (64 * 1024) + "\n"
    misconfigured(repo_with(tmp_path, GOOD + padding))


# --------------------------------------------------------------------------- #
# The content


@pytest.mark.parametrize(
    "raw",
    [
        b"schema_version = 1\n# \xff\xfe not UTF-8\n",
        b"\xef\xbb\xbf" + GOOD.encode() + b"\xc3",
        b"schema_version = \n",
        b"[modules\n",
        b"a = 1\na = 2\n",
        b"x = " + b"[" * 20000 + b"]" * 20000 + b"\n",
        b"x = " + b"9" * 5000 + b"\n",
    ],
)
def test_bytes_that_are_not_valid_utf8_toml_are_refused_without_a_traceback(
    tmp_path: Path, raw: bytes
) -> None:
    misconfigured(repo_with(tmp_path, raw))


@pytest.mark.parametrize(
    "text",
    [
        GOOD + "CANARY = 1\n",
        GOOD + "[CANARY]\n",
        'schema_version = 2\n[modules]\nroots = ["skills"]\n',
        'schema_version = true\n[modules]\nroots = ["skills"]\n',
        'schema_version = "1"\n[modules]\nroots = ["skills"]\n',
        'schema_version = 1.0\n[modules]\nroots = ["skills"]\n',
        '[modules]\nroots = ["skills"]\n',
        "schema_version = 1\n",
        'schema_version = 1\nmodules = "skills"\n',
        'schema_version = 1\n[modules]\nroots = ["skills"]\nCANARY = 1\n',
        "schema_version = 1\n[modules]\n",
        "schema_version = 1\n[modules]\nroots = []\n",
        'schema_version = 1\n[modules]\nroots = "skills"\n',
        "schema_version = 1\n[modules]\nroots = [1]\n",
    ],
)
def test_wrong_top_level_shapes_are_refused(tmp_path: Path, text: str) -> None:
    misconfigured(repo_with(tmp_path, text))


@pytest.mark.parametrize(
    "root",
    [
        "",
        "/abs",
        "a\\\\b",
        "skills//x",
        "skills/",
        "./skills",
        "skills/.",
        "..",
        "../skills",
        "skills/../skills",
        "skills\\u0000",
        "missing",
        "afile",
        "alink",
        "linkdir/sub",
    ],
)
def test_roots_that_are_not_clean_existing_symlink_free_directories_are_refused(
    tmp_path: Path, root: str
) -> None:
    path = repo_with(tmp_path, f'schema_version = 1\n[modules]\nroots = ["{root}"]\n')
    (path.parent / "afile").write_text("x", encoding="utf-8")
    (path.parent / "alink").symlink_to(path.parent / "skills")
    (tmp_path / "elsewhere" / "sub").mkdir(parents=True)
    (path.parent / "linkdir").symlink_to(tmp_path / "elsewhere")
    misconfigured(path)


@pytest.mark.parametrize(
    "roots",
    ['["skills", "skills"]', '["skills", "src/officina", "skills"]', '["src", "src/officina"]'],
)
def test_duplicate_and_nested_roots_are_refused(tmp_path: Path, roots: str) -> None:
    misconfigured(repo_with(tmp_path, f"schema_version = 1\n[modules]\nroots = {roots}\n"))


@pytest.mark.parametrize(
    "feedback",
    [
        'feedback = "x"',
        "[feedback]\nCANARY = 1",
        '[feedback]\nemail = "Name <a@example.org>"',
        '[feedback]\nemail = "a@example.org, b@example.org"',
        '[feedback]\nemail = "a@localhost"',
        '[feedback]\nemail = "@example.org"',
        '[feedback]\nemail = "a@-example.org"',
        '[feedback]\nemail = "a@example-.org"',
        '[feedback]\nemail = "a..b@example.org"',
        '[feedback]\nemail = ".a@example.org"',
        '[feedback]\nemail = "a@exa_mple.org"',
        '[feedback]\nemail = "a@' + "x" * 64 + '.org"',
        '[feedback]\nemail = "a b@example.org"',
        '[feedback]\nemail = "a@example.org\\n"',
        "[feedback]\nemail = 3",
        '[feedback]\ngithub_repo = "owner"',
        '[feedback]\ngithub_repo = "owner/name/extra"',
        '[feedback]\ngithub_repo = "own er/name"',
        '[feedback]\ngithub_repo = "owner/na:me"',
        "[feedback]\ngithub_repo = []",
    ],
)
def test_invalid_feedback_is_refused(tmp_path: Path, feedback: str) -> None:
    misconfigured(repo_with(tmp_path, GOOD + feedback + "\n"))


@pytest.mark.parametrize(
    "email",
    ["a@example.org", "first.last+tag@sub.example.co", "o'brien@x.io", "1@2.3", "a-b@a-b.c-d"],
)
def test_plain_addresses_are_accepted(tmp_path: Path, email: str) -> None:
    path = repo_with(tmp_path, GOOD + f'[feedback]\nemail = "{email}"\n')
    assert load_config(path).feedback_email == email


@given(st.from_regex(config_module._EMAIL, fullmatch=True))
def test_every_accepted_address_round_trips_through_an_rfc5322_parser(email: str) -> None:
    address = Address(addr_spec=email)
    assert address.addr_spec == email
    assert address.username
    assert address.domain


_ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_EMAIL = rf"{_ATEXT}(?:\.{_ATEXT})*@{_LABEL}(?:\.{_LABEL})+"  # what the check replaced
_GITHUB_REPO = r"[A-Za-z0-9._-]+/[A-Za-z0-9._-]+"
_LONG_LABELS = st.builds(
    lambda a, b, n: f"{a}@{'x' * n}.{b}",
    st.sampled_from(["a", "a.b", ".a", "a."]),
    st.sampled_from(["org", "-org", "o-", "o.r"]),
    st.integers(60, 66),
)


@MANY
@example("a@" + "x" * 64 + ".org")
@example("a@" + "x" * 63 + ".org")
@example("a@b")
@example("a.@b.c")
@example(".a@b.c")
@example("a@b.c-")
@example("a@@b.c")
@given(st.one_of(texts_near(_EMAIL, re.ASCII, extra="a.@-"), _LONG_LABELS))
def test_a_feedback_email_is_exactly_what_the_regex_matched(text: str) -> None:
    assert config_module._EMAIL == _EMAIL  # the text the round-trip test generates from
    expected = re.fullmatch(_EMAIL, text, re.ASCII) is not None
    assert config_module._is_email(text) is expected


@MANY
@example("a/")
@example("/a")
@example("a/b/c")
@example("a/b")
@given(texts_near(_GITHUB_REPO, re.ASCII, extra="a/._"))
def test_a_feedback_github_repo_is_exactly_what_the_regex_matched(text: str) -> None:
    expected = re.fullmatch(_GITHUB_REPO, text, re.ASCII) is not None
    assert config_module._is_github_repo(text) is expected
