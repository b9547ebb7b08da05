"""Both toolchain roots build what ported code needs, with the product's own compile, link and build code:

- a vector-add program with a warp reduction passes compile and link on rocm-7.2 and rocm-6.4 with the
  default settings (three targets); on HIP 6.4 only because the compile stage defines
  HIP_ENABLE_WARP_SYNC_BUILTINS, which it does not on 7.2;
- in the 7.2 root, programs using RCCL and roctx compile and link, and CMake projects with
  ``find_package(rccl)``, ``find_package(hip)`` and ``find_package(OpenMP)`` configure and build in the sandbox.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from translator import TranslateOptions, translate_source
from worker.project_settings import ProjectSettings
from worker.toolchain.compile import compile_tree
from worker.toolchain.detect import detect_toolchain
from worker.toolchain.link import link_objects
from worker.toolchain.project_build import run_project_build
from worker.toolchain.version_defines import WARP_SYNC_BUILTINS

VECADD_CU = """#include <cstdio>
#include <cuda_runtime.h>

__global__ void vecadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

__global__ void sum(const float* c, float* total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? c[i] : 0.0f;
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffff, v, offset);
  if (threadIdx.x % warpSize == 0) atomicAdd(total, v);
}

int main() {
  const int n = 1 << 10;
  float *a, *b, *c, *total;
  cudaMalloc(&a, n * sizeof(float)); cudaMalloc(&b, n * sizeof(float));
  cudaMalloc(&c, n * sizeof(float)); cudaMalloc(&total, sizeof(float));
  vecadd<<<(n + 255) / 256, 256>>>(a, b, c, n);
  sum<<<(n + 255) / 256, 256>>>(c, total, n);
  printf("%s\\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
"""
ALLREDUCE_HIP = """#include <hip/hip_runtime.h>
#include <rccl/rccl.h>
int main() {
  ncclUniqueId id;
  if (ncclGetUniqueId(&id) != ncclSuccess) return 1;
  int version = 0;
  return ncclGetVersion(&version) == ncclSuccess && version > 0 ? 0 : 1;
}
"""
RANGES_HIP = """#include <hip/hip_runtime.h>
#include <roctracer/roctx.h>
int main() {
  roctxRangePush("step");
  roctxMark("halfway");
  return roctxRangePop() >= 0 ? 0 : 1;
}
"""
# One configure for all: a HIP-language target linking RCCL's package, a C++ one through hip::device that also
# uses OpenMP with hipcc's own clang (as cuda-samples' top-level CMakeLists.txt asks for it).
CMAKE_RCCL_AND_HIP = """cmake_minimum_required(VERSION 3.21)
project(collectives LANGUAGES CXX HIP)
find_package(hip REQUIRED)
find_package(rccl REQUIRED)
find_package(OpenMP REQUIRED)
add_executable(allreduce allreduce.hip)
target_link_libraries(allreduce PRIVATE hip::host roc::rccl)
add_executable(vecadd vecadd.cpp)
target_link_libraries(vecadd PRIVATE hip::device OpenMP::OpenMP_CXX)
"""
VECADD_CPP = """#include <hip/hip_runtime.h>
__global__ void k(float* x) { x[0] = 1.0f; }
int main() { k<<<1, 1>>>(nullptr); return 0; }
"""
ONE_TARGET = ("gfx90a",)  # the library and CMake checks are not about targets


@pytest.mark.parametrize("name", ["rocm-7.2", "rocm-6.4"])
def test_vecadd_compiles_and_links_on_both_roots_with_the_default_settings(name: str, tmp_path: Path) -> None:
    toolchain = detect_toolchain(name)
    if not toolchain.available:
        pytest.skip(f"toolchain root {name} is not installed")
    translated = translate_source(VECADD_CU, "vecadd.cu", TranslateOptions(target_hip_version=toolchain.hip_version)).text
    (tmp_path / "hip").mkdir()
    (tmp_path / "hip" / "vecadd.cu").write_text(translated)
    settings = ProjectSettings(toolchain=name)
    report = compile_tree(tmp_path / "hip", tmp_path / "build", settings, tmp_path / "cache", toolchain)
    assert report.ok, report.files[0].output[-1500:]
    [result] = report.files
    assert [t.arch for t in result.targets] == ["gfx90a", "gfx942", "gfx1100"]
    defined = f"-D{WARP_SYNC_BUILTINS}" in result.command
    assert defined is (toolchain.hip_version == "6.4") and [d.name for d in report.defines] == [WARP_SYNC_BUILTINS] * defined
    linked = link_objects({result.path: Path(result.object_path)}, tmp_path / "hip", tmp_path / "build", settings, toolchain)
    assert linked.ok, [t.output[-800:] for t in linked.targets]
    assert Path(linked.targets[0].output_path).is_file()


@pytest.fixture
def root_72() -> None:
    if not detect_toolchain("rocm-7.2").available:
        pytest.skip("toolchain root rocm-7.2 is not installed")


@pytest.mark.usefixtures("root_72")
def test_rccl_and_roctx_programs_compile_and_link_in_the_72_root(tmp_path: Path) -> None:
    for name, text in {"allreduce.hip": ALLREDUCE_HIP, "ranges.hip": RANGES_HIP}.items():
        (tmp_path / "hip" / name.removesuffix(".hip")).mkdir(parents=True)
        (tmp_path / "hip" / name.removesuffix(".hip") / name).write_text(text)
    settings = ProjectSettings(toolchain="rocm-7.2", offload_archs=ONE_TARGET)
    report = compile_tree(tmp_path / "hip", tmp_path / "build", settings, tmp_path / "cache")
    assert report.ok, {f.path: f.output[-800:] for f in report.files if f.status != "passed"}
    for result in report.files:
        linked = link_objects({result.path: Path(result.object_path)}, tmp_path / "hip", tmp_path / "build", settings)
        assert linked.ok, (result.path, [t.output[-800:] for t in linked.targets])
        library = "-lrccl" if "allreduce" in result.path else "-lroctx64"
        assert library in linked.targets[0].command and Path(linked.targets[0].output_path).is_file()


@pytest.mark.usefixtures("root_72")
def test_a_cmake_project_finding_rccl_and_hip_configures_and_builds(tmp_path: Path) -> None:
    (tmp_path / "hip").mkdir()
    for name, text in {"CMakeLists.txt": CMAKE_RCCL_AND_HIP, "allreduce.hip": ALLREDUCE_HIP, "vecadd.cpp": VECADD_CPP}.items():
        (tmp_path / "hip" / name).write_text(text)
    settings = ProjectSettings(toolchain="rocm-7.2", offload_archs=ONE_TARGET)
    report = run_project_build(tmp_path, tmp_path / "hip", tmp_path / "build", settings)
    assert report.ok, report.output[-2000:]
    assert [s["name"] for s in report.steps] == ["configure", "build"]
    assert (tmp_path / "build" / "allreduce").is_file() and (tmp_path / "build" / "vecadd").is_file()
