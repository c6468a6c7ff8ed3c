from __future__ import annotations

from pathlib import Path

import pytest

from boring_dispatch.golden import compare, compare_names, format_difference, read_golden


def golden(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "names.golden"
    path.write_text(text, encoding="utf-8")
    return path


def test_comments_blank_lines_and_surrounding_space_are_ignored(tmp_path: Path) -> None:
    path = golden(tmp_path, "# reviewed 2026-01\n\nfinish\n  get_job  \n# get_secret\n")
    assert read_golden(path) == ("finish", "get_job")


def test_equal_names_match(tmp_path: Path) -> None:
    difference = compare(["get_job", "finish"], golden(tmp_path, "finish\nget_job\n"))
    assert difference.ok
    assert difference.surprise == difference.missing == ()
    assert "match" in format_difference(difference)


def test_a_surprise_name_fails(tmp_path: Path) -> None:
    difference = compare(["finish", "get_job", "run_shell"], golden(tmp_path, "finish\nget_job\n"))
    assert not difference.ok
    assert difference.surprise == ("run_shell",)
    assert difference.missing == ()


def test_a_missing_name_fails(tmp_path: Path) -> None:
    difference = compare(["finish"], golden(tmp_path, "finish\nget_job\n"))
    assert not difference.ok
    assert difference.surprise == ()
    assert difference.missing == ("get_job",)


def test_the_report_lists_every_surprise_and_missing_name(tmp_path: Path) -> None:
    path = golden(tmp_path, "b\nc\n")
    report = format_difference(compare(["a", "b", "z"], path))
    assert str(path) in report
    assert "surprise (not in the golden file): a" in report
    assert "surprise (not in the golden file): z" in report
    assert "missing (in the golden file only): c" in report


def test_names_differing_only_in_case_or_space_do_not_match() -> None:
    assert compare_names(["Get_job"], ["get_job"]).surprise == ("Get_job",)
    assert not compare_names(["get_job\u200b"], ["get_job"]).ok


def test_a_missing_golden_file_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        compare(["a"], tmp_path / "absent.golden")
