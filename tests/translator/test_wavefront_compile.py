"""The full-mask fix makes a __shfl_down_sync(0xffffffff, ...) kernel compile with HIP 7.2, whose warp-sync
builtins reject 32-bit masks at compile time, for the default targets; with the rule disabled the same
kernel still fails on the 64-bit-mask assertion. Compiled by the compile stage's own code (compile_tree:
the toolchain root's clang in the sandbox)."""
from __future__ import annotations

from pathlib import Path

import pytest

from translator import TranslateOptions, translate_tree
from worker.project_settings import ProjectSettings
from worker.toolchain.compile import CompileReport, compile_tree
from worker.toolchain.roots import ToolchainNotFound, select_root

ROOT_NAME = "rocm-7.2"
KERNEL = """#include <cuda_runtime.h>

__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1)
    v += __shfl_down_sync(0xffffffff, v, offset);
  return v;
}

__global__ void count_positive(const float* x, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned votes = __ballot_sync(0xffffffff, i < n && x[i] > 0.f);
  float s = warp_sum(i < n ? x[i] : 0.f);
  if (threadIdx.x % warpSize == 0) atomicAdd(out, __popc(votes) + (s > 0.f));
}
"""


def _compile(tmp_path: Path, options: TranslateOptions, archs: tuple[str, ...]) -> CompileReport:
    try:
        select_root(ROOT_NAME)
    except ToolchainNotFound:
        pytest.skip(f"no {ROOT_NAME} toolchain root (./dev builds one)")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "reduce.cu").write_text(KERNEL)
    translate_tree(tmp_path / "src", tmp_path / "hip", options)
    settings = ProjectSettings(toolchain=ROOT_NAME, offload_archs=archs)
    return compile_tree(tmp_path / "hip", tmp_path / "build", settings, tmp_path / "cache", jobs=1)


@pytest.mark.parametrize("arch", ["gfx90a", "gfx942", "gfx1100"])
def test_the_fixed_kernel_compiles_for_each_default_target(tmp_path: Path, arch: str) -> None:
    report = _compile(tmp_path, TranslateOptions(), (arch,))
    assert report.ok, [d.message for _, d in report.diagnostics][:5]
    assert "0xffffffffffffffffull" in (tmp_path / "hip" / "reduce.cu").read_text()


def test_with_the_mask_rule_disabled_the_kernel_fails_on_the_64_bit_mask_assertion(tmp_path: Path) -> None:
    options = TranslateOptions(disabled_rules=frozenset({"wavefront.full-mask-64"}))
    report = _compile(tmp_path, options, ("gfx90a", "gfx942", "gfx1100"))
    [result] = report.files
    assert result.status == "failed"
    assert any("The mask must be a 64-bit integer" in d.message for d in result.diagnostics)
