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


@pytest.fixture(autouse=True)
def _private_rule_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """The command line keeps rule tables under $XDG_CACHE_HOME: never the real one in tests."""
    from translator import rulecache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.setattr(rulecache, "_directory", None)
