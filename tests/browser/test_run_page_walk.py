"""A headless-Chromium walk of the run page answering "what now?" (issue 27 §2), at 1,400 and 800 px:

- a failed run (a real translation and a real compile in the sandbox over the toolchain root): the headline,
  one next step per cause with a link to the line in the diff view, failing lines without the warnings;
- a queued run behind another team's run and beside a running one: its queue, its place, what runs ahead,
  and timers that keep counting between polls;
- a partial run whose smoke no ROCm runner took and whose CUDA comparison had no runner: "not checked here"
  on the run page, the run list and the project list, the same "not run: no ROCm runner within 30 min" on
  the page and the report, and the report's header lines and icons as a browser without emoji fonts draws them.

Screenshots go to the test artifacts folder (``MIGRATOR_TEST_ARTIFACTS``, default ``var/test-artifacts``)."""
from __future__ import annotations

import io
import os
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from pytest_django.live_server_helper import LiveServer

from migrator.accounts.models import Team
from migrator.pipeline import orchestrator, sweep
from migrator.projects import actions, transitions
from migrator.projects.constants import RunState, StageState
from migrator.projects.models import Project, ReferenceRun, Run, Stage
from migrator.reports.icons import EMOJI
from tests.browser.chromium import ARTIFACTS, CHROMIUM
from tests.conftest import VADD_CU, make_tar_gz, sign_in_as_alice
from tests.outcomes.real_toolchain import require_root

if TYPE_CHECKING:  # Playwright is imported where a browser starts
    from playwright.sync_api import Page

WIDTHS = (1400, 800)
NCCL_CU = "#include <cuda_runtime.h>\n#include <nccl.h>\nvoid all(ncclComm_t c) { (void)c; }\n"
LEFT_CU = ("#include <cuda_runtime.h>\n__global__ void k(float* x) { x[threadIdx.x] = 1.0f; }\n"
           "int h(cudaGraphNodeType t) { int unused_here; int b = 0; cudaDeviceGetAttribute(&b, cudaDevAttrMaxBlocksPerMultiprocessor, 0); return t == cudaGraphNodeTypeConditional ? b : 0; }\n")

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian's chromium is not installed (./dev installs it)"),
]


def _project(team: Team, name: str, user: User | None, files: dict[str, str], settings: dict[str, object] | None = None) -> Project:
    project = actions.create_project(team, name, user=user, settings=settings or {})
    actions.store_archive(project, io.BytesIO(make_tar_gz(files)), f"{name}.tgz", user)
    return project


@pytest.fixture
def failed_run(team_user: tuple[User, Team], only_stages: Callable[..., None]) -> Run:
    """Fetched, translated and compiled for real: RCCL is absent from the root, two CUDA names are left."""
    require_root()
    only_stages("fetch", "scan", "hipify", "compile", "link")
    user, team = team_user
    # The root by name: RCCL is what rocm-6.4 lacks (rocm-7.2 has it), whichever root is the newest here.
    project = _project(team, "failing-demo", user, {"src/vadd.cu": VADD_CU, "src/nccl_all.cu": NCCL_CU, "src/left.cu": LEFT_CU},
                       {"toolchain": "rocm-6.4"})
    return orchestrator.run_sync(actions.create_run(project, user=user))


class Handed:
    def stage(self, stage: Stage, queue: str) -> None:
        transitions.mark_enqueued(stage, f"task-{stage.pk}", queue)

    def reference(self, reference: ReferenceRun) -> None:
        raise AssertionError("no CUDA runner is online: nothing may be handed to one")


def _pass_until(run: Run, last: str) -> None:
    for stage in run.stages.order_by("position"):
        transitions.mark_enqueued(stage, f"task-{stage.pk}", "cpu")
        transitions.claim_stage(stage.pk, "cpu-worker@ci")
        transitions.finish_stage(stage.pk, StageState.PASSED, f"{stage.name} ok")
        if stage.name == last:
            return


@pytest.fixture
def partial_run(team_user: tuple[User, Team]) -> Run:
    """Built, but no CUDA runner for the comparison and no ROCm runner for smoke within the wait limit."""
    user, team = team_user
    project = _project(team, "gpu-demo", user, {"src/vadd.cu": VADD_CU}, {"smoke_command": "./vadd"})
    run = actions.create_run(project, user=user)
    _pass_until(run, "link")
    handed = Handed()
    orchestrator.advance(run.pk, handed.stage, handed.reference)  # the reference: not run; smoke queued on rocm.gfx90a
    Stage.objects.filter(run=run, name="smoke").update(queued_at=timezone.now() - timedelta(minutes=31))
    sweep.sweep(handed.stage)
    run.refresh_from_db()
    assert run.state == RunState.PARTIAL
    return run


@pytest.fixture
def queued_run(team_user: tuple[User, Team], other_team_user: tuple[User, Team]) -> tuple[Run, Run]:
    """Our run's fetch queued behind another team's queued fetch, while a run of ours is compiling."""
    user, team = team_user
    theirs = actions.create_run(_project(other_team_user[1], "their-port", None, {"a.cu": VADD_CU}), user=None)
    transitions.mark_enqueued(theirs.stages.get(name="fetch"), "task-theirs", "cpu")
    Stage.objects.filter(run=theirs, name="fetch").update(queued_at=timezone.now() - timedelta(minutes=4))
    busy = actions.create_run(_project(team, "busy-port", user, {"b.cu": VADD_CU}), user=user)
    _pass_until(busy, "hipify")
    compile_stage = busy.stages.get(name="compile")
    transitions.mark_enqueued(compile_stage, "task-busy", "cpu")
    transitions.claim_stage(compile_stage.pk, "cpu-worker@ci")
    Stage.objects.filter(pk=compile_stage.pk).update(started_at=timezone.now() - timedelta(seconds=95))
    ours = actions.create_run(_project(team, "waiting-port", user, {"c.cu": VADD_CU}), user=user)
    transitions.mark_enqueued(ours.stages.get(name="fetch"), "task-ours", "cpu")
    return ours, busy




def _fits(page: Page) -> None:
    """Nothing sticks out of the window: no horizontal scrolling of the page or of a card, every stage tile
    inside the window."""
    width = page.evaluate("window.innerWidth")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    rights = page.evaluate("[...document.querySelectorAll('ol.strip li')].map(li => li.getBoundingClientRect().right)")
    assert all(right <= width for right in rights), rights
    wide = page.evaluate("[...document.querySelectorAll('.card')].filter(c => c.scrollWidth > c.clientWidth + 1).map(c => c.id || c.className)")
    assert wide == [], wide


def _at_each_width(page: Page, url: str, name: str, check: Callable[[Page], None]) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 1000})
        page.goto(url)
        check(page)
        _fits(page)
        page.screenshot(path=str(ARTIFACTS / f"{name}-{width}.png"), full_page=True)


def _ticks(page: Page, selector: str) -> None:
    """The timer at ``selector`` counts on in the browser between the page's polls."""
    before = page.locator(selector).first.inner_text()
    page.wait_for_function(
        "([sel, text]) => { const el = document.querySelector(sel); return el && el.textContent !== text; }",
        arg=[selector, before], timeout=5_000)


def test_a_failed_run_says_why_and_what_to_do_next_with_links_to_the_lines(
    page: Page, live_server: LiveServer, failed_run: Run
) -> None:
    assert failed_run.state == RunState.FAILED
    base = live_server.url
    sign_in_as_alice(page, base)

    def check(p: Page) -> None:
        headline = p.locator("#cause-summary").inner_text()
        assert headline.startswith("Why it failed: 1 file fails because RCCL is not in toolchain rocm-6.4 (package librccl-dev) (environment)")
        assert "CUDA names left untranslated: cudaDevAttrMaxBlocksPerMultiprocessor, cudaGraphNodeTypeConditional (translation)" in headline
        steps = p.locator("#next-steps li")
        assert steps.count() == 2
        assert steps.nth(0).inner_text().startswith("Install RCCL (Debian package librccl-dev) in toolchain rocm-6.4")
        assert "src/nccl_all.cu:2" in steps.nth(0).inner_text()
        assert steps.nth(1).inner_text().startswith("src/left.cu:3: translate the CUDA names left (cudaDevAttrMaxBlocksPerMultiprocessor, cudaGraphNodeTypeConditional)")
        assert all(p.locator("#next-steps li a.step-link").nth(i).inner_text() == "diff" for i in range(2))

    _at_each_width(page, f"{base}/runs/{failed_run.pk}/", "failed-run", check)
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.locator("#next-steps li").nth(1).locator("a.step-link").click()
    page.wait_for_selector("table.diff")
    assert page.url.endswith("/files/src/left.cu#o3")
    assert page.locator("[id='o3']").count() == 1  # the anchor the step links to is on the page

    page.goto(f"{base}/runs/{failed_run.pk}/?stage=compile")
    failing = page.locator("#failing-lines li")
    assert failing.count() >= 2 and all("warning" not in failing.nth(i).inner_text() for i in range(failing.count()))
    assert not page.locator("#warning-lines").get_attribute("open") if page.locator("#warning-lines").count() else True
    assert page.locator("#missing-libraries li").count() == 1  # RCCL, once: the library this failure needs
    assert "RCCL" in page.locator("#missing-libraries").inner_text()
    page.screenshot(path=str(ARTIFACTS / "failed-run-compile-1400.png"), full_page=True)


def test_a_queued_run_says_where_it_waits_and_its_timers_count(
    page: Page, live_server: LiveServer, queued_run: tuple[Run, Run]
) -> None:
    ours, busy = queued_run
    base = live_server.url
    sign_in_as_alice(page, base)

    def check(p: Page) -> None:
        waiting = p.locator("#fetch-waiting")
        text = waiting.inner_text()
        assert text.startswith("Queued: waiting for a CPU worker · number 2 of 2 in queue cpu · waiting for ")
        assert "No worker online takes this queue." in text and "running on it now: 1" in text
        assert "queued ahead: 1 (1 of these belongs to other teams)" in text
        assert waiting.locator("ul.ahead li").count() == 1  # ours is named, theirs only counted
        assert waiting.locator("ul.ahead li a").inner_text() == f"busy-port #{busy.number}"
        assert "their-port" not in p.content()
        _ticks(p, "#fetch-waiting .elapsed")
        _ticks(p, "#run-elapsed")

    _at_each_width(page, f"{base}/runs/{ours.pk}/", "queued-run", check)

    def running(p: Page) -> None:
        assert p.get_attribute("#stage-compile", "data-state") == "running"
        assert p.locator("#stage-elapsed").inner_text().startswith("1 min ")
        _ticks(p, "#stage-elapsed")
        _ticks(p, "#stage-compile .elapsed")

    _at_each_width(page, f"{base}/runs/{busy.pk}/", "running-run", running)


def test_a_partial_run_is_not_checked_here_everywhere_and_its_report_reads_right(
    page: Page, live_server: LiveServer, partial_run: Run
) -> None:
    base = live_server.url
    sign_in_as_alice(page, base)

    def check(p: Page) -> None:
        assert p.locator("#run-state").inner_text() == "Partial"
        assert [c.inner_text() for c in p.locator(".run-line .chip.needs").all()] == ["needs a ROCm runner", "needs a CUDA runner"]
        assert p.locator("#run-unchecked").inner_text().startswith("Not checked here: nothing failed")
        assert p.get_attribute("#stage-smoke", "data-state") == "skipped"
        assert p.locator("#reference-run").inner_text().startswith("CUDA reference run Not run no CUDA runner online")
        steps = [li.inner_text() for li in p.locator("#next-steps li").all()]
        assert steps[0].startswith("smoke: Start a ROCm runner") and steps[1].startswith("CUDA comparison: Start a CUDA runner")
        assert p.locator("#next-steps li a.step-link").first.get_attribute("href") == "/runners/"

    _at_each_width(page, f"{base}/runs/{partial_run.pk}/", "partial-run", check)
    page.goto(f"{base}/runs/{partial_run.pk}/?stage=smoke")
    assert page.locator("#stage-panel .summary").first.inner_text() == "not run: no ROCm runner within 30 min"
    assert page.locator("#stage-smoke .stage-state").inner_text() == "Not run"  # never "skipped", never "failed"
    assert page.locator("#smoke-not-run").inner_text().startswith("Not run here: the stage waited more than 30 min in queue rocm.gfx90a")

    def lists(p: Page) -> None:
        row = p.locator(f"#run-row-{partial_run.number}")
        assert row.locator(".verdict .state").inner_text() == "Not checked here"
        assert "needs a ROCm runner" in row.inner_text() and "Failed" not in row.inner_text()

    _at_each_width(page, f"{base}/projects/{partial_run.project_id}/", "partial-run-list", lists)
    page.goto(f"{base}/")
    assert "Not checked here" in page.locator(f"#project-{partial_run.project_id}").inner_text()

    def report(p: Page) -> None:
        text = p.locator("#report").inner_text()
        assert not any(emoji in text for emoji in EMOJI)  # Debian's Chromium has no emoji font: boxes
        assert p.locator("#report h2 svg.icon-partial").count() == 1
        header = p.locator("#report > p")
        lines = [header.nth(i).inner_text() for i in range(min(header.count(), 4))]
        assert lines[0].startswith("Source:") and lines[1].startswith("Full report:") and lines[2].startswith("Verdict:")
        tops = [header.nth(i).bounding_box()["y"] for i in range(3)]  # type: ignore[index]
        assert tops[0] < tops[1] < tops[2]  # one line each, never run together
        p.locator("#report summary", has_text="Smoke").click()
        assert "Not run: no ROCm runner within 30 min." in p.locator("#report").inner_text()

    _at_each_width(page, f"{base}/runs/{partial_run.pk}/report", "partial-run-report", report)
