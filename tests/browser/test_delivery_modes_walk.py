"""A headless-Chromium walk of the delivery switch in a run's diff view: from the file list to the
single-source change (the build file's guarded HIP path and rocm/, no source touched), then the converted
copy (the translated sources), each with its diff opened in place. Screenshots go to the test artifacts
folder (``MIGRATOR_TEST_ARTIFACTS``), never the repository."""
from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from django.contrib.auth.models import User
from pytest_django import Settings
from pytest_django.live_server_helper import LiveServer

from migrator.accounts.models import Team
from tests.browser.chromium import ARTIFACTS, CHROMIUM
from tests.conftest import sign_in_as_alice
from tests.review.test_review_delivery_modes import translated_run

if TYPE_CHECKING:  # Playwright is imported where a browser starts
    from playwright.sync_api import Page

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian's chromium is not installed (./dev installs it)"),
]


def test_the_diff_view_switches_between_both_delivery_modes(
    page: Page, live_server: LiveServer, tmp_path: Path, team_user: tuple[User, Team], settings: Settings,
    only_stages: Callable[..., None],
) -> None:
    run = translated_run(tmp_path, team_user[1], settings, only_stages)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    sign_in_as_alice(page, live_server.url)
    page.goto(f"{live_server.url}/runs/{run.pk}/files/")
    page.locator("#file-tree").wait_for()

    page.click("#delivery-switch a[data-mode=single-source]")
    section = page.locator("#delivery-mode[data-mode=single-source]")
    section.wait_for()
    assert page.locator("#delivery-switch a[aria-current=page]").inner_text() == "Delivered as: Single source"
    paths = [row.get_attribute("data-path") for row in section.locator("tr.delivery-file").all()]
    assert paths == ["rocm/hipify_tree.py", "rocm/hip.mk", "rocm/nvcc_as_hipcc.py", "Makefile"]
    makefile = section.locator("tr.delivery-file[data-path=Makefile]")
    makefile.locator("summary").click()
    assert "+include rocm/hip.mk" in makefile.locator("pre.diff").inner_text()
    assert page.locator("#file-tree").count() == 0
    page.screenshot(path=str(ARTIFACTS / "review-delivery-single-source.png"), full_page=True)

    page.click("#delivery-switch a[data-mode=copy]")
    copy = page.locator("#delivery-mode[data-mode=copy]")
    copy.wait_for()
    assert [row.get_attribute("data-path") for row in copy.locator("tr.delivery-file").all()] == ["Makefile", "histogram.cu"]
    source = copy.locator('tr.delivery-file[data-path="histogram.cu"]')
    source.locator("summary").click()
    assert "hip/hip_runtime.h" in source.locator("pre.diff").inner_text()
    page.screenshot(path=str(ARTIFACTS / "review-delivery-copy.png"), full_page=True)

    page.click("#delivery-switch a.switch >> nth=0")
    page.locator("#file-tree").wait_for()
    assert page.locator("#delivery-mode").count() == 0
