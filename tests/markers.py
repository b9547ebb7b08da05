"""Markers for tests of optional capabilities whose external tool is not ours to install.

Such a test is skipped, with the reason printed by ``pytest -rs``, when its tool is not on PATH; where the
tool is present it runs for real. Tools that ``./dev`` installs (make, bubblewrap, chromium) get no marker:
their absence is a broken installation and must fail.
"""
from __future__ import annotations

import shutil

import pytest


def requires_tool(tool: str, why: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(shutil.which(tool) is None, reason=f"{tool} is not on PATH: {why}")


# A CUDA toolkit is not a Debian main package; the runners page says the same when a CUDA runner lacks it.
requires_nvcc = requires_tool("nvcc", "CUDA reference builds need a CUDA toolkit, which ./dev does not install")
