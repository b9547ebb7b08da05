"""A local index holding every package the fine-tuning fixture declares, and the settings that point
the resolves at it (the product's own index settings: ``MIGRATOR_PIP_INDEX_URL``, ``MIGRATOR_ROCM_WHEEL_INDEX``)."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.dependencies.local_index import fill
from tests.pytorch_projects.simple_index import SimpleIndex, serving


@pytest.fixture
def local_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SimpleIndex]:
    with serving(tmp_path / "indexes") as index:
        fill(index)
        monkeypatch.setenv("MIGRATOR_PIP_INDEX_URL", index.url("pypi"))
        monkeypatch.setenv("MIGRATOR_ROCM_WHEEL_INDEX", index.url("rocm"))
        monkeypatch.setenv("MIGRATOR_PIP_TIMEOUT_S", "120")
        yield index
