"""An original tree and its translation with every kind of change: the patch and tree tests share them."""

from __future__ import annotations

from pathlib import Path


def write_tree(root: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


ORIGINAL = {
    "src/kernel.cu": b"#include <cuda_runtime.h>\n"
    + b"".join(b"int v%d = %d;\n" % (i, i) for i in range(40))
    + b"void f() { cudaMalloc(&p, 4); }\n",
    "src/no_newline.cu": b"int a;\ncudaFree(p);",
    "src/crlf.cu": b"int a;\r\ncudaMemcpy(d, s, n, cudaMemcpyHostToDevice);\r\nint b;\r\n",
    "CMakeLists.txt": b"project(x LANGUAGES CXX CUDA)\n",
    "old dir/gone.txt": b"bye\n",
    "src/renamed.cu": b"__global__ void k() {}\ncudaDeviceSynchronize();\n",
    "src/moved_only.cuh": b"#pragma once\n",
    "data/blob.bin": b"\x00\x01\x02binary\xff" * 50,
}
TRANSLATED = {
    "src/kernel.cu": ORIGINAL["src/kernel.cu"]
    .replace(b"cuda_runtime.h", b"hip/hip_runtime.h")
    .replace(b"cudaMalloc", b"hipMalloc"),
    "src/no_newline.cu": b"int a;\nhipFree(p);",
    "src/crlf.cu": b"int a;\r\nhipMemcpy(d, s, n, hipMemcpyHostToDevice);\r\nint b;\r\n",
    "CMakeLists.txt": b"project(x LANGUAGES CXX HIP)",
    "src/renamed.hip": b"__global__ void k() {}\nhipDeviceSynchronize();\n",
    "src/moved_only.h": b"#pragma once\n",
    "added file.hip": b"new\nfile\n",
    "data/blob.bin": b"\x00\x03binary\xfe" * 60,
    "data/new.bin": b"\x00\x00\x01",
}
RENAMES = {
    "src/renamed.cu": "src/renamed.hip",
    "src/moved_only.cuh": "src/moved_only.h",
}
