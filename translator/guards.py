"""Preprocessor conditions that test CUDA's own macros.

Vendored NVIDIA helpers test include guards (``__DRIVER_TYPES_H__``), version macros
(``CUDART_VERSION``) and compiler macros (``__CUDACC__``, ``__CUDA_ARCH__``). After
translation the code behind them must stay enabled, so:

* include guards become the guard of the HIP header that replaces the CUDA one;
* compiler macros become their HIP counterparts;
* version macros become the assumed CUDA version's value (``defined(X)`` becomes 1),
  because HIP defines no CUDA version and defining one globally would mislead other headers;
* ``__CUDA_ARCH__`` becomes ``__HIP_DEVICE_COMPILE__`` (defined only in the device pass,
  like ``__CUDA_ARCH__``); a numeric test sees it as ``__HIP_DEVICE_COMPILE__ * 800``.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Callable

from translator.options import parse_version
from translator.rules import ARCH_VALUE

INCLUDE_GUARDS = {
    "__CUDA_RUNTIME_H__": "HIP_INCLUDE_HIP_HIP_RUNTIME_H",
    "__cuda_cuda_h__": "HIP_INCLUDE_HIP_HIP_RUNTIME_H",
    "__CUDA_RUNTIME_API_H__": "HIP_INCLUDE_HIP_HIP_RUNTIME_API_H",
    "__DRIVER_TYPES_H__": "HIP_INCLUDE_HIP_DRIVER_TYPES_H",
    "__VECTOR_TYPES_H__": "HIP_INCLUDE_HIP_HIP_VECTOR_TYPES_H",
    "__CHANNEL_DESCRIPTOR_H__": "HIP_INCLUDE_HIP_CHANNEL_DESCRIPTOR_H",
    "__TEXTURE_TYPES_H__": "HIP_INCLUDE_HIP_TEXTURE_TYPES_H",
    "__SURFACE_TYPES_H__": "HIP_INCLUDE_HIP_SURFACE_TYPES_H",
    "__LIBRARY_TYPES_H__": "HIP_INCLUDE_HIP_LIBRARY_TYPES_H",
    "CU_COMPLEX_H_": "HIP_INCLUDE_HIP_HIP_COMPLEX_H",
    "CURAND_H_": "HIPRAND_H_",
    "CURAND_KERNEL_H_": "HIPRAND_KERNEL_H_",
    # the libraries' guards that helper_cuda.h tests to compile its per-library overloads
    "CUBLAS_API_H_": "HIPBLAS_H", "CUBLAS_V2_H_": "HIPBLAS_H", "CUBLAS_H_": "HIPBLAS_H",
    "_CUFFT_H_": "HIPFFT_H_", "CUSOLVER_COMMON_H_": "HIPSOLVER_H", "CUSOLVERDN_H_": "HIPSOLVER_H",
    "CUSPARSE_H_": "HIPSPARSE_H", "CUSPARSEAPI": "HIPSPARSE_H",
}
COMPILER_MACROS = {"__NVCC__": "__HIPCC__", "__CUDACC__": "__HIPCC__", "__CUDA_ARCH__": "__HIP_DEVICE_COMPILE__"}
DIRECTIVE = re.compile(r"^([ \t]*#[ \t]*)(ifdef|ifndef|if|elif)\b(.*)$", re.DOTALL)
TERM = re.compile(r"defined\s*\(\s*(\w+)\s*\)|defined\s+(\w+)|\b([A-Za-z_]\w*)\b")
GUARDED_NAMES = re.compile(r"CUDA|cuda|NVCC|COMPLEX|TYPES_H|DESCRIPTOR_H|CURAND|CUBLAS|CUFFT|CUSOLVER|CUSPARSE")


@functools.lru_cache(maxsize=8)
def version_macros(assumed_cuda_version: str) -> dict[str, str]:
    parts = parse_version(assumed_cuda_version) + (0, 0)
    major, minor = parts[0], parts[1]
    number = str(major * 1000 + minor * 10)
    return {
        "CUDART_VERSION": number, "CUDA_VERSION": number, "__CUDA_API_VERSION": number,
        "__CUDACC_VER_MAJOR__": str(major), "__CUDACC_VER_MINOR__": str(minor), "__CUDACC_VER_BUILD__": "0",
    }


def may_need_guard_rewrite(line: str) -> bool:
    return GUARDED_NAMES.search(line) is not None


def rewrite_condition(line: str, versions: dict[str, str], translate: Callable[[str], str]) -> str:
    """Rewrite one ``#if/#ifdef/#ifndef/#elif`` line; ``translate`` maps other identifiers."""
    match = DIRECTIVE.match(line)
    if match is None:
        return line
    lead, keyword, rest = match.groups()
    if keyword in ("ifdef", "ifndef"):
        name = rest.strip().split()[0] if rest.strip() else ""
        if name in versions:
            value = "1" if keyword == "ifdef" else "0"
            return f"{lead}if {value} /* {keyword} {name}: CUDA version macro, kept enabled */"
        new = INCLUDE_GUARDS.get(name) or COMPILER_MACROS.get(name) or translate(name)
        return f"{lead}{keyword}{rest.replace(name, new, 1)}" if name and new != name else line
    return f"{lead}{keyword}{TERM.sub(lambda m: _term(m, versions, translate), rest)}"


def _term(match: re.Match[str], versions: dict[str, str], translate: Callable[[str], str]) -> str:
    name = match.group(1) or match.group(2)
    if name is not None:
        if name in versions:
            return "1"
        new = INCLUDE_GUARDS.get(name) or COMPILER_MACROS.get(name) or translate(name)
        return match.group(0).replace(name, new)
    word = match.group(3)
    if word in versions:
        return versions[word]
    if word == "__CUDA_ARCH__":
        return ARCH_VALUE
    return INCLUDE_GUARDS.get(word) or COMPILER_MACROS.get(word) or translate(word)
