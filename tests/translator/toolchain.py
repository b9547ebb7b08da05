"""The ROCm toolchain root for translator tests: its headers, and hipcc run inside it with bubblewrap.

Tests that need it skip (saying why) only when no root is installed; ``./dev`` builds one.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

STORE = Path(os.environ.get("MIGRATOR_TOOLCHAIN_DIR") or "/var/cache/migrator/toolchains")


def toolchain_root() -> Path | None:
    """The newest complete root in the store (one with ``migrator/toolchain.json``)."""
    if not STORE.is_dir():
        return None
    roots = sorted(p for p in STORE.iterdir() if not p.name.startswith(".") and (p / "migrator" / "toolchain.json").is_file())
    return roots[-1] if roots else None


def require_root() -> Path:
    root = toolchain_root()
    if root is None:
        pytest.skip(f"no ROCm toolchain root under {STORE} (./dev builds one)")
    return root


def include_dir() -> Path:
    return require_root() / "usr" / "include"


def hipcc(workspace: Path, source: str, *flags: str) -> subprocess.CompletedProcess[str]:
    """Compile ``workspace/source`` for gfx90a inside the root (workspace mounted at /workspace)."""
    root = require_root()
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    command = [
        "bwrap", "--ro-bind", str(root), "/", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
        "--bind", str(workspace), "/workspace", "--chdir", "/workspace", "--unshare-all", "--die-with-parent",
        "--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HIP_PLATFORM", "amd", "--setenv", "HOME", "/tmp",
        "hipcc", "--offload-arch=gfx90a", "-c", source, "-o", "/tmp/out.o", *flags,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
