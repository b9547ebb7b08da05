"""Run hipcc where a build calls nvcc: nvcc's options in hipcc's spelling (used by rocm/hip.mk).

    python3 rocm/nvcc_as_hipcc.py [--offload-arch=gfxNNN ...] NVCC_ARGUMENTS...
NVIDIA targets (-arch=sm_XX, -gencode, -code) are dropped, -Xcompiler options are passed on,
--use_fast_math becomes -ffast-math, relocatable device code (-rdc=true) becomes -fgpu-rdc, .cu
sources are compiled as HIP.
"""
from __future__ import annotations

import os
import sys

_DROPPED_WITH_VALUE = frozenset({"-arch", "--gpu-architecture", "-gencode", "--generate-code", "-code", "--gpu-code",
                                 "-ccbin", "--compiler-bindir"})
_DROPPED = frozenset({"-lineinfo", "--expt-relaxed-constexpr", "--expt-extended-lambda", "--extended-lambda",
                      "-cudart=static", "--cudart=static", "-Wno-deprecated-gpu-targets"})
_RENAMED = {"--use_fast_math": ["-ffast-math"], "-use_fast_math": ["-ffast-math"], "-rdc=true": ["-fgpu-rdc"],
            "--relocatable-device-code=true": ["-fgpu-rdc"], "-dc": ["-fgpu-rdc", "-c"]}


def translate(arguments: list[str]) -> list[str]:
    words: list[str] = []
    pending = ""  # the option whose value is the next word
    for word in arguments:
        if pending:
            words += word.split(",") if pending == "-Xcompiler" else []
            pending = ""
            continue
        name, _, value = word.partition("=")
        if word in _DROPPED_WITH_VALUE:
            pending = "drop"
        elif word in ("-Xcompiler", "--compiler-options"):
            pending = "-Xcompiler"
        elif name in ("-Xcompiler", "--compiler-options"):
            words += value.split(",")
        elif word in _RENAMED:
            words += _RENAMED[word]
        elif name not in _DROPPED_WITH_VALUE and word not in _DROPPED:
            words.append(word)
    return words


def main(argv: list[str]) -> int:
    arguments = translate(argv[1:])
    if any(word.endswith(".cu") for word in arguments):
        arguments = ["-x", "hip", *arguments]
    hipcc = os.environ.get("HIPCC", "hipcc")
    os.execvp(hipcc, [hipcc, *arguments])
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv))
