"""Scan-stage benchmark: inventory, build-file findings and readiness over a generated 5,000-file tree.

Run: .venv/bin/python bench/scan_bench.py [--files N]
Prints files/s for the inventory, the findings and the readiness (the tree translated in memory, with the
wavefront scan, as the stage does) and all together (target: 5,000 files in < 10 s on one core).
"""
from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from translator import TranslateOptions
from translator.tree import account_tree
from worker.scanning.findings import scan_build_files
from worker.scanning.inventory import build_inventory
from worker.scanning.readiness import summarize

CU = """#include <cuda_runtime.h>
#include <cublas_v2.h>
#include "common{n}.h"

__global__ void kernel_{n}(const float* __restrict__ in, float* out, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(out, v);
}}

void launch_{n}(const float* in, float* out, int n, cudaStream_t stream) {{
    dim3 block(256), grid((n + 255) / 256);
    kernel_{n}<<<grid, block, 0, stream>>>(in, out, n);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) fprintf(stderr, "%s\\n", cudaGetErrorString(err));
    cudaStreamSynchronize(stream);
}}
""" + "\n".join(f"// padding line {i}: explains the reduction above in more words" for i in range(60))

CPP = """#include <vector>
#include <cstdio>
#include "common{n}.h"
namespace app {{
int helper_{n}(const std::vector<int>& v) {{
    int total = 0;
    for (int x : v) total += x * {n};
    return total;
}}
}}  // namespace app
""" + "\n".join(f"static int pad_{{n}}_{i}() {{{{ return {i}; }}}}" for i in range(80))

HEADER = "#pragma once\n#include <cuda_fp16.h>\nstruct Params{n} {{ int n; float alpha; cudaEvent_t start; }};\n" * 3
CMAKE = """cmake_minimum_required(VERSION 3.18)
project(mod{n} LANGUAGES CXX CUDA)
find_package(CUDA REQUIRED)
set(CMAKE_CUDA_ARCHITECTURES 80)
add_library(mod{n} kernel{n}.cu helper{n}.cpp)
target_link_libraries(mod{n} CUDA::cudart cublas)
"""
MAKEFILE = """NVCC ?= /usr/local/cuda/bin/nvcc
FLAGS = -O3 -arch=sm_80 --use_fast_math -I/usr/local/cuda/include
LIBS = -L/usr/local/cuda/lib64 -lcudart -lcublas
mod{n}: kernel{n}.cu
\t$(NVCC) $(FLAGS) -o $@ $< $(LIBS)
"""
REQUIREMENTS = "--extra-index-url https://download.pytorch.org/whl/cu121\ntorch==2.3.1+cu121\nnumpy>=1.24\ncupy-cuda12x\n"
DOCKERFILE = "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\nENV NVIDIA_VISIBLE_DEVICES=all\nRUN pip install -r requirements.txt\n"

MIX = [("kernel{n}.cu", CU, 30), ("helper{n}.cpp", CPP, 30), ("common{n}.h", HEADER, 25), ("CMakeLists.txt", CMAKE, 4),
       ("Makefile", MAKEFILE, 4), ("requirements.txt", REQUIREMENTS, 3), ("Dockerfile", DOCKERFILE, 2), ("README.md", "# module {n}\n", 2)]


def generate(root: Path, count: int) -> int:
    rng = random.Random(7)
    names, templates, weights = zip(*[(name, text, weight) for name, text, weight in MIX])
    written = 0
    while written < count:
        directory = root / f"pkg{written // 50}" / f"mod{written // 10}"
        directory.mkdir(parents=True, exist_ok=True)
        index = rng.choices(range(len(names)), weights)[0]
        path = directory / names[index].format(n=written)
        if path.exists():
            continue
        path.write_text(templates[index].format(n=written))
        written += 1
    return written


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=5000)
    files = parser.parse_args().files
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp)
        generate(tree, files)
        started = time.perf_counter()
        inventory = build_inventory(tree, ("third_party/**",))
        middle = time.perf_counter()
        findings = scan_build_files(tree, ("third_party/**",))
        found = time.perf_counter()
        account = account_tree(tree, TranslateOptions(exclude_globs=("third_party/**",)))
        readiness = summarize(inventory, account)
        finished = time.perf_counter()
    inventory_s, findings_s, total_s = middle - started, found - middle, finished - started
    readiness_s = finished - found
    print(f"tree: {inventory.files_total} files, {inventory.lines_total} lines, {len(inventory.kernels)} kernels, "
          f"{len(findings)} findings")
    print(f"inventory: {inventory_s:.2f} s ({inventory.files_total / inventory_s:,.0f} files/s)")
    print(f"findings:  {findings_s:.2f} s ({inventory.files_total / findings_s:,.0f} files/s walked)")
    print(f"readiness: {readiness_s:.2f} s ({inventory.files_total / readiness_s:,.0f} files/s walked; "
          f"{readiness.items_total} items, hand work {readiness.hand_work}, "
          f"{account.totals()['wavefront_total']} wavefront hazards)")
    print(f"together:  {total_s:.2f} s ({inventory.files_total / total_s:,.0f} files/s; target < 10 s for 5,000 files)")


if __name__ == "__main__":
    main()
