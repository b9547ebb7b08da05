"""Markdown size limits, the report page and its exports, and the report links on project pages."""
from __future__ import annotations

import io
import json
from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client

from migrator.accounts.models import Team
from migrator.pipeline.orchestrator import run_sync
from migrator.projects import actions
from migrator.projects.models import Project, Run
from migrator.reports.build import build_report, render_markdown
from migrator.reports.markdown import GITHUB_COMMENT_LIMIT, export_markdown
from tests.conftest import VADD_CU, make_tar_gz

pytestmark = pytest.mark.django_db
PR = "https://github.com/acme/demo/pull/7"


@pytest.fixture
def finished_run(team_user: tuple[User, Team], only_stages: Callable[..., None]) -> Run:
    only_stages("fetch")
    project = actions.create_project(team_user[1], "demo", user=team_user[0])
    archive = actions.store_archive(project, io.BytesIO(make_tar_gz({"a.cu": VADD_CU})), "demo.tar.gz", None)
    return run_sync(actions.create_run(project, user=None, archive=archive, pr_url=PR))


def _flood(run: Run) -> None:
    """Stage data far larger than a comment allows (long messages, many rows)."""
    long = "x" * 400
    unconverted = [{"name": f"cudaThing{i}{long}", "line": i, "column": 0, "reason": "unsupported"} for i in range(40)]
    run.stages.filter(name="hipify").update(data={
        "totals": {"files": 1, "unconverted_total": 40, "unconverted_names": {u["name"]: 1 for u in unconverted}},
        "files": [{"path": f"dir/{long}/f{i}.cu", "unconverted": unconverted} for i in range(10)],
        "build_fixes": [{"rule_id": "cmake.x", "file": long, "line": i, "before": long, "after": long} for i in range(60)],
    })
    run.stages.filter(name="compile").update(data={
        "diagnostics": [{"severity": "error", "file": f"{long}{i}.cu", "line": i, "message": long} for i in range(100)],
    })
    run.stages.filter(name="scan").update(data={
        "findings_total": 100,
        "findings": [{"rule_id": f"r{i}", "severity": "error", "file": long, "line": i, "text": long} for i in range(100)],
    })


def test_a_long_report_is_cut_to_the_comment_limit_with_a_link(finished_run: Run) -> None:
    _flood(finished_run)
    report = build_report(finished_run)
    full = render_markdown(report, limit=10**9)
    short = render_markdown(report)
    assert len(full) > GITHUB_COMMENT_LIMIT
    assert export_markdown(report) == full  # the report page and the downloads are never cut
    assert len(short) <= GITHUB_COMMENT_LIMIT
    assert f"[Full report](http://localhost:8000/runs/{finished_run.pk}/report)" in short
    assert short.startswith("## 🟡 Migrator: demo run #1 partial") and short.count("<details") == short.count("</details>")


def test_a_small_limit_keeps_the_header_and_the_link(finished_run: Run) -> None:
    short = render_markdown(build_report(finished_run), limit=600)
    assert len(short) <= 600 and "Full report" in short and short.startswith("## ")


def test_a_short_report_is_not_cut(finished_run: Run) -> None:
    text = render_markdown(build_report(finished_run))
    assert "parts are left out" not in text and f"**Pull request:** {PR}" in text


def test_table_cells_cannot_inject_html_or_break_tables(finished_run: Run) -> None:
    finished_run.stages.filter(name="fetch").update(summary="<script>alert(1)</script> a|b\nc")
    text = render_markdown(build_report(finished_run))
    assert "<script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt; a\\|b c" in text


def test_the_report_page_and_exports(alice_client: Client, finished_run: Run) -> None:
    page = alice_client.get(f"/runs/{finished_run.pk}/report")
    assert page.status_code == 200 and b"Report of run #1" in page.content and b"<table>" in page.content
    assert PR.encode() in page.content
    md = alice_client.get(f"/runs/{finished_run.pk}/report.md")
    assert md.status_code == 200 and md["Content-Type"].startswith("text/markdown")
    assert md.content.decode().startswith("## 🟡 Migrator: demo run #1 partial")
    data = json.loads(alice_client.get(f"/runs/{finished_run.pk}/report.json").content)
    assert data["run"]["number"] == 1 and data["pull_request"]["repo"] == "acme/demo"


def test_another_team_cannot_see_a_report(
    client: Client, other_team_user: tuple[User, Team], finished_run: Run
) -> None:
    client.force_login(other_team_user[0])
    for suffix in ("", ".md", ".json"):
        assert client.get(f"/runs/{finished_run.pk}/report{suffix}").status_code == 404


def test_run_and_project_pages_link_reports_and_pull_requests(alice_client: Client, finished_run: Run) -> None:
    run_page = alice_client.get(f"/runs/{finished_run.pk}/")
    assert f'href="/runs/{finished_run.pk}/report"'.encode() in run_page.content
    project: Project = finished_run.project
    detail = alice_client.get(f"/projects/{project.pk}/").content.decode()
    section = detail[detail.index('id="runs-by-pr"'):]
    assert PR in section and f"/runs/{finished_run.pk}/report" in section and "#1 Partial" in section


def test_the_report_page_draws_our_icons_and_keeps_its_header_lines_apart(alice_client: Client, finished_run: Run) -> None:
    from migrator.reports.icons import EMOJI

    page = alice_client.get(f"/runs/{finished_run.pk}/report").content.decode()
    body = page[page.index('id="report"'):]
    assert not any(emoji in body for emoji in EMOJI)  # a browser without an emoji font draws boxes
    assert '<svg class="icon icon-partial" viewBox="0 0 16 16"' in body and 'aria-label="partial"' in body
    assert "<p><strong>Source:</strong>" in body and "<p><strong>Full report:</strong>" in body  # one paragraph each
    assert "<p><strong>Verdict:</strong> partial, not checked:" in body
    assert "<p><strong>Next steps:</strong></p>" in body and "This installation lacks the stage" in body
    assert export_markdown(build_report(finished_run)).startswith("## 🟡 Migrator")  # comments keep their emoji
