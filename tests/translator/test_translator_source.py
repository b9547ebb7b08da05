"""Exact translations of real CUDA snippets, one API family at a time."""
from __future__ import annotations

from translator import TranslateOptions, translate_source

VECTOR_ADD = """#include <cuda_runtime.h>
#include <cstdio>

__global__ void vadd(const float* a, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] += a[i];
}

int main() {
  float *a, *c;
  cudaMalloc(&a, 64 * sizeof(float));
  cudaMalloc(&c, 64 * sizeof(float));
  cudaMemset(c, 0, 64 * sizeof(float));
  vadd<<<1, 64>>>(a, c, 64);
  cudaDeviceSynchronize();
  cudaFree(a);
  cudaFree(c);
  return 0;
}
"""


def test_it_translates_memory_calls_and_keeps_the_chevron_launch(hip52: TranslateOptions) -> None:
    result = translate_source(VECTOR_ADD, "vadd.cu", hip52)
    assert result.text == VECTOR_ADD.replace("cuda_runtime.h", "hip/hip_runtime.h").replace(
        "cudaMalloc", "hipMalloc").replace("cudaMemset", "hipMemset").replace("cudaFree", "hipFree").replace(
        "cudaDeviceSynchronize", "hipDeviceSynchronize")
    assert dict(result.account.converted) == {"memory": 5, "device": 1, "kernel-launch": 1, "header": 1}
    assert result.account.unconverted == [] and result.account.changed


def test_it_emits_hip_launch_kernel_ggl_like_hipify_clang() -> None:
    source = """__global__ void k(int* p) {}
template <typename T> __global__ void t(T* p, int n) {}
void go(int* p, float* f, cudaStream_t s) {
  k<<<4, 128>>>(p);
  t<float><<<dim3(2, 2), dim3(16, 16), 256, s>>>(f, 3);
  k <<< grid(3), 32 >>> ();
}
"""
    result = translate_source(source, "", TranslateOptions(target_hip_version="5.2", launch_style="ggl"))
    assert result.text == """#include <hip/hip_runtime.h>
__global__ void k(int* p) {}
template <typename T> __global__ void t(T* p, int n) {}
void go(int* p, float* f, hipStream_t s) {
  hipLaunchKernelGGL(k, dim3(4), dim3(128), 0, 0, p);
  hipLaunchKernelGGL(HIP_KERNEL_NAME(t<float>), dim3(2, 2), dim3(16, 16), 256, s, f, 3);
  hipLaunchKernelGGL(k, dim3(grid(3)), dim3(32), 0, 0);
}
"""
    assert result.account.converted["kernel-launch"] == 3


def test_it_translates_streams_events_errors_and_device_management(hip52: TranslateOptions) -> None:
    source = """#include <cuda_runtime_api.h>
float timed(cudaStream_t* s) {
  cudaStreamCreateWithFlags(s, cudaStreamNonBlocking);
  cudaEvent_t a, b; float ms;
  cudaEventCreate(&a); cudaEventRecord(a, *s); cudaEventElapsedTime(&ms, a, b);
  cudaDeviceProp prop; cudaGetDeviceProperties(&prop, 0); cudaSetDevice(0);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) puts(cudaGetErrorString(e));
  return ms;
}
"""
    result = translate_source(source, "", hip52)
    assert result.text == """#include <hip/hip_runtime.h>
#include <hip/hip_runtime_api.h>
float timed(hipStream_t* s) {
  hipStreamCreateWithFlags(s, hipStreamNonBlocking);
  hipEvent_t a, b; float ms;
  hipEventCreate(&a); hipEventRecord(a, *s); hipEventElapsedTime(&ms, a, b);
  hipDeviceProp_t prop; hipGetDeviceProperties(&prop, 0); hipSetDevice(0);
  hipError_t e = hipGetLastError();
  if (e != hipSuccess) puts(hipGetErrorString(e));
  return ms;
}
"""
    assert dict(result.account.converted) == {
        "stream": 1, "event": 3, "device": 2, "error": 2, "type": 6, "header": 1}


def test_it_reports_deprecated_and_newer_than_target_apis_with_positions(hip52: TranslateOptions) -> None:
    source = "void f() {\n  cudaThreadSynchronize();\n  cudaDeviceSetLimit(cudaLimitStackSize, 1);\n}\n"
    result = translate_source(source, "", hip52)
    assert "hipDeviceSynchronize();" in result.text
    assert "cudaDeviceSetLimit(cudaLimitStackSize, 1);" in result.text  # hipDeviceSetLimit is HIP 5.3
    assert result.account.deprecated == [
        {"name": "cudaThreadSynchronize", "line": 2, "column": 3, "reason": "deprecated in CUDA 10.0"}]
    assert result.account.unconverted == [
        {"name": "cudaDeviceSetLimit", "line": 3, "column": 3, "reason": "newer-than-target (HIP 5.3.0)"},
        {"name": "cudaLimitStackSize", "line": 3, "column": 22, "reason": "newer-than-target (HIP 5.3.0)"}]
    newer = translate_source(source, "", TranslateOptions(target_hip_version="6.0"))
    assert "hipDeviceSetLimit(hipLimitStackSize, 1);" in newer.text


def test_it_reports_unsupported_and_lists_unknown_cuda_like_names_apart(hip52: TranslateOptions) -> None:
    source = "void f(int* p) {\n  cudaDeviceFlushGPUDirectRDMAWrites(cudaFlushGPUDirectRDMAWritesTargetCurrentDevice,\n"
    source += "      cudaFlushGPUDirectRDMAWritesToOwner);\n  cudaMysteryCall(p);\n}\n"
    result = translate_source(source, "", hip52)
    names = [(f["name"], f["line"], f["column"], f["reason"]) for f in result.account.unconverted]
    assert names == [
        ("cudaDeviceFlushGPUDirectRDMAWrites", 2, 3, "unsupported"),
        ("cudaFlushGPUDirectRDMAWritesTargetCurrentDevice", 2, 38, "unsupported"),
        ("cudaFlushGPUDirectRDMAWritesToOwner", 3, 7, "unsupported"),
    ]
    assert result.account.cuda_like == [
        {"name": "cudaMysteryCall", "line": 4, "column": 3, "reason": "not-in-hipify-tables"}]
    assert result.text == source


def test_it_translates_device_functions_fp16_bf16_and_complex(hip52: TranslateOptions) -> None:
    source = """#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuComplex.h>
__device__ cuFloatComplex twice(cuFloatComplex z, __half h, __nv_bfloat16 b) {
  float s = __shfl_down(1.0f, 1) + __half2float(h);
  return make_cuFloatComplex(2 * cuCrealf(z) + s, cuCimagf(z));
}
"""
    result = translate_source(source, "", hip52)
    assert result.text == """#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bfloat16.h>
#include <hip/hip_complex.h>
__device__ hipFloatComplex twice(hipFloatComplex z, __half h, hip_bfloat16 b) {
  float s = __shfl_down(1.0f, 1) + __half2float(h);
  return make_hipFloatComplex(2 * hipCrealf(z) + s, hipCimagf(z));
}
"""
    assert [f["name"] for f in result.account.deprecated] == ["__shfl_down"]
    assert dict(result.account.converted) == {"library": 5, "device-function": 1, "header": 3}
