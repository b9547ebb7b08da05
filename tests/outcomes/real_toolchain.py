"""Real tool output from the ROCm toolchain root, for the cause and notebook tests.

Each snippet is built by the root's own tools (hipcc, the linker, CMake, make) through the project's
sandbox over the root: nothing of the host but the workspace is visible. Compiler output is parsed
by our own parser into the shape the compile stage stores, with the toolchain as detected in the root.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from worker.toolchain.detect import describe_root
from worker.toolchain.diagnostics import parse_compiler_output
from worker.toolchain.roots import ToolchainRoot, default_root
from worker.toolchain.sandbox import Sandbox, SandboxLimits

ARCH = "gfx90a"


def require_root() -> ToolchainRoot:
    root = default_root()
    if root is None:
        pytest.skip("no ROCm toolchain root (./dev builds one)")
    return root


def run_in_root(workspace: Path, argv: list[str], timeout_s: int = 120) -> tuple[int, str]:
    """Run ``argv`` in the root with ``workspace`` mounted at /workspace; (exit code, output)."""
    workspace.mkdir(parents=True, exist_ok=True)
    box = Sandbox(require_root(), workspace, read_only=())
    result = box.run(argv, limits=SandboxLimits(timeout_s=timeout_s, memory_mb=0))
    return result.process.returncode, result.process.output


def hipcc_output(
    workspace: Path, name: str, source: str, flags: tuple[str, ...] = ("-fsyntax-only",)
) -> tuple[int, str]:
    path = workspace / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)
    return run_in_root(workspace, ["hipcc", f"--offload-arch={ARCH}", *flags, "-c", name, "-o", "/tmp/out.o"])


def root_toolchain() -> dict[str, object]:
    """What the compile stage stores as ``toolchain`` for this root (libraries detected in it)."""
    return describe_root(require_root()).to_dict()


def compile_data(workspace: Path, sources: dict[str, str], flags: tuple[str, ...] = ("-fsyntax-only",),
                 include_dirs: tuple[str, ...] = ()) -> tuple[dict[str, Any], dict[str, str]]:
    """Compile each source for real; the compile stage's data for them and the raw output per file.

    The data is JSON as ``Stage.data`` holds it, which tests complete (a file's command) before storing it.
    """
    files: list[dict[str, object]] = []
    diagnostics: list[dict[str, object]] = []
    outputs: dict[str, str] = {}
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
