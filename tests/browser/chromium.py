"""Debian's Chromium for the UI walks: where it is, where screenshots go, and one page opened in it."""
from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # Playwright is imported where a browser starts
    from playwright.sync_api import Page

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = Path(os.environ.get("MIGRATOR_TEST_ARTIFACTS", Path(__file__).resolve().parents[2] / "var" / "test-artifacts"))


@contextmanager
def chromium_page(width: int = 1400, height: int = 1000) -> Iterator[Page]:
    from playwright.sync_api import sync_playwright

    if not os.path.exists(CHROMIUM):  # ours to install, so a missing browser is a broken set-up, not a skip
        pytest.fail("Debian's chromium is not installed: ./dev installs it (apt-get install chromium)")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # Playwright's sync API runs an event loop in this thread
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
        ])
        page = browser.new_page(viewport={"width": width, "height": height})
        page.set_default_timeout(20_000)
        yield page
        browser.close()
