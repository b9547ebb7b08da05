"""Fixtures shared by the delivery tests: the local fake of the host's API, allowed as an operator would allow it."""
from __future__ import annotations

from collections.abc import Iterator

import pytest
from pytest_django import Settings

from tests.reports.fake_host import FakeHost


@pytest.fixture
def host(settings: Settings) -> Iterator[FakeHost]:
    fake = FakeHost().start()
    settings.MIGRATOR_ALLOWED_HOST_API_BASES = [fake.url]
    settings.MIGRATOR_HOST_API_TRUSTED_NETWORKS = ["127.0.0.0/8"]
    settings.MIGRATOR_ALLOW_LOCAL_GIT = True
    settings.MIGRATOR_HOST_BACKOFF_S = 0.0
    yield fake
    fake.stop()
