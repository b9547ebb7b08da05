"""The page every UI walk drives: one Chromium page over the test's live server."""
from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from pytest_django.live_server_helper import LiveServer

from tests.browser.chromium import chromium_page

if TYPE_CHECKING:
    from playwright.sync_api import Page


@pytest.fixture
def page(live_server: LiveServer) -> Iterator[Page]:
    with chromium_page() as opened:
        yield opened
