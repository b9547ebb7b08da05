"""Markers shared by these tests."""
from __future__ import annotations

import importlib.util

import pytest

# PyTorch is optional (its CPU wheel is large and not in requirements.txt); ./dev installs it.
needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                 reason="PyTorch is not installed: pip install torch (the CPU wheel)")
