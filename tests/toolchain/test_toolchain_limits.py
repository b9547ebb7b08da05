"""Bad input for the per-TU compile: a compile over its time limit, a compiler crash."""
from __future__ import annotations

import subprocess
from pathlib import Path

from worker.project_settings import ProjectSettings
from worker.toolchain.compile import compile_tree


def test_a_compile_past_its_time_limit_is_killed_with_its_children(tmp_path: Path) -> None:
    tree = tmp_path / "hip_slow_unit_tree"
    tree.mkdir()
    (tree / "slow.hip").write_text("#include <hip/hip_runtime.h>\n__global__ void k() {}\n")
    report = compile_tree(tree, tmp_path / "build", ProjectSettings(compile_timeout_s=1), tmp_path / "cache", jobs=1)
    [result] = report.files
    assert result.status == "timeout" and not report.ok
    assert "killed after the 1 s time limit" in result.output
    assert not (tmp_path / "build/obj/slow.hip.o").exists()
    leftover = subprocess.run(["pgrep", "-f", "hip_slow_unit_tree"], check=False, capture_output=True, text=True).stdout
    assert leftover == ""


def test_a_compiler_crash_is_reported_as_a_crash(tmp_path: Path) -> None:
    tree = tmp_path / "hip"
    tree.mkdir()
    (tree / "crash.hip").write_text("#pragma clang __debug crash\n__global__ void k() {}\n")
    report = compile_tree(tree, tmp_path / "build", ProjectSettings(), tmp_path / "cache", jobs=1)
    [result] = report.files
    assert result.status == "crashed"
    assert "the compiler crashed on crash.hip" in result.output
    assert report.cache_misses == 1 and not list((tmp_path / "cache").rglob("*.o"))
