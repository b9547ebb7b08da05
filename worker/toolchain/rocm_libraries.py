"""Catalogue of ROCm libraries and the CUDA libraries they replace.

Package names: Debian's where Debian packages the library (bookworm/trixie
``lib*-dev`` names), otherwise the name in AMD's ROCm apt repository.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RocmLibrary:
    name: str  # human name, e.g. "hipBLAS"
    header: str  # header path relative to an include dir
    library: str  # "-l" name without prefix; empty for header-only libraries
    debian_package: str  # empty when Debian has none
    rocm_package: str  # package in AMD's ROCm apt repository

    @property
    def package(self) -> str:
        """The package to install: Debian's where it exists, else ROCm's."""
        return self.debian_package or self.rocm_package


ROCM_LIBRARIES: tuple[RocmLibrary, ...] = (
    RocmLibrary("HIP runtime", "hip/hip_runtime.h", "amdhip64", "libamdhip64-dev", "hip-dev"),
    RocmLibrary("hipBLAS", "hipblas/hipblas.h", "hipblas", "libhipblas-dev", "hipblas-dev"),
    RocmLibrary("hipBLASLt", "hipblaslt/hipblaslt.h", "hipblaslt", "", "hipblaslt-dev"),
    RocmLibrary("rocBLAS", "rocblas/rocblas.h", "rocblas", "librocblas-dev", "rocblas-dev"),
    RocmLibrary("MIOpen", "miopen/miopen.h", "MIOpen", "", "miopen-hip-dev"),
    RocmLibrary("hipFFT", "hipfft/hipfft.h", "hipfft", "libhipfft-dev", "hipfft-dev"),
    RocmLibrary("rocFFT", "rocfft/rocfft.h", "rocfft", "librocfft-dev", "rocfft-dev"),
    RocmLibrary("rocRAND", "rocrand/rocrand.h", "rocrand", "librocrand-dev", "rocrand-dev"),
    RocmLibrary("hipRAND", "hiprand/hiprand.h", "hiprand", "libhiprand-dev", "hiprand-dev"),
    RocmLibrary("hipSPARSE", "hipsparse/hipsparse.h", "hipsparse", "libhipsparse-dev", "hipsparse-dev"),
    RocmLibrary("rocSPARSE", "rocsparse/rocsparse.h", "rocsparse", "librocsparse-dev", "rocsparse-dev"),
    RocmLibrary("hipSOLVER", "hipsolver/hipsolver.h", "hipsolver", "libhipsolver-dev", "hipsolver-dev"),
    RocmLibrary("rocSOLVER", "rocsolver/rocsolver.h", "rocsolver", "librocsolver-dev", "rocsolver-dev"),
    RocmLibrary("RCCL", "rccl/rccl.h", "rccl", "librccl-dev", "rccl-dev"),
    RocmLibrary("hipCUB", "hipcub/hipcub.hpp", "", "libhipcub-dev", "hipcub-dev"),
    RocmLibrary("rocPRIM", "rocprim/rocprim.hpp", "", "librocprim-dev", "rocprim-dev"),
    RocmLibrary("rocThrust", "thrust/system/hip/config.h", "", "librocthrust-dev", "rocthrust-dev"),
    RocmLibrary("roctracer/roctx", "roctracer/roctx.h", "roctx64", "", "roctracer-dev"),
    RocmLibrary("rocWMMA", "rocwmma/rocwmma.hpp", "", "", "rocwmma-dev"),
    RocmLibrary("hipTensor", "hiptensor/hiptensor.h", "hiptensor", "", "hiptensor-dev"),
)

_BY_NAME = {lib.name: lib for lib in ROCM_LIBRARIES}

# CUDA "-l" names -> the ROCm library providing the HIP counterpart.
CUDA_LIBRARY_REPLACEMENTS: dict[str, str] = {
    "cudart": "HIP runtime",
    "cudart_static": "HIP runtime",
    "cuda": "HIP runtime",
    "cublas": "hipBLAS",
    "cublasLt": "hipBLASLt",
    "cudnn": "MIOpen",
    "cufft": "hipFFT",
    "curand": "hipRAND",
    "cusparse": "hipSPARSE",
    "cusolver": "hipSOLVER",
    "nccl": "RCCL",
    "nvToolsExt": "roctracer/roctx",
    "cutensor": "hipTensor",
}

# Header directory prefixes in translated sources -> library to link.
_INCLUDE_PREFIX_TO_LIBRARY: dict[str, str] = {
    "hipblas": "hipBLAS", "hipblaslt": "hipBLASLt", "rocblas": "rocBLAS", "miopen": "MIOpen",
    "hipfft": "hipFFT", "rocfft": "rocFFT", "rocrand": "rocRAND", "hiprand": "hipRAND",
    "hipsparse": "hipSPARSE", "rocsparse": "rocSPARSE", "hipsolver": "hipSOLVER",
    "rocsolver": "rocSOLVER", "rccl": "RCCL", "roctracer": "roctracer/roctx",
    "hiptensor": "hipTensor",
}


def library_named(name: str) -> RocmLibrary:
    return _BY_NAME[name]


def replacement_for_cuda_library(lib_name: str) -> RocmLibrary | None:
    """The ROCm library standing in for a CUDA ``-l`` name (``cublas`` -> hipBLAS)."""
    name = CUDA_LIBRARY_REPLACEMENTS.get(lib_name)
    return _BY_NAME[name] if name else None


def library_for_link_name(lib_name: str) -> RocmLibrary | None:
    """The ROCm library whose ``-l`` name is ``lib_name`` (``hipblas`` -> hipBLAS)."""
    return next((lib for lib in ROCM_LIBRARIES if lib.library and lib.library == lib_name), None)


def library_for_include(include: str) -> RocmLibrary | None:
    """The linkable ROCm library an ``#include`` pulls in (``hiprand/hiprand.h`` -> hipRAND)."""
    stem = include.split("/", 1)[0].removesuffix(".h").removesuffix(".hpp")
    name = _INCLUDE_PREFIX_TO_LIBRARY.get(stem)
    if name is None or not _BY_NAME[name].library:
        return None
    return _BY_NAME[name]
