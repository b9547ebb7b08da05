from __future__ import annotations

import sys
from pathlib import Path

# This folder is named like the package; without pytest-django (-p no:django) nothing puts the
# repository root on sys.path, and "translator" would resolve to this folder as a namespace package.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pytest

from translator import TranslateOptions


@pytest.fixture
def hip52() -> TranslateOptions:
    """Pinned target so expectations do not depend on the machine's HIP."""
    return TranslateOptions(target_hip_version="5.2")
