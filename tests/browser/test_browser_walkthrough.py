"""A user's walk through the real UI in headless Chromium (Debian's chromium, driven by Playwright).

Open a run, open a file diff, see the failing stage's matched notebook entry, add a new entry
from a log line, find it by search.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from pytest_django.live_server_helper import LiveServer

from migrator.accounts.models import Team
from migrator.notebook.actions import load_seed
from migrator.pipeline import orchestrator
from migrator.projects import actions
from migrator.projects.models import Run
from tests.conftest import make_tar_gz, sign_in_as_alice

if TYPE_CHECKING:  # Playwright is imported where a browser starts
    from playwright.sync_api import Page

BAD_CU = """#include <cuda_runtime.h>

__global__ void fill(float* x) { x[threadIdx.x] = 1.0f; }

int main() {
  float* d;
  cudaMalloc(&d, 32 * sizeof(float));
  fill<<<1, 32>>>(d);
  cudaFooBarBaz(d);
  return 0;
}
"""

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def failed_run(team_user: tuple[User, Team], only_stages: Callable[..., None]) -> Run:
    only_stages("fetch", "scan", "hipify", "compile")
    load_seed()
    user, team = team_user
    project = actions.create_project(team, "browser-demo", user=user)
    archive = make_tar_gz({"src/bad.cu": BAD_CU, "CMakeLists.txt": "find_package(CUDA REQUIRED)\n"})
    actions.store_archive(project, SimpleUploadedFile("b.tgz", archive), "b.tgz", user)
    return orchestrator.run_sync(actions.create_run(project, user=user))




def test_a_user_walks_from_a_failure_to_a_new_notebook_entry(
    page: Page, live_server: LiveServer, failed_run: Run
) -> None:
    base = live_server.url
    sign_in_as_alice(page, base)

    # Open the run: the compile stage failed and the notebook entry that matched is shown.
    page.goto(f"{base}/runs/{failed_run.pk}/")
    assert page.get_attribute("#stage-compile", "data-state") == "failed"
    page.click("#stage-compile a")
    matches = page.locator("#notebook-matches")
    matches.wait_for()
    assert "CUDA code hipify could not convert" in matches.inner_text()
    assert "cudaFooBarBaz" in matches.inner_text()

    # Open the file diff of the translated kernel.
    page.click("text=Files changed")
    page.click('tr[data-path="src/bad.cu"] a')
    page.wait_for_selector("table.diff")
    body = page.inner_text("table.diff")
    assert "cudaMalloc" in body and "hipMalloc" in body

    # Back on the failing stage, add a notebook entry from a log line.
    page.goto(f"{base}/runs/{failed_run.pk}/?stage=compile")
    page.click("details.error-lines summary")
    # the failing line, not one of HIP 6.4's nodiscard warnings listed beside it
    error_line = page.locator("details.error-lines li", has_text="cudaFooBarBaz").first
    error_line.locator("a", has_text="add to notebook").click()
    page.wait_for_selector("#entry-form")
    assert "cudaFooBarBaz" in page.input_value("#id_signatures")
    page.fill("#id_title", "cudaFooBarBaz is our own wrapper, port it by hand")
    page.fill("#id_fix", "Replace `cudaFooBarBaz` with `hipFooBarBaz` from our HIP shim.")
    page.click("#entry-form button[type=submit]")
    page.wait_for_selector("text=Entry added to the notebook.")

    # Find it again by search-as-you-type.
    page.goto(f"{base}/notebook/")
    page.fill("#id_q", "wrapper port by hand")
    page.wait_for_selector("#results >> text=cudaFooBarBaz is our own wrapper")
