"""Translated output compiles with the real hipcc (two compiles: chevron and hipLaunchKernelGGL)."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.translator.toolchain import hipcc
from translator import TranslateOptions, translate_source

PROGRAM = """#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuComplex.h>
#include <cstdio>

#define CHECK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \\
    printf("%s\\n", cudaGetErrorString(e_)); return 1; } } while (0)

#if defined(__CUDA_RUNTIME_H__) && CUDART_VERSION >= 10000
template <typename T>
__global__ void scale(T* x, T a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * a;
  __syncthreads();
}
#endif

__global__ void halves(__half* h, cuFloatComplex* z) {
  h[threadIdx.x] = __hadd(h[threadIdx.x], __float2half(1.0f));
  z[threadIdx.x] = cuCmulf(z[threadIdx.x], make_cuFloatComplex(0.0f, 1.0f));
}

int main() {
  float* d = nullptr;
  cudaStream_t s;
  cudaEvent_t start;
  CHECK(cudaStreamCreate(&s));
  CHECK(cudaEventCreate(&start));
  CHECK(cudaMalloc(&d, 256 * sizeof(float)));
  CHECK(cudaMemsetAsync(d, 0, 256 * sizeof(float), s));
  cudaEventRecord(start, s);
  scale<float><<<dim3(2), dim3(128), 0, s>>>(d, 2.0f, 256);
  halves<<<1, 32>>>(nullptr, nullptr);
  CHECK(cudaGetLastError());
  CHECK(cudaStreamSynchronize(s));
  cudaFree(d);
  return 0;
}
"""


@pytest.mark.parametrize("launch_style", ["chevron", "ggl"])
def test_translated_program_compiles_with_the_toolchain_hipcc(tmp_path: Path, launch_style: str) -> None:
    options = TranslateOptions(launch_style=launch_style)  # type: ignore[arg-type]
    result = translate_source(PROGRAM, "program.cu", options)
    assert result.account.unconverted == []
    assert ("hipLaunchKernelGGL" in result.text) == (launch_style == "ggl")
    (tmp_path / "program.hip").write_text(result.text)
    done = hipcc(tmp_path, "program.hip")
    assert done.ok, done.process.output[-3000:]
