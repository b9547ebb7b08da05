from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from worker.scanning.inventory import build_inventory
from worker.scanning.readiness import summarize

WriteTree = Callable[[dict[str, str]], Path]

GEMM_CU = """
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <thrust/device_vector.h>
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

__global__ void scale(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}

template <typename T>
__global__ __launch_bounds__(256) void warp_sum(const T* in, T* out) {
    T v = in[threadIdx.x];
    for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);
    unsigned mask = __ballot_sync(0xffffffff, v > 0);
    asm volatile("membar.gl;");
    if (threadIdx.x == 0) *out = v + mask;
}

int run(float* host, int n) {
    float* dev;
    cudaMalloc(&dev, n * sizeof(float));
    cudaMemcpy(dev, host, n * sizeof(float), cudaMemcpyHostToDevice);
    scale<<<(n + 255) / 256, 256>>>(dev, 2.0f, n);
    warp_sum<float><<<1, 32>>>(dev, dev);
    cublasHandle_t handle;
    cublasCreate(&handle);
    cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, nullptr, dev, n, dev, n, nullptr, dev, n);
    cudaFree(dev);
    return 0;
}
"""

TREE = {
    "src/gemm.cu": GEMM_CU,
    "src/main.cpp": "#include <cstdio>\nint main() { return 0; }\n",
    "src/util.h": "#pragma once\n#include <cuda_fp16.h>\ninline int one() { return 1; }\n",
    "CMakeLists.txt": "project(x CXX CUDA)\n",
    "Makefile": "all:\n",
    "setup.py": "from setuptools import setup\nsetup()\n",
    "requirements.txt": "torch\n",
    "BUILD.bazel": "cc_library(name='x')\n",
    "meson.build": "project('x', 'cpp')\n",
    "vendor/cub/cub.cuh": "__global__ void hidden() {}\n",
}


def test_it_counts_files_and_lines_by_language(write_tree: WriteTree) -> None:
    inventory = build_inventory(write_tree(TREE), ("vendor/**",)).to_dict()
    assert inventory["files_total"] == 9
    by_language = inventory["by_language"]
    assert isinstance(by_language, dict)
    assert by_language["CUDA"] == {"files": 1, "lines": GEMM_CU.strip().count("\n") + 1}
    assert by_language["C++"] == {"files": 1, "lines": 2}
    assert by_language["C/C++ header"]["files"] == 1


def test_it_finds_kernels_launches_and_cuda_files(write_tree: WriteTree) -> None:
    inventory = build_inventory(write_tree(TREE), ("vendor/**",))
    assert [(k.name, k.line) for k in inventory.kernels] == [("scale", 8), ("warp_sum", 14)]
    assert [k.name for k in inventory.launch_sites] == ["scale", "warp_sum"]
    assert inventory.cuda_files == ["src/gemm.cu", "src/util.h"]


def test_it_counts_api_use_by_library_and_hard_constructs(write_tree: WriteTree) -> None:
    inventory = build_inventory(write_tree(TREE), ("vendor/**",))
    by_library = inventory.api_by_library()
    assert by_library["CUDA runtime"] == 4  # cudaMalloc, cudaMemcpy, cudaMemcpyHostToDevice, cudaFree
    assert by_library["cuBLAS"] == 5  # cublasHandle_t, cublasCreate, cublasSgemm, CUBLAS_OP_N twice
    assert {"Thrust", "cooperative groups"} <= set(by_library)
    assert inventory.constructs == {"inline-ptx": 1}  # the wave-size assumptions are the wavefront scan's


def test_it_lists_build_systems_and_dependency_files(write_tree: WriteTree) -> None:
    inventory = build_inventory(write_tree(TREE), ("vendor/**",))
    assert set(inventory.build_systems) == {"CMake", "Make", "setuptools (setup.py)", "Bazel", "Meson"}
    assert inventory.dependency_files == ["requirements.txt", "setup.py"]


def test_readiness_uses_the_engine_mapping(write_tree: WriteTree) -> None:
    readiness = summarize(build_inventory(write_tree(TREE), ("vendor/**",)))
    assert readiness.engine_available
    assert readiness.references_total == 9
    assert readiness.translatable == 9 and readiness.hand_work == 1  # the asm: no translation known to port it
    assert readiness.hand_work_by_kind == {"inline-ptx": 1} and "inline-ptx" in readiness.constructs
    assert readiness.by_family == {"library": 5, "memory": 3, "type": 1} and readiness.by_library["cublas"] == 5
    assert {"hipBLAS", "rocThrust"} <= set(readiness.rocm_libraries_needed)


def test_readiness_counts_unknown_apis_as_hand_work(write_tree: WriteTree) -> None:
    source = "__global__ void k() {}\nvoid f() { cudaNoSuchThing(); cudnnConvolutionForward(0); cudaMalloc(0, 0); }\n"
    readiness = summarize(build_inventory(write_tree({"k.cu": source}), ()))
    assert (readiness.references_total, readiness.translatable, readiness.hand_work) == (3, 1, 2)
    assert set(readiness.hand_work_apis) == {"cudaNoSuchThing", "cudnnConvolutionForward"}
    assert readiness.translatable_share == round(1 / 3, 4)


def test_readiness_leaves_out_project_helpers_and_product_names(write_tree: WriteTree) -> None:
    source = """
    // cuBLAS and cuDNN are mentioned in prose only
    #define cudaCheck(call) check_impl((call), __FILE__, __LINE__)
    void cublasCheck(int status) {}
    int main() { cudaCheck(cudaDeviceSynchronize()); cublasCheck(0); return 0; }
    """
    inventory = build_inventory(write_tree({"main.cu": source}), ())
    assert inventory.defined == {"cudaCheck", "cublasCheck"}
    assert dict(inventory.api_identifiers()) == {"cudaDeviceSynchronize": 1}
    readiness = summarize(inventory)
    assert (readiness.references_total, readiness.translatable) == (1, 1)


def test_readiness_counts_nccl_calls_as_translatable_through_rccl(write_tree: WriteTree) -> None:
    source = "#include <nccl.h>\nvoid f(ncclComm_t c) { ncclAllReduce(0, 0, 1, ncclFloat, ncclSum, c, 0); }\n"
    readiness = summarize(build_inventory(write_tree({"ar.cu": source}), ()))
    assert readiness.hand_work == 0 and readiness.translatable == 4
    assert "RCCL" in readiness.rocm_libraries_needed
