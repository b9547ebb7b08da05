"""CUDA libraries and their ROCm counterparts (link names, CMake targets, display names)."""
from __future__ import annotations

# -l<name> on the CUDA side -> -l<name> on ROCm. cudart/cuda map to amdhip64, which hipcc links
# by itself; naming it explicitly stays correct when the final link is done by g++/clang++.
LINK_LIBRARY_MAP = {
    "cudart": "amdhip64", "cudart_static": "amdhip64", "cuda": "amdhip64",
    "cublas": "hipblas", "cublasLt": "hipblaslt", "cudnn": "MIOpen", "curand": "hiprand",
    "cufft": "hipfft", "cusparse": "hipsparse", "cusolver": "hipsolver", "nccl": "rccl",
    "nvrtc": "hiprtc", "nvToolsExt": "roctx64",
}

CMAKE_TARGET_MAP = {
    "cudart": "hip::host", "cudart_static": "hip::host", "cuda_driver": "hip::host",
    "cublas": "roc::hipblas", "cublasLt": "roc::hipblaslt", "cufft": "hip::hipfft", "curand": "hip::hiprand",
    "cusparse": "roc::hipsparse", "cusolver": "roc::hipsolver", "nvrtc": "hiprtc::hiprtc",
    "nvToolsExt": "roctracer::roctx", "nccl": "rccl::rccl",
}

# CUDA library display name -> the ROCm package that must be installed for it.
ROCM_COUNTERPART = {
    "cuBLAS": "hipBLAS", "cuBLASLt": "hipBLASLt", "cuDNN": "MIOpen", "cuFFT": "hipFFT", "cuRAND": "hipRAND",
    "cuSPARSE": "hipSPARSE", "cuSOLVER": "hipSOLVER", "NCCL": "RCCL", "Thrust": "rocThrust", "CUB": "hipCUB",
    "NVRTC": "hipRTC", "NVTX": "rocTX", "cuTENSOR": "hipTensor", "CUTLASS": "composable_kernel (hand port)",
}

# Identifier prefix -> library display name; checked longest first.
IDENTIFIER_PREFIXES = (
    ("cublasLt", "cuBLASLt"), ("cublas", "cuBLAS"), ("cudnn", "cuDNN"), ("cufft", "cuFFT"),
    ("curand", "cuRAND"), ("cusparse", "cuSPARSE"), ("cusolver", "cuSOLVER"), ("cutensor", "cuTENSOR"),
    ("nccl", "NCCL"), ("nvrtc", "NVRTC"), ("nvtx", "NVTX"), ("cuda", "CUDA runtime"), ("cu", "CUDA driver"),
)

HEADER_LIBRARIES = {
    "cublas": "cuBLAS", "cudnn": "cuDNN", "cufft": "cuFFT", "curand": "cuRAND", "cusparse": "cuSPARSE",
    "cusolver": "cuSOLVER", "nccl": "NCCL", "thrust/": "Thrust", "cub/": "CUB", "cooperative_groups": "cooperative groups",
    "cutlass/": "CUTLASS", "nvtx": "NVTX", "cutensor": "cuTENSOR",
}


def library_of_identifier(name: str) -> str:
    lowered = name.lower()
    for prefix, library in IDENTIFIER_PREFIXES:
        if lowered.startswith(prefix.lower()):
            return library
    return "CUDA runtime"
