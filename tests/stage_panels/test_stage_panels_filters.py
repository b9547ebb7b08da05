"""Filters of migrator.projects.templatetags.stage_extras and the grouping helper."""
from __future__ import annotations

from migrator.projects.stage_panels import group_by_severity
from migrator.projects.templatetags.stage_extras import by_count, duration, get, percent


def test_duration_reads_like_a_person_would_say_it() -> None:
    assert [duration(0.25), duration(3.341), duration(125), duration(None), duration("3")] == ["250 ms", "3.3 s", "2 min 5 s", "", ""]


def test_percent_and_dict_access() -> None:
    assert percent(0.9091) == "91%" and percent(0.5, 1) == "50.0%" and percent(None) == ""
    assert get({"kernel-launch": 2}, "kernel-launch") == 2 and get({}, "x") == "" and get(None, "x") == ""


def test_findings_group_by_severity_first_then_by_file() -> None:
    items: list[dict[str, object]] = [{"severity": "warning", "file": "b"}, {"severity": "error", "file": "z"}, {"severity": "error", "file": "a"},
             {"severity": "info", "file": "a"}, {"severity": "error", "file": "z", "n": 2}]
    groups = group_by_severity(items)
    assert [g["severity"] for g in groups] == ["error", "warning", "info"]
    assert [f["file"] for f in groups[0]["files"]] == ["a", "z"] and groups[0]["count"] == 3
    assert groups[0]["files"][1]["items"][1]["n"] == 2


def test_by_count_orders_largest_first_whatever_the_stored_key_order() -> None:
    assert by_count({"cudaFree": 3, "cudaFooBar": 1, "cudaMalloc": 6}) == [("cudaMalloc", 6), ("cudaFree", 3), ("cudaFooBar", 1)]
    languages = {"CMake": {"files": 1, "lines": 5}, "CUDA": {"files": 3, "lines": 54}}
    assert [name for name, _ in by_count(languages, "lines")] == ["CUDA", "CMake"]
