"""Both sides of a delivered setup.py extension, in the sandbox: for ROCm, PyTorch's hipify (as
BuildExtension runs it) then clang against PyTorch's hipified headers; for CUDA, nvcc over the .cu sources
with the extension's own nvcc flags. The guarded wave-size fix is what makes the ROCm side compile."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from translator.torch_hipify import hipify_package
from worker.context import Workspace
from worker.delivery.singlesource import single_source
from worker.delivery.verify_extension import extensions_of, nvcc_steps, verify_cuda_extension, verify_rocm_extension
from worker.project_settings import ProjectSettings
from worker.toolchain.detect import detect_toolchain

FIXTURE = Path(__file__).parent.parent / "fixtures" / "delivery" / "setup_rowsum"
SETTINGS = ProjectSettings(offload_archs=("gfx90a",))
KERNEL = "csrc/rowsum_kernel.cu"


def _delivered(tmp_path: Path) -> Path:
    tree = tmp_path / "delivery" / "tree"
    shutil.copytree(FIXTURE, tree)
    for change in single_source(tree, None).files:
        (tree / change.path).parent.mkdir(parents=True, exist_ok=True)
        (tree / change.path).write_bytes(change.data or b"")
    return tree


def test_nvcc_gets_the_extension_s_own_flags_for_each_cu_source(tmp_path: Path) -> None:
    [step] = nvcc_steps(extensions_of(_delivered(tmp_path), SETTINGS), torch_headers=False)
    assert step[:2] == ["nvcc", "-c"] and step[2].endswith("/delivered/csrc/rowsum_kernel.cu")
    assert step[-8:] == ["-O3", "--use_fast_math", "-lineinfo", "--expt-relaxed-constexpr",
                         "-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=sm_90"]
    assert "-DTORCH_EXTENSION_NAME=rowsum_cuda" in step


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="no nvcc on this machine (CI has it)")
def test_the_cuda_side_compiles_the_guarded_sources_with_nvcc_and_fails_on_a_broken_cuda_branch(tmp_path: Path) -> None:
    tree = _delivered(tmp_path)
    result = verify_cuda_extension(tree, Workspace(tmp_path / "run"), SETTINGS, lambda _: None)
    assert result.status == "passed", (result.reason, result.output_tail)
    assert [step.command[0] for step in result.steps] == ["nvcc"] and result.steps[0].returncode == 0
    kernel = tree / KERNEL
    kernel.write_text(kernel.read_text().replace("v += __shfl_down_sync(FULL_MASK, v, offset);",
                                                 "v += __shfl_down_sync(FULL_MASK, v, offset)"))  # the CUDA branch only
    broken = verify_cuda_extension(tree, Workspace(tmp_path / "run2"), SETTINGS, lambda _: None)
    assert broken.status == "failed" and broken.reason.startswith("nvcc exited with status")


@pytest.mark.skipif(hipify_package() is None, reason="PyTorch is not installed (its hipify is BuildExtension's)")
def test_the_rocm_side_compiles_with_the_guard_and_not_without_it(tmp_path: Path) -> None:
    if not detect_toolchain(SETTINGS.toolchain).available:
        pytest.skip("no ROCm toolchain root")
    tree = _delivered(tmp_path)
    result = verify_rocm_extension(tree, Workspace(tmp_path / "run"), SETTINGS, lambda _: None)
    assert result.status == "passed", (result.reason, result.output_tail)
    assert len(result.steps) == 2 and "PyTorch's hipify then clang for gfx90a" in result.reason
    shutil.copy(FIXTURE / KERNEL, tree / KERNEL)  # the kernel as the CUDA branch has it, without the guard
    # (the same delivery folder: the unchanged rowsum.cpp comes from its object cache)
    unguarded = verify_rocm_extension(tree, Workspace(tmp_path / "run"), SETTINGS, lambda _: None)
    assert unguarded.status == "failed" and "rowsum_kernel" in unguarded.reason
    assert "64-bit" in unguarded.output_tail
