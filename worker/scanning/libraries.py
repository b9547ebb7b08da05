"""CUDA libraries and their ROCm counterparts (link names, CMake targets, display names)."""
from __future__ import annotations

# -l<name> on the CUDA side -> -l<name> on ROCm. cudart/cuda map to amdhip64, which hipcc links
# by itself; naming it explicitly stays correct when the final link is done by g++/clang++.
LINK_LIBRARY_MAP = {
    "cudart": "amdhip64", "cudart_static": "amdhip64", "cuda": "amdhip64",
    "cublas": "hipblas", "cublasLt": "hipblaslt", "cudnn": "MIOpen", "curand": "hiprand",
    "cufft": "hipfft", "cusparse": "hipsparse", "cusolver": "hipsolver", "nccl": "rccl",
    "nvrtc": "hiprtc", "nvToolsExt": "roctx64", "nvidia-ml": "rocm_smi64",
}

# CUDA library (as CUDA::<name>) -> (CMake package of ROCm, imported target), as the ROCm 6 config
# files name them. Libraries without a ROCm package (NPP, NVTX, CUPTI, nvJPEG; RCCL is not in every
# ROCm install) are absent: they are reported, never rewritten to a target that may not exist.
CMAKE_LIBRARIES: dict[str, tuple[str, str]] = {
    "cudart": ("hip", "hip::host"), "cudart_static": ("hip", "hip::host"), "cuda_driver": ("hip", "hip::host"),
    "toolkit": ("hip", "hip::host"), "cuda": ("hip", "hip::host"),
    "cublas": ("hipblas", "roc::hipblas"), "cublas_static": ("hipblas", "roc::hipblas"),
    "cublasLt": ("hipblaslt", "roc::hipblaslt"), "cublasLt_static": ("hipblaslt", "roc::hipblaslt"),
    "cufft": ("hipfft", "hip::hipfft"), "cufft_static": ("hipfft", "hip::hipfft"),
    "curand": ("hiprand", "hip::hiprand"), "curand_static": ("hiprand", "hip::hiprand"),
    "cusparse": ("hipsparse", "roc::hipsparse"), "cusparse_static": ("hipsparse", "roc::hipsparse"),
    "cusolver": ("hipsolver", "roc::hipsolver"), "cusolver_static": ("hipsolver", "roc::hipsolver"),
    "nvrtc": ("hiprtc", "hiprtc::hiprtc"), "nvml": ("rocm_smi", "rocm_smi64"), "cudnn": ("miopen", "MIOpen"),
}
CMAKE_TARGET_MAP = {name: target for name, (_, target) in CMAKE_LIBRARIES.items()}

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
