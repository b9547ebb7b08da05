"""The ROCm toolchain root for translator tests: its headers, and hipcc run inside it (the project's Sandbox).

Tests that need it skip, saying why, only when no root is installed (``./dev`` builds one).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from worker.toolchain.roots import ToolchainRoot, default_root, toolchain_store
from worker.toolchain.sandbox import Sandbox, SandboxLimits, SandboxResult


def require_root() -> ToolchainRoot:
    root = default_root()
    if root is None:
        pytest.skip(f"no ROCm toolchain root in {toolchain_store()} (./dev builds one)")
    return root


def include_dir() -> Path:
    return require_root().path / "usr" / "include"


def hipcc(workspace: Path, source: str, *flags: str) -> SandboxResult:
    """Compile ``workspace/source`` for gfx90a with the root's hipcc, inside the sandbox."""
    box = Sandbox(require_root(), workspace=workspace)
    command = ["hipcc", "--offload-arch=gfx90a", "-c", source, "-o", "/tmp/out.o", *flags]
    return box.run(command, limits=SandboxLimits(timeout_s=600, memory_mb=0))
