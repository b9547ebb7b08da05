"""Reports built from real pipeline runs: source, stages, translation account, findings, comparison."""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User

from migrator.accounts.models import Team
from migrator.projects import actions
from migrator.projects.models import Project
from migrator.reports.build import build_report, render_markdown
from tests.conftest import CUDA_CMAKE, SHFL_CU, VADD_CU, pipeline_run

pytestmark = pytest.mark.django_db




@pytest.fixture
def project(team_user: tuple[User, Team]) -> Project:
    return actions.create_project(team_user[1], "demo", user=team_user[0])


def test_it_reports_the_scan_and_translation_of_a_real_run(only_stages: Callable[..., None], project: Project) -> None:
    only_stages("fetch", "scan", "hipify")
    run = pipeline_run(project, {"src/vadd.cu": SHFL_CU, "CMakeLists.txt": CUDA_CMAKE})
    report: dict[str, Any] = build_report(run)
    assert run.archive is not None
    assert report["state"] == "partial" and report["source"]["archive_sha256"] == run.archive.sha256
    states = {s["name"]: s["state"] for s in report["stages"]}
    assert states["scan"] == "passed" and states["hipify"] == "passed" and states["compile"] == "skipped"
    translation = report["translation"]
    assert translation["converted_total"] > 0 and translation["converted_by_family"]
    top = translation["top_unconverted"][0]
    assert top["name"] == "__shfl_sync" and top["locations"][0].startswith("src/vadd.cu:")
    assert translation["unconverted_total"] == sum(translation["unconverted_by_family"].values())
    findings = report["findings"]
    assert findings["total"] >= 1 and any(f["file"] == "CMakeLists.txt" for f in findings["top"])
    hipify = run.stages.get(name="hipify").data
    assert hipify["build_fixes"] and report["build_fixes"] == [  # what hipify fixed in the translated copy
        {key: fix[key] for key in ("rule_id", "file", "line", "before", "after")} for fix in hipify["build_fixes"]]
    assert report["comparison"] is None and report["notebook_matches"] == []
    wavefront = report["wavefront"]  # __shfl_sync(0xffffffff, ...): a 32-bit full mask, fixed by the translation
    assert (wavefront["source"], wavefront["total"], wavefront["fixed"]) == ("translation", 1, 1)
    assert wavefront["by_kind"] == {"full-mask-32": {"total": 1, "fixed": 1, "suggested": 0}}
    [hazard] = wavefront["hazards"]
    assert hazard["file"] == "src/vadd.cu" and hazard["rule"] == "wavefront.full-mask-64" and hazard["applied"]
    assert hazard["line"] == SHFL_CU.splitlines().index(next(x for x in SHFL_CU.splitlines() if "__shfl_sync" in x)) + 1
    readiness = findings["readiness"]
    assert readiness["items_total"] == readiness["references_total"] + 1  # the hazard is an item too
    assert readiness["automatic_by_kind"]["wavefront"] == 1
    json.dumps(report)  # the JSON export must serialise as is
    markdown = render_markdown(report)
    assert "<details>" in markdown and "`__shfl_sync`" in markdown and f"/runs/{run.pk}/report" in markdown
    assert "Wavefront hazards" in markdown and "fixed `wavefront.full-mask-64`" in markdown


def test_it_compares_with_the_previous_run_of_the_project(only_stages: Callable[..., None], project: Project) -> None:
    only_stages("fetch", "scan", "hipify")
    first = pipeline_run(project, {"src/vadd.cu": VADD_CU})
    second = pipeline_run(project, {"src/vadd.cu": SHFL_CU, "CMakeLists.txt": CUDA_CMAKE})
    comparison: Any = build_report(second)["comparison"]
    assert comparison["previous_run"]["number"] == first.number
    by_what = {c["what"]: c for c in comparison["changes"]}
    unconverted = by_what["unconverted references"]
    assert (unconverted["before"], unconverted["after"], unconverted["direction"]) == (0, 1, "worse")
    assert by_what["build-file findings"]["direction"] == "worse"
    assert comparison["new_findings"] and comparison["verdict"] == "worse"
    assert "Compared with run #1: worse" in render_markdown(build_report(second))


def test_it_marks_stages_that_got_better(only_stages: Callable[..., None], project: Project) -> None:
    only_stages("fetch")
    pipeline_run(project, {"src/vadd.cu": VADD_CU})
    only_stages("fetch", "scan")
    second = pipeline_run(project, {"src/vadd.cu": VADD_CU})
    comparison: Any = build_report(second)["comparison"]
    changes = comparison["changes"]
    assert {"what": "stage scan", "before": "skipped", "after": "passed", "direction": "better"} in changes


def test_it_reads_odd_or_missing_stage_data_without_failing(only_stages: Callable[..., None], project: Project) -> None:
    only_stages()
    run = pipeline_run(project, {"src/vadd.cu": VADD_CU})
    run.stages.filter(name="hipify").update(data={"totals": "not a dict", "files": [1, None]})
    run.stages.filter(name="compile").update(data={"files": [{"status": "failed", "errors": "2"}], "diagnostics": None})
    run.stages.filter(name="smoke").update(data={"execution": None, "classification": {"kind": "no-device"}})
    report: dict[str, Any] = build_report(run)
    assert report["translation"] is None
    assert report["compile"]["errors"] == 2 and report["compile"]["failed_files"] == [""]
    assert report["smoke"]["ran"] is False and report["smoke"]["classification"] == "no-device"
    assert "Smoke: no-device" in render_markdown(report)

