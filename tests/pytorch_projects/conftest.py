from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

collect_ignore = ["fixtures"]  # our fixture projects carry their own tests
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def project_tree(tmp_path: Path) -> Callable[[str], Path]:
    """A writable copy of one of our fixture projects (finetune, extension, mixed)."""
    def copy(name: str) -> Path:
        dest = tmp_path / name
        shutil.copytree(FIXTURES / name, dest)
        return dest
    return copy

