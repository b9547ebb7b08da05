"""Real hipcc output from the ROCm toolchain root, for the cause and notebook tests.

Each snippet is compiled (``-fsyntax-only``, or with extra flags) by the root's hipcc inside a
bubblewrap sandbox over the root: nothing of the host but the workspace is visible. The output is
parsed by our own compiler-output parser into the shape the compile stage stores.
"""
from __future__ import annotations

import shutil
import subprocess
from dataclasses import asdict
from pathlib import Path

import pytest

from worker.toolchain.detect import _library_status
from worker.toolchain.diagnostics import parse_compiler_output
from worker.toolchain.rocm_libraries import ROCM_LIBRARIES

ROOT = Path("/var/cache/migrator/toolchains/rocm-6.4")
ARCH = "gfx90a"


def require_root() -> Path:
    if not (ROOT / "usr" / "bin" / "hipcc").exists() or shutil.which("bwrap") is None:
        pytest.skip("the ROCm 6.4 toolchain root (built by ./dev) or bubblewrap is absent")
    return ROOT


def run_in_root(workspace: Path, argv: list[str], timeout_s: int = 120) -> tuple[int, str]:
    """Run ``argv`` in the root with ``workspace`` mounted at /workspace; (exit code, output)."""
    require_root()
    command = [
        "bwrap", "--ro-bind", str(ROOT), "/", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
        "--bind", str(workspace), "/workspace", "--chdir", "/workspace", "--unshare-all", "--die-with-parent",
        "--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HIP_PLATFORM", "amd", "--setenv", "HOME", "/tmp",
        *argv,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, check=False)
    return done.returncode, done.stdout + done.stderr


def hipcc_output(workspace: Path, name: str, source: str, flags: tuple[str, ...] = ("-fsyntax-only",)) -> tuple[int, str]:
    path = workspace / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)
    return run_in_root(workspace, ["hipcc", f"--offload-arch={ARCH}", *flags, "-c", name, "-o", "/tmp/out.o"])


def root_toolchain() -> dict[str, object]:
    """What the compile stage stores as ``toolchain`` for this root (libraries detected in it)."""
    rocm = require_root() / "usr"
    return {"name": "rocm-6.4", "hipcc_version": "6.4", "rocm_path": "/usr",
            "libraries": [asdict(_library_status(lib, rocm)) for lib in ROCM_LIBRARIES]}


def compile_data(workspace: Path, sources: dict[str, str], flags: tuple[str, ...] = ("-fsyntax-only",),
                 include_dirs: tuple[str, ...] = ()) -> tuple[dict[str, object], dict[str, str]]:
    """Compile each source for real; the compile stage's data for them and the raw output per file."""
    files, diagnostics, outputs = [], [], {}
    for name, source in sources.items():
        code, output = hipcc_output(workspace, name, source, flags)
        outputs[name] = output
        parsed = parse_compiler_output(output)
        errors = sum(1 for d in parsed if d.severity in ("error", "fatal"))
        files.append({"path": name, "original_path": name, "status": "passed" if code == 0 else "failed",
                      "errors": errors, "warnings": 0})
        diagnostics += [{"tu": name, "file": d.file, "line": d.line, "severity": d.severity, "message": d.message,
                         "original_file": d.file, "original_line": d.line, "flag": d.flag} for d in parsed]
    data = {"mode": "per_tu", "files": files, "diagnostics": diagnostics, "toolchain": root_toolchain(),
            "include_dirs": list(include_dirs)}
    return data, outputs
