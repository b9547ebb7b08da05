"""A headless-Chromium look at per-target results: a real run (translation with its 64-bit mask fix
switched off, compile for the three default targets in the sandbox over the default root) whose run
page names the targets that fail and whose compile page shows the file-by-target matrix, the mask
failure linking to the translation's wavefront finding; and a real run of a CMake project built with its
own build (``tests/fixtures/targets/cmake_vote``), whose compile page shows the same matrix for the unit
the build failed on and the outputs' device code by target. Screenshots go to the test artifacts folder
(``MIGRATOR_TEST_ARTIFACTS``, default ``var/test-artifacts``), never the repository."""
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
from migrator.projects import actions
from migrator.projects.models import Run
from migrator.reports.build import build_report
from tests.browser.chromium import ARTIFACTS, CHROMIUM
from tests.conftest import VADD_CU, make_tar_gz, sign_in_as_alice
from tests.outcomes.real_toolchain import require_root
from tests.toolchain.test_toolchain_targets import REDUCE_CU, WAVE32_HIP
from worker.toolchain.detect import detect_toolchain
from worker.toolchain.version_defines import hip_major_minor

if TYPE_CHECKING:  # Playwright is imported where a browser starts
    from playwright.sync_api import Page


pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian's chromium is not installed (./dev installs it)"),
]


@pytest.fixture
def run(team_user: tuple[User, Team], only_stages: Callable[..., None]) -> Run:
    require_root()
    if hip_major_minor(detect_toolchain().hipcc_version) < (7, 0):
        pytest.skip("HIP 7 refuses 32-bit masks; the default root here is older")
    only_stages("fetch", "scan", "hipify", "compile")
    user, team = team_user
    project = actions.create_project(team, "targets-demo", user=user,
                                     settings={"disabled_fix_rules": ["wavefront.full-mask-64"], "build_mode": "per_tu"})
    files = {"src/reduce.cu": REDUCE_CU, "src/count.hip": WAVE32_HIP, "src/vadd.cu": VADD_CU}
    actions.store_archive(project, io.BytesIO(make_tar_gz(files)), "src.tgz", user)
    return run_sync(actions.create_run(project, user=user))




def test_the_compile_page_shows_which_targets_each_file_fails_on(page: Page, live_server: LiveServer, run: Run) -> None:
    compile_stage = run.stages.get(name="compile")
    assert compile_stage.state == "failed", compile_stage.summary
    assert compile_stage.summary.endswith("(failing for gfx90a, gfx942, gfx1100).")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    base = live_server.url
    sign_in_as_alice(page, base)

    page.goto(f"{base}/runs/{run.pk}/")
    assert page.locator("#run-failed-targets").inner_text().startswith("Fails to compile for: gfx90a, gfx942, gfx1100")
    page.click("#run-failed-targets a")
    table = page.locator("#target-matrix-table")
    table.wait_for()
    assert [h.inner_text() for h in table.locator("th.target-arch").all()] == ["gfx90a", "gfx942", "gfx1100"]
    assert [c.inner_text() for c in table.locator("tr.target-totals td.num").all()] == ["1 / 3", "1 / 3", "2 / 3"]
    rows = {r.locator("td").first.inner_text(): r for r in table.locator("tr.target-row").all()}
    assert sorted(rows) == ["src/count.hip", "src/reduce.cu"]  # vadd.cu passed everywhere: no row
    count = [c.inner_text() for c in rows["src/count.hip"].locator("td.target-cell").all()]
    assert [c.split()[0] for c in count] == ["failed", "failed", "passed"] and "wave size" in count[0]
    reduce = rows["src/reduce.cu"].locator("td.target-cell")
    assert reduce.count() == 3 and all("failed" in c.inner_text() for c in reduce.all())
    assert "mask must be a 64-bit integer" in (reduce.first.get_attribute("title") or "")
    page.screenshot(path=str(ARTIFACTS / "compile-target-matrix.png"), full_page=True)

    link = rows["src/reduce.cu"].locator("a.wavefront-link").first
    assert link.inner_text() == "finding: full-mask-32"
    link.click()
    finding = page.locator("tr.wavefront-hazard:target")
    finding.wait_for()
    assert "src/reduce.cu:7" in finding.inner_text() and "not applied" in finding.inner_text()

    root = detect_toolchain()  # the report says what the compile ran with, enough to redo it
    compiled = build_report(run)["compile"]
    assert isinstance(compiled, dict)
    assert compiled["toolchain"] == {"name": root.name, "hip_version": root.hipcc_version, "clang_version": root.clang_version}
    assert compiled["offload_archs"] == ["gfx90a", "gfx942", "gfx1100"]
    assert compiled["failed_by_target"] == {"src/count.hip": ["gfx90a", "gfx942"], "src/reduce.cu": ["gfx90a", "gfx942", "gfx1100"]}
    page.goto(f"{base}/runs/{run.pk}/report")
    page.locator("summary", has_text="Compile:").click()  # the compile section, folded on the page
    text = page.locator("main").inner_text()
    assert f"Toolchain: {root.name} (HIP {root.hipcc_version}, clang {root.clang_version})" in text
    assert "Targets: gfx90a, gfx942, gfx1100" in text and "Fails for: gfx90a, gfx942, gfx1100" in text


PROJECT = Path(__file__).resolve().parents[1] / "fixtures" / "targets" / "cmake_vote"


@pytest.fixture
def project_run(team_user: tuple[User, Team], only_stages: Callable[..., None]) -> Run:
    require_root()
    only_stages("fetch", "scan", "hipify", "compile")
    user, team = team_user
    project = actions.create_project(team, "vote-cmake", user=user)  # default settings: the project's own build
    files = {p.relative_to(PROJECT).as_posix(): p.read_text() for p in sorted(PROJECT.rglob("*")) if p.is_file()}
    actions.store_archive(project, io.BytesIO(make_tar_gz(files)), "vote.tgz", user)
    return run_sync(actions.create_run(project, user=user))


def test_the_compile_page_shows_the_matrix_of_a_project_build(page: Page, live_server: LiveServer,
                                                              project_run: Run) -> None:
    compile_stage = project_run.stages.get(name="compile")
    assert compile_stage.state == "failed" and compile_stage.data["mode"] == "project", compile_stage.summary
    assert compile_stage.summary.endswith("(failing for gfx1100)")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    base = live_server.url
    sign_in_as_alice(page, base)

    page.goto(f"{base}/runs/{project_run.pk}/")
    assert page.locator("#run-failed-targets").inner_text().startswith("Fails to compile for: gfx1100")
    page.click("#run-failed-targets a")
    table = page.locator("#target-matrix-table")
    table.wait_for()
    assert "compiled again per target with the build's own command (from compile_commands.json)" in \
        page.locator("#target-matrix").inner_text()
    assert [h.inner_text() for h in table.locator("th.target-arch").all()] == ["gfx90a", "gfx942", "gfx1100"]
    assert [c.inner_text() for c in table.locator("tr.target-totals td.num").all()] == ["2 / 2", "2 / 2", "1 / 2"]
    [row] = table.locator("tr.target-row").all()
    assert row.locator("td").first.inner_text() == "src/vote.cu"
    cells = row.locator("td.target-cell")
    assert [c.inner_text().split()[0] for c in cells.all()] == ["passed", "passed", "failed"]
    assert "wave size" in cells.nth(2).inner_text()
    assert "vote kernels need a wavefront size of 64" in (cells.nth(2).get_attribute("title") or "")
    outputs = page.locator("#target-outputs-table tr.target-output")
    assert outputs.count() == 1 and outputs.first.locator("td").first.inner_text() == "scale_app"
    assert [c.inner_text() for c in outputs.first.locator("td.target-cell").all()] == ["device code"] * 3
    page.screenshot(path=str(ARTIFACTS / "compile-target-matrix-project.png"), full_page=True)

    compiled = build_report(project_run)["compile"]
    assert isinstance(compiled, dict)
    assert compiled["failed_targets"] == ["gfx1100"] and compiled["failed_by_target"] == {"src/vote.cu": ["gfx1100"]}
    assert compiled["outputs_by_target"] == {"scale_app": ["gfx1100", "gfx90a", "gfx942"]}
    page.goto(f"{base}/runs/{project_run.pk}/report")
    page.locator("summary", has_text="Compile:").click()
    text = page.locator("main").inner_text()
    assert "Fails for: gfx1100" in text and "Device code in the build's outputs:" in text
