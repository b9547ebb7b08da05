"""Per-TU compile throughput with the real hipcc: serial vs parallel, and the cached re-run.

Generates a tree of small HIP translation units (40 by default), compiles it with
1 job and with N jobs (N = CPU cores) into separate empty caches, then re-runs
the N-job compile unchanged, which must compile nothing and take under a second.

    .venv/bin/python bench/compile_bench.py [--files 40] [--jobs N]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from worker.project_settings import ProjectSettings
from worker.toolchain.compile import CompileReport, compile_tree
from worker.toolchain.detect import detect_toolchain

KERNEL = """#include <hip/hip_runtime.h>
#include "common.h"
__global__ void saxpy_{n}(float a, const float* x, float* y, int n) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i] + SCALE * {n};
}}
void run_{n}(float* x, float* y, int n) {{
  hipLaunchKernelGGL(saxpy_{n}, dim3((n + 255) / 256), dim3(256), 0, 0, 2.0f, x, y, n);
}}
"""


def generate_tree(root: Path, files: int) -> None:
    (root / "include").mkdir(parents=True)
    (root / "include/common.h").write_text("#pragma once\n#define SCALE 0.5f\n")
    for n in range(files):
        (root / "src").mkdir(exist_ok=True)
        (root / f"src/k{n:03d}.hip").write_text(KERNEL.format(n=n))


def timed_compile(tree: Path, work: Path, name: str, jobs: int) -> tuple[float, CompileReport]:
    started = time.monotonic()
    settings = ProjectSettings(offload_archs=("gfx90a",))  # one target: this measures parallelism and the cache
    report = compile_tree(tree, work / f"build-{name}", settings, work / f"cache-{name}", jobs=jobs)
    elapsed = time.monotonic() - started
    if not report.ok:
        failed = [f.path for f in report.files if f.status != "passed"]
        raise SystemExit(f"compile failed for {failed[:3]}: {report.files[0].output[:2000]}")
    return elapsed, report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    toolchain = detect_toolchain()
    print(f"hipcc {toolchain.hipcc_version}, clang {toolchain.clang_version}; {args.files} TUs, gfx90a")
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        generate_tree(work / "tree", args.files)
        serial, _ = timed_compile(work / "tree", work, "serial", 1)
        print(f"parallelism 1 : {serial:7.2f} s  ({args.files / serial:.2f} TU/s)")
        parallel, _ = timed_compile(work / "tree", work, "parallel", args.jobs)
        print(f"parallelism {args.jobs:<2}: {parallel:7.2f} s  ({args.files / parallel:.2f} TU/s)")
        speedup = serial / parallel
        print(f"speed-up      : {speedup:.2f}x on {args.jobs} jobs "
              f"(target {0.8 * args.jobs:.2f}x = 0.8 x cores: {'met' if speedup >= 0.8 * args.jobs else 'NOT met'})")
        rerun, report = timed_compile(work / "tree", work, "parallel", args.jobs)
        print(f"unchanged re-run: {rerun:.3f} s, {report.cache_misses} compiles, {report.cache_hits} cache hits "
              f"({'under' if rerun < 1.0 and report.cache_misses == 0 else 'NOT under'} 1 s with zero compiles)")


if __name__ == "__main__":
    main()
