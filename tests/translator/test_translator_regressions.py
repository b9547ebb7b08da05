"""Translation breaks seen on real CUDA code bases, reproduced in code of our own and compiled.

Each translated file is compiled with the toolchain root's hipcc in the project's Sandbox. Before the
fixes the private driver types, ``__CUDA_ARCH__``, vector headers, interop struct and kernel-pointer
cases failed to compile; the cooperative-groups case pins where the runtime include goes.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.translator.toolchain import hipcc
from translator import TranslateOptions, translate_source, translate_tree

# A sample that carries its own copy of the driver API types (as NVIDIA's dynlink samples do).
PRIVATE_DRIVER_TYPES = """#ifndef SAMPLE_DYNLINK_CUDA_H
#define SAMPLE_DYNLINK_CUDA_H
typedef int CUdevice;
typedef enum cudaError_enum { CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE = 1 } CUresult;
typedef CUresult CUDAAPI_cuInit(unsigned int flags);
#endif
"""
DYNLINK_USER = """#include "dynlink_cuda.h"
CUresult init_driver(CUdevice* device) { *device = 0; return CUDA_SUCCESS; }
"""
DRIVER_USER = """#include <cuda.h>
CUresult pick(CUdevice* device) {
  CUresult status = cuInit(0);
  if (status != CUDA_SUCCESS) return status;
  return cuDeviceGet(device, 0);
}
"""
SOURCES = {
    # cooperative_groups before any runtime include: HIP's header needs the runtime first.
    "groups.cu": """#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void depth(int* out) {
  cg::thread_block block = cg::this_thread_block();
  out[threadIdx.x] = blockDim.z;
  block.sync();
}
""",
    # __CUDA_ARCH__ in code under an #ifdef (Rodinia's dwt2d style).
    "arch.cu": """#include <cuda_runtime.h>
__device__ int shift() {
#ifdef __CUDA_ARCH__
  return __CUDA_ARCH__ >= 200 ? 2 : 1;
#else
  return 0;
#endif
}
__global__ void k(int* x) { x[0] = shift(); }
""",
    # builtin_types.h / vector_functions.h: their content comes with the HIP runtime header.
    "vectors.cu": """#include <builtin_types.h>
#include <vector_functions.h>
__global__ void fill(float4* v) { v[threadIdx.x] = make_float4(1.0f, 2.0f, 3.0f, 4.0f); }
""",
    # the graphics-interop resource named with its struct tag.
    "interop.cpp": """#include <cuda_runtime.h>
struct cudaGraphicsResource* resource = nullptr;
cudaError_t unmap(cudaStream_t stream) { return cudaGraphicsUnmapResources(1, &resource, stream); }
""",
    # a kernel function passed where HIP only takes const void*.
    "cache.cu": """#include <cuda_runtime.h>
__global__ void stencil(float* x) { x[threadIdx.x] *= 2.0f; }
void tune() {
  cudaFuncSetCacheConfig(stencil, cudaFuncCachePreferL1);
  cudaFuncAttributes attributes;
  cudaFuncGetAttributes(&attributes, stencil);
  float* symbol_target = nullptr;
  cudaEvent_t done;
  cudaEventCreate(&done, cudaEventDisableTiming);
  cudaMallocHost(&symbol_target, 64);
}
""",
}


def test_a_private_copy_of_driver_types_wins_only_where_it_is_included(tmp_path: Path) -> None:
    source = tmp_path / "in"
    (source / "dynlink").mkdir(parents=True)
    (source / "driver").mkdir()
    (source / "dynlink" / "dynlink_cuda.h").write_text(PRIVATE_DRIVER_TYPES)
    (source / "dynlink" / "init.cpp").write_text(DYNLINK_USER)
    (source / "driver" / "pick.cpp").write_text(DRIVER_USER)
    tree = translate_tree(source, tmp_path / "out", TranslateOptions())
    out = tmp_path / "out"
    assert (out / "dynlink" / "init.cpp").read_text() == DYNLINK_USER
    translated = (out / "driver" / "pick.cpp").read_text()
    assert "hipError_t pick(hipDevice_t* device)" in translated and "CUresult" not in translated
    kept = {f.path: f.kept_local for f in tree.files}
    assert kept["dynlink/init.cpp"] == ["CUDA_SUCCESS", "CUdevice", "CUresult"]
    assert kept["driver/pick.cpp"] == []
    done = hipcc(out, "driver/pick.cpp", "-x", "hip")
    assert done.ok, done.process.output[-3000:]


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_translated_real_code_pattern_compiles(tmp_path: Path, name: str) -> None:
    result = translate_source(SOURCES[name], name, TranslateOptions())
    assert result.account.unconverted == []
    (tmp_path / name).write_text(result.text)
    done = hipcc(tmp_path, name, "-x", "hip")
    assert done.ok, result.text + done.process.output[-3000:]


def test_the_rewrites_read_as_hipify_clang_writes_them() -> None:
    text = translate_source(SOURCES["cache.cu"], "cache.cu", TranslateOptions()).text
    assert "hipFuncSetCacheConfig(reinterpret_cast<const void*>(stencil), hipFuncCachePreferL1);" in text
    assert "hipFuncGetAttributes(&attributes, reinterpret_cast<const void*>(stencil));" in text
    assert "hipEventCreateWithFlags(&done, hipEventDisableTiming);" in text
    assert "hipHostMalloc(&symbol_target, 64, hipHostMallocDefault);" in text
    groups = translate_source(SOURCES["groups.cu"], "groups.cu", TranslateOptions()).text
    assert groups.startswith("#include <hip/hip_runtime.h>\n#include <hip/hip_cooperative_groups.h>\n")
    arch = translate_source(SOURCES["arch.cu"], "arch.cu", TranslateOptions()).text
    assert "#ifdef __HIP_DEVICE_COMPILE__\n  return (__HIP_DEVICE_COMPILE__ * 800) >= 200 ? 2 : 1;" in arch
    interop = translate_source(SOURCES["interop.cpp"], "interop.cpp", TranslateOptions()).text
    assert "struct _hipGraphicsResource* resource" in interop
    vectors = translate_source(SOURCES["vectors.cu"], "vectors.cu", TranslateOptions()).text
    assert vectors.startswith("#include <hip/hip_runtime.h>\n__global__ void fill")
