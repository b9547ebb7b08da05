from pathlib import Path

from tests.markers import requires_nvcc
from worker.project_settings import ProjectSettings
from worker.runner.reference import (
    build_cuda_reference,
    defines_main,
    find_translation_units,
)
from worker.toolchain.sandbox import Sandbox

KERNEL = r"""
#include "kernel.h"
__global__ void add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
void launch_add(const float* a, const float* b, float* c, int n) { add<<<(n + 255) / 256, 256>>>(a, b, c, n); }
"""
HEADER = "void launch_add(const float* a, const float* b, float* c, int n);\n"
MAIN = r"""
#include <cstdio>
#include "kernel.h"
int main() { printf("built with SCALE=%d\n", SCALE); return 0; }
"""


def _tree(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "kernel.cu").write_text(KERNEL)
    (root / "src" / "kernel.h").write_text(HEADER)
    (root / "src" / "vecadd.cu").write_text(MAIN)
    (root / "third_party").mkdir()
    (root / "third_party" / "broken.cu").write_text("this is not C++\n")
    return root


def test_units_skip_excluded_folders_and_main_is_found(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "src-tree")
    units = find_translation_units(tree, ProjectSettings().exclude_globs)
    assert [u.as_posix() for u in units] == ["src/kernel.cu", "src/vecadd.cu"]
    assert defines_main(tree / "src/vecadd.cu") and not defines_main(tree / "src/kernel.cu")


@requires_nvcc
def test_nvcc_builds_the_original_sources_per_unit_and_links_main(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "src-tree")
    settings = ProjectSettings(defines=("SCALE=3",))
    result = build_cuda_reference(tree, tmp_path / "ref", settings, Sandbox(None, tmp_path), arch="sm_90")
    assert result.ok, result.error + "".join(r.output for r in result.compiles + result.links)
    assert result.executables == ["vecadd"] and result.arch == "sm_90"
    assert [r.target for r in result.compiles] == ["src/kernel.cu", "src/vecadd.cu"]
    assert "-arch=sm_90" in result.compiles[0].command
    assert (tmp_path / "ref" / "vecadd").is_file()


@requires_nvcc
def test_a_compile_error_is_a_failed_result_with_the_message(tmp_path: Path) -> None:
    tree = tmp_path / "src-tree"
    tree.mkdir()
    (tree / "kernel.cu").write_text("__global__ void add( {\n")
    result = build_cuda_reference(tree, tmp_path / "ref", ProjectSettings(), Sandbox(None, tmp_path), arch="sm_90")
    assert not result.ok and "kernel.cu" in result.error
    assert result.links == [] and "error" in result.compiles[0].output
