"""The AMD side of this project's setup.py: read by it, never run by hand.

A ROCm build of PyTorch (``torch.version.hip`` set) builds ``CUDAExtension`` for AMD GPUs itself:
``BuildExtension`` hipifies the sources at build time and compiles them with hipcc. This file only
gives hipcc options it understands where setup.py speaks to nvcc (``compile_args``: NVIDIA targets
dropped, nvcc-only options mapped or dropped as rocm/nvcc_as_hipcc.py does for make); the GPUs to build
for come from ``PYTORCH_ROCM_ARCH`` as in every ROCm PyTorch build. With a CUDA PyTorch ``ROCM`` is
false and ``compile_args`` returns what it is given, unchanged.
"""
from __future__ import annotations

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nvcc_as_hipcc import translate  # noqa: E402

ROCM = bool(getattr(torch.version, "hip", None))


def hip_flags(flags: list[str]) -> list[str]:
    """An nvcc option list in hipcc's spelling."""
    words: list[str] = translate(list(flags))
    return words


def compile_args(args):  # type: ignore[no-untyped-def]  # a setup.py's own value: a list or {"cxx": ..., "nvcc": ...}
    if not ROCM:
        return args
    if isinstance(args, dict):
        return {key: hip_flags(value) if key == "nvcc" else value for key, value in args.items()}
    return args  # one list for both compilers: it holds no nvcc-only option, or the CUDA build could not use it
