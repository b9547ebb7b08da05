"""The report's comparison rules, and the pages a team reads: projects list, project progress,
re-run choices, cancel confirmation, runners warning."""
from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from migrator.accounts.models import Team
from migrator.projects import actions
from migrator.projects.constants import RunState
from migrator.projects.models import Project
from migrator.reports.build import build_report, render_markdown
from tests.conftest import CUDA_CMAKE, VADD_CU, pipeline_run

pytestmark = pytest.mark.django_db



@pytest.fixture
def project(team_user: tuple[User, Team]) -> Project:
    return actions.create_project(team_user[1], "demo", user=team_user[0])


def test_the_comparison_skips_cancelled_runs(only_stages: Callable[..., None], project: Project) -> None:
    only_stages("fetch", "scan")
    first = pipeline_run(project, {"src/vadd.cu": VADD_CU})
    cancelled = actions.create_run(project, user=None)
    actions.cancel_run(cancelled)
    cancelled.refresh_from_db()
    assert cancelled.state == RunState.CANCELLED
    third = pipeline_run(project, {"src/vadd.cu": VADD_CU})
    comparison: Any = build_report(third)["comparison"]
    assert comparison["previous_run"]["number"] == first.number


def test_the_comparison_covers_every_finding_not_the_first_thirty(
    only_stages: Callable[..., None], project: Project
) -> None:
    only_stages("fetch", "scan")
    many = {f"mod{i:02d}/CMakeLists.txt": CUDA_CMAKE for i in range(40)} | {"src/vadd.cu": VADD_CU}
    first = pipeline_run(project, many)
    assert first.stages.get(name="scan").data["findings_total"] > 40
    second = pipeline_run(project, {"src/vadd.cu": VADD_CU})
    comparison: Any = build_report(second)["comparison"]
    resolved = comparison["resolved_findings"]
    assert len({key.split(" in ")[1] for key in resolved}) == 40  # every module, not the first 30 rows
    assert "and 30 more" in render_markdown(build_report(second)) or f"({len(resolved)})" in render_markdown(build_report(second))


def test_settings_changes_are_shown_as_such(only_stages: Callable[..., None], project: Project) -> None:
    only_stages("fetch", "scan", "smoke")
    pipeline_run(project, {"src/vadd.cu": VADD_CU})
    project.settings = {"smoke_command": "./vadd", "offload_archs": ["gfx942"]}
    project.save()
    second = pipeline_run(project, {"src/vadd.cu": VADD_CU})
    comparison: Any = build_report(second)["comparison"]
    settings = {c["setting"]: (c["before"], c["after"]) for c in comparison["settings_changes"]}
    assert settings == {"smoke_command": ("(default)", "./vadd"), "offload_archs": ("(default)", ["gfx942"])}
    smoke = next(c for c in comparison["changes"] if c["what"] == "stage smoke")
    assert smoke["direction"] == "settings"  # skipped (no command) -> failed (no build): not "worse"
    markdown = render_markdown(build_report(second))
    assert "**Settings changed:** `offload_archs` `(default)` → `['gfx942']`; `smoke_command` `(default)` → `./vadd`" in markdown


def test_the_projects_list_shows_the_last_verdict_and_a_stage_strip(
    only_stages: Callable[..., None], project: Project, alice_client: Client
) -> None:
    only_stages("fetch", "scan")
    run = pipeline_run(project, {"src/vadd.cu": VADD_CU})
    page = alice_client.get("/").content.decode()
    row = page[page.index(f'id="project-{project.pk}"'):].split("</tr>")[0]
    assert f"#{run.number}" in row and "Partial" in row and 'title="not checked: hipify' in row
    assert row.count('class="mini state-') == 6 and 'class="mini state-passed" title="fetch: Passed"' in row


def test_the_project_page_draws_progress_over_runs(
    only_stages: Callable[..., None], project: Project, alice_client: Client
) -> None:
    only_stages("fetch", "scan", "hipify")
    pipeline_run(project, {"src/vadd.cu": VADD_CU})
    pipeline_run(project, {"src/vadd.cu": VADD_CU, "src/more.cu": VADD_CU.replace("vadd", "vsub")})
    page = alice_client.get(f"/projects/{project.pk}/").content.decode()
    chart = page[page.index('id="progress"'):].split("</section>")[0]
    assert "<svg" in chart and "Translated files" in chart and "Unconverted references" in chart
    assert "<title>run #1: 1</title>" in chart and "<title>run #2: 2</title>" in chart


def test_rerun_offers_only_stages_that_can_rerun_and_defaults_to_the_failed_one(
    only_stages: Callable[..., None], project: Project, alice_client: Client
) -> None:
    only_stages("fetch", "scan")
    run = pipeline_run(project, {"src/vadd.cu": VADD_CU})
    run.stages.filter(name="scan").update(state="failed")
    page = alice_client.get(f"/runs/{run.pk}/").content.decode()
    select = page[page.index('name="from_stage"'):].split("</select>")[0]
    assert '<option value="scan" selected>' in select and 'value="hipify"' not in select and 'value="fetch"' in select


def test_cancel_asks_for_confirmation(project: Project, alice_client: Client, cuda_archive: bytes) -> None:
    actions.store_archive(project, io.BytesIO(cuda_archive), "demo.tar.gz", None)
    run = actions.create_run(project, user=None)
    page = alice_client.get(f"/runs/{run.pk}/").content.decode()
    form = page[page.index('id="cancel-form"'):].split(">")[0]
    assert f'hx-confirm="Cancel run #{run.number}?' in form and "hx-post=" in form  # no inline script: the CSP forbids it
    answer = alice_client.post(f"/runs/{run.pk}/cancel", HTTP_HX_REQUEST="true")
    assert answer.status_code == 200 and answer["HX-Redirect"] == f"/runs/{run.pk}/"
    run.refresh_from_db()
    assert run.state == RunState.CANCELLED


def test_the_runners_page_warns_when_no_rocm_runner_is_online(alice_client: Client) -> None:
    page = alice_client.get("/runners/").content.decode()
    assert 'id="no-rocm-runner"' in page and "No ROCm runner is online" in page
