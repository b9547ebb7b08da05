"""The cause summary on the run page, the report and the PR comment; the compile page grouped by cause."""
from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from migrator.accounts.models import Team
from migrator.projects import actions, transitions
from migrator.projects.constants import StageState
from migrator.projects.models import Run, Stage
from migrator.reports.build import build_report, render_markdown
from tests.outcomes.real_toolchain import compile_data, require_root

RUNTIME = "#include <hip/hip_runtime.h>\n"
SOURCES = {
    "src/tensor_ops.hip": RUNTIME + "#include <hiptensor/hiptensor.h>\n",
    "src/tensor_more.hip": RUNTIME + "#include <hiptensor/hiptensor.h>\n",
    "src/left.hip": RUNTIME + "int h() { int b = 0; (void)hipDeviceGetAttribute(&b, cudaDevAttrMaxBlocksPerMultiprocessor, 0); return b; }\n",
    "src/fine.hip": RUNTIME + "__global__ void ok(float* x) { x[0] = 1.0f; }\n",
}


@pytest.fixture
def failed_run(team_user: tuple[User, Team], tmp_path: Path) -> Run:
    """A run whose compile stage failed on real hipcc output (recorded as the compile stage stores it)."""
    require_root()
    data, _ = compile_data(tmp_path / "ws", SOURCES)
    for entry in data["files"]:
        entry["command"] = ["/usr/bin/hipcc", "--offload-arch=gfx90a", "-Isrc/include", "-x", "hip", entry["path"]]
    project = actions.create_project(team_user[1], "demo", user=None, git_url="https://example.com/demo.git")
    run = actions.create_run(project, user=None)
    for stage in run.stages.order_by("position"):
        if stage.name == "compile":
            transitions.claim_stage(stage.pk, "w")
            transitions.finish_stage(stage.pk, StageState.FAILED, "Compile failed: 4 files, 0 cached, 3 failed.", data)
            break
        transitions.claim_stage(stage.pk, "w")
        transitions.finish_stage(stage.pk, StageState.PASSED, "ok")
    run.refresh_from_db()
    return run


@pytest.mark.django_db
def test_the_run_page_opens_with_one_line_of_causes(failed_run: Run, alice_client: Client) -> None:
    page = alice_client.get(f"/runs/{failed_run.pk}/").content.decode()
    assert 'id="cause-summary"' in page
    assert f"2 files fail because hipTensor is not in toolchain {require_root().name}" in page
    assert "1 file on CUDA names left untranslated: cudaDevAttrMaxBlocksPerMultiprocessor (translation)" in page


@pytest.mark.django_db
def test_the_compile_page_groups_failing_files_by_cause_with_their_commands(
    failed_run: Run, alice_client: Client
) -> None:
    page = alice_client.get(f"/runs/{failed_run.pk}/?stage=compile").content.decode()
    causes = page[page.index('id="compile-causes"'):page.index('id="compile-all-files"')]
    assert causes.index("environment") < causes.index("translation")
    assert f"2 files · hipTensor is not in toolchain {require_root().name}" in causes and "1 file · CUDA names left untranslated" in causes
    assert "/usr/bin/hipcc --offload-arch=gfx90a -Isrc/include -x hip src/tensor_ops.hip" in causes
    assert "src/fine.hip" not in causes  # only failing files are grouped
    assert "All 4 translation units (3 failed)" in page


@pytest.mark.django_db
def test_the_report_and_pr_comment_carry_the_cause_summary(failed_run: Run) -> None:
    report = build_report(failed_run)
    assert report["causes"]["summary"].startswith(f"2 files fail because hipTensor is not in toolchain {require_root().name}")  # type: ignore[index]
    kinds = [g["kind"] for g in report["causes"]["groups"]]  # type: ignore[index]
    assert kinds == ["environment", "translation"]
    markdown = render_markdown(report)
    header = markdown.split("| Stage |")[0]
    assert f"**Why it failed:** 2 files fail because hipTensor is not in toolchain {require_root().name}" in header


@pytest.mark.django_db
def test_a_cancelled_or_skipped_stage_shows_no_full_progress_bar(failed_run: Run, alice_client: Client) -> None:
    Stage.objects.filter(run=failed_run, name="smoke").update(progress_done=0, progress_total=0)
    page = alice_client.get(f"/runs/{failed_run.pk}/").content.decode()
    smoke = page[page.index('id="stage-smoke"'):]
    smoke = smoke[:smoke.index("</li>")]
    assert "<progress" not in smoke and "not run" in smoke
