"""A headless-Chromium walk through what issue 15 added: the cause summary on a failed run, the
compile page grouped by cause, and a project's progress chart. Screenshots go to the test
artifacts folder (``MIGRATOR_TEST_ARTIFACTS``, default ``var/test-artifacts``), never the repository."""
from __future__ import annotations

import io
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from django.contrib.auth.models import User
from pytest_django.live_server_helper import LiveServer

from migrator.accounts.models import Team
from migrator.pipeline.orchestrator import run_sync
from migrator.projects import actions, transitions
from migrator.projects.constants import StageState
from migrator.projects.models import Run
from tests.browser.chromium import ARTIFACTS, CHROMIUM
from tests.conftest import VADD_CU, make_tar_gz, sign_in_as_alice
from tests.outcomes.real_toolchain import compile_data, require_root

if TYPE_CHECKING:  # Playwright is imported where a browser starts
    from playwright.sync_api import Page

RT = "#include <hip/hip_runtime.h>\n"

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian's chromium is not installed (./dev installs it)"),
]


@pytest.fixture
def runs(team_user: tuple[User, Team], only_stages: Callable[..., None], tmp_path: Path) -> tuple[Run, Run]:
    """Two real translated runs of one project, the second with a compile stage that failed on real hipcc output."""
    require_root()
    only_stages("fetch", "scan", "hipify")
    user, team = team_user
    project = actions.create_project(team, "outcomes-demo", user=user)
    actions.store_archive(project, io.BytesIO(make_tar_gz({"src/vadd.cu": VADD_CU})), "a.tgz", user)
    first = run_sync(actions.create_run(project, user=user))
    more = {"src/vadd.cu": VADD_CU, "src/vsub.cu": VADD_CU.replace("vadd", "vsub"), "src/vmul.cu": VADD_CU.replace("vadd", "vmul")}
    actions.store_archive(project, io.BytesIO(make_tar_gz(more)), "b.tgz", user)
    second = actions.create_run(project, user=user)
    data, _ = compile_data(tmp_path / "ws", {
        "src/tensor_contract.hip": RT + "#include <hiptensor/hiptensor.h>\n", "src/tensor_reduce.hip": RT + "#include <hiptensor/hiptensor.h>\n",
        "src/left.hip": RT + "int h(hipGraphNodeType t) { int b = 0; (void)hipDeviceGetAttribute(&b, cudaDevAttrMaxBlocksPerMultiprocessor, 0); return t == cudaGraphNodeTypeConditional ? b : 0; }\n", "src/flags.hip": RT + "#include <hipblas.h>\n",
    })
    for entry in data["files"]:
        entry["command"] = ["hipcc", "--offload-arch=gfx90a", "-Isrc", "-x", "hip", entry["path"], "-o", f"build/obj/{entry['path']}.o"]
    only_stages("fetch", "scan", "hipify", "compile")
    for stage in second.stages.order_by("position"):
        transitions.claim_stage(stage.pk, "w")
        if stage.name == "compile":
            transitions.finish_stage(stage.pk, StageState.FAILED, "Compile failed: 4 files, 0 cached, 4 failed.", data)
            break
        transitions.finish_stage(stage.pk, StageState.PASSED, "ok", {"totals": {"changed": 3, "unconverted_total": 2}} if stage.name == "hipify" else {})
    second.refresh_from_db()
    return first, second




def test_a_team_sees_why_its_run_failed_and_how_its_port_moves(
    page: Page, live_server: LiveServer, runs: tuple[Run, Run]
) -> None:
    first, second = runs
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    base = live_server.url
    sign_in_as_alice(page, base)

    page.goto(f"{base}/runs/{second.pk}/")
    summary = page.locator("#cause-summary").inner_text()
    assert summary.startswith(f"Why it failed: 2 files fail because hipTensor is not in toolchain {require_root().name}")
    assert "CUDA names left untranslated: cudaDevAttrMaxBlocksPerMultiprocessor, cudaGraphNodeTypeConditional" in summary
    page.screenshot(path=str(ARTIFACTS / "run-cause-summary.png"), full_page=True)

    page.click("#stage-compile a")
    causes = page.locator("#compile-causes")
    causes.wait_for()
    groups = page.locator("#compile-causes details.cause-group")
    assert groups.count() == 3
    assert "Environment · 2 files" in groups.nth(0).locator("summary").inner_text()
    assert page.locator("#compile-causes pre.command").first.is_visible()
    assert "hipcc --offload-arch=gfx90a -Isrc -x hip" in page.locator("#compile-causes pre.command").first.inner_text()
    height = page.evaluate("document.querySelector('#stage-panel').getBoundingClientRect().height")
    page.screenshot(path=str(ARTIFACTS / "compile-grouped-by-cause.png"), full_page=True)
    assert height < 2500  # grouped and folded, not a wall of per-file lines

    page.goto(f"{base}/projects/{second.project_id}/")
    chart = page.locator("#progress svg.progress-chart")
    chart.wait_for()
    assert chart.locator("circle").count() >= 6
    chart.screenshot(path=str(ARTIFACTS / "project-progress-chart.png"))
    assert (ARTIFACTS / "project-progress-chart.png").stat().st_size > 1000
