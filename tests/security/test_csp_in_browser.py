"""The Content-Security-Policy in a real browser: Chromium reports no violation on the live pages,
while htmx polls, searches and swaps fragments."""
from __future__ import annotations

import os
import shutil
from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from pytest_django.live_server_helper import LiveServer

from migrator.accounts.models import Team
from migrator.pipeline import orchestrator
from migrator.projects import actions
from migrator.projects.models import Run
from tests.conftest import make_tar_gz, sign_in_as_alice

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian's chromium is not installed (./dev installs it)"),
]


@pytest.fixture
def finished_run(team_user: tuple[User, Team], only_stages: Callable[..., None]) -> Run:
    only_stages("fetch", "scan", "hipify")
    user, team = team_user
    project = actions.create_project(team, "csp-browser", user=user)
    files = {"src/deep/er/k.cu": "__global__ void k(float* x) { x[threadIdx.x] = 1; }\nint main() { cudaDeviceSynchronize(); }\n"}
    actions.store_archive(project, SimpleUploadedFile("c.tgz", make_tar_gz(files)), "c.tgz", user)
    return orchestrator.run_sync(actions.create_run(project, user=user))


def test_chromium_reports_no_policy_violation(
    live_server: LiveServer, finished_run: Run, team_user: tuple[User, Team]
) -> None:
    from playwright.sync_api import sync_playwright

    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # Playwright's sync API runs an event loop in this thread
    base = live_server.url
    violations: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--no-first-run"])
        page = browser.new_page()
        page.set_default_timeout(20_000)
        page.on("console", lambda msg: violations.append(msg.text) if "Content Security Policy" in msg.text else None)
        sign_in_as_alice(page, base)
        for path in (f"/runs/{finished_run.pk}/", f"/runs/{finished_run.pk}/files/",
                     f"/runs/{finished_run.pk}/files/src/deep/er/k.cu", "/runners/", "/api/v1/docs"):
            page.goto(base + path)
            page.wait_for_load_state("networkidle")
        page.goto(f"{base}/notebook/")
        page.fill("#id_q", "hipErrorInvalidDevice")  # htmx search-as-you-type swaps the results in
        page.wait_for_timeout(1000)
        assert page.evaluate("typeof htmx") == "object"  # our static htmx ran under the policy
        assert page.locator("head style").count() == 0  # htmx injected no <style> of its own
        browser.close()
    assert violations == []
