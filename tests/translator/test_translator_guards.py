"""Code behind CUDA's own guard, version and compiler macros stays enabled."""
from __future__ import annotations

import re

from tests.translator.toolchain import include_dir
from translator import TranslateOptions, translate_source
from translator.guards import INCLUDE_GUARDS

HELPER = """#include <cuda_runtime.h>
#ifdef __DRIVER_TYPES_H__
static const char* err_name(cudaError_t e) { return cudaGetErrorName(e); }
#endif
#if defined(__CUDA_RUNTIME_H__) && CUDART_VERSION >= 11000
#define HAVE_RUNTIME 1
#endif
#ifndef CUDART_VERSION
#error no runtime
#endif
#if defined __CUDACC__ || defined(__NVCC__)
#define ON_DEVICE_COMPILER 1
#endif
#ifdef CURAND_H_
#endif
#ifdef CUDA_VERSION
int driver_version = CUDA_VERSION;
#endif
__device__ int arch() {
#if __CUDA_ARCH__ >= 700
  return 1;
#elif defined(__CUDA_ARCH__)
  return 2;
#endif
  return 0;
}
"""


def test_it_keeps_guarded_helper_code_enabled(hip52: TranslateOptions) -> None:
    result = translate_source(HELPER, "helper_cuda.h", hip52)
    assert result.text == """#include <hip/hip_runtime.h>
#ifdef HIP_INCLUDE_HIP_DRIVER_TYPES_H
static const char* err_name(hipError_t e) { return hipGetErrorName(e); }
#endif
#if defined(HIP_INCLUDE_HIP_HIP_RUNTIME_H) && 12000 >= 11000
#define HAVE_RUNTIME 1
#endif
#if 0 /* ifndef CUDART_VERSION: CUDA version macro, kept enabled */
#error no runtime
#endif
#if defined __HIPCC__ || defined(__HIPCC__)
#define ON_DEVICE_COMPILER 1
#endif
#ifdef HIPRAND_H_
#endif
#if 1 /* ifdef CUDA_VERSION: CUDA version macro, kept enabled */
int driver_version = CUDA_VERSION;
#endif
__device__ int arch() {
#if (__HIP_DEVICE_COMPILE__ * 800) >= 700
  return 1;
#elif defined(__HIP_DEVICE_COMPILE__)
  return 2;
#endif
  return 0;
}
"""


def test_it_evaluates_version_tests_against_the_assumed_cuda_version() -> None:
    source = "#if CUDART_VERSION >= 12040\nint x;\n#endif\n"
    text = translate_source(source, "", TranslateOptions(target_hip_version="5.2", assumed_cuda_version="12.4")).text
    assert text.startswith("#if 12040 >= 12040\n")


def test_every_hip_guard_it_emits_is_defined_by_the_toolchain_hip() -> None:
    include = include_dir()
    defined = set()
    headers = [header for folder in ("hip", "hiprand", "hipblas", "hipfft", "hipsolver", "hipsparse")
               for header in (include / folder).rglob("*.h")]
    for header in headers:
        defined.update(re.findall(r"^#define\s+(\w+)", header.read_text(errors="replace"), re.MULTILINE))
    assert set(INCLUDE_GUARDS.values()) <= defined
