"""Diff view speed: alignment, full-diff compute, first chunk (cold, warm and from a pickle).

Run: .venv/bin/python bench/diff_bench.py
The synthetic pair is a CUDA file and its hipified version (about 12% of lines
changed, a few lines added), which is what the view mostly shows.
"""

from __future__ import annotations

import difflib
import os
import pickle
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from migrator.lib.diffview.align import align_lines
from migrator.lib.diffview.sidebyside import SideBySide, compute_side_by_side

BLOCK = [
    "// kernel number {n}: scales a vector",
    "__global__ void scale{n}(float* out, const float* in, int n) {{",
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;",
    "    if (i < n) {{",
    "        out[i] = in[i] * {n}.0f;  /* scaled */",
    "    }}",
    "}}",
    "",
    "void run{n}(float* d, int n) {{",
    "    cudaMalloc(&d, n * sizeof(float));",
    "    scale{n}<<<(n + 255) / 256, 256>>>(d, d, n);",
    "    cudaDeviceSynchronize();",
    "    cudaFree(d);",
    "}}",
    "",
]


def make_pair(line_count: int) -> tuple[str, str]:
    rng = random.Random(line_count)
    old: list[str] = []
    for n in range(line_count // len(BLOCK) + 1):
        old += [line.format(n=n) for line in BLOCK]
    old = old[:line_count]
    new: list[str] = []
    for line in old:
        if "<<<" in line:
            new.append(
                "    hipLaunchKernelGGL(scale, dim3((n + 255) / 256), dim3(256), 0, 0, d, d, n);"
            )
        elif "cuda" in line:
            new.append(line.replace("cuda", "hip"))
            if rng.random() < 0.1:
                new.append("    // hipify: check the error code")
        else:
            new.append(line)
    return "\n".join(old) + "\n", "\n".join(new) + "\n"


def ms(action: Callable[[], object], repeat: int = 3) -> str:
    """Best of `repeat`: process CPU time (what an idle server core would take) and wall time.

    CPU time is printed first because this machine's 2 cores are shared with
    other jobs, which inflates wall time unpredictably.
    """
    best_cpu = best_wall = float("inf")
    for _ in range(repeat):
        cpu, wall = time.process_time(), time.perf_counter()
        action()
        best_cpu = min(best_cpu, time.process_time() - cpu)
        best_wall = min(best_wall, time.perf_counter() - wall)
    return f"{best_cpu * 1000:7.1f} ms cpu ({best_wall * 1000:.1f} ms wall)"


def bench_file(line_count: int) -> None:
    old, new = make_pair(line_count)
    a, b = old.splitlines(), new.splitlines()

    def compute(context: int | None = 3) -> SideBySide:
        return compute_side_by_side(
            old, new, old_name="k.cu", new_name="k.hip", context=context
        )

    diff = compute()
    flat = compute(context=None)
    blob = pickle.dumps(diff)
    ready = compute()
    prerender_time = ms(ready.prerender, repeat=1)
    ready_blob = pickle.dumps(ready)
    print(
        f"{line_count} lines: {diff.removed} removed, {diff.added} added, {diff.total_rows} folded rows"
    )
    cases: list[tuple[str, Callable[[], object], int]] = [
        ("align, anchored (ours)", lambda: align_lines(a, b), 3),
        (
            "align, SequenceMatcher(autojunk=True)",
            lambda: difflib.SequenceMatcher(None, a, b).get_opcodes(),
            1,
        ),
        (
            "full-diff compute (align + fold)",
            lambda: compute(),
            3,
        ),
        ("first chunk, 500 rows, folded", lambda: diff.chunk(0), 3),
        ("first chunk, 500 rows, no folding", lambda: flat.chunk(0), 3),
        (
            f"first chunk from pickle ({len(blob) // 1024} KiB)",
            lambda: pickle.loads(blob).chunk(0),
            3,
        ),
        (
            "first chunk cold (compute + render)",
            lambda: compute().chunk(0),
            3,
        ),
        ("first page of 200 rows, folded", lambda: diff.page(0, 200), 3),
        (
            "first page of 200 rows, cold (compute + render)",
            lambda: compute().page(0, 200),
            3,
        ),
        ("unified first chunk, 500 rows", lambda: diff.unified_chunk(0), 3),
        (
            f"prerendered first chunk from pickle ({len(ready_blob) // 1024} KiB)",
            lambda: pickle.loads(ready_blob).chunk(0),
            3,
        ),
    ]
    for label, action, repeat in cases:
        print(f"  {label:<48} {ms(action, repeat)}")
    print(f"  {'prerender (whole-file highlight, background)':<48} {prerender_time}")


def main() -> None:
    print(f"load average before: {os.getloadavg()[0]:.2f} (timings are best of 3)")
    for line_count in (5_000, 20_000):
        bench_file(line_count)


if __name__ == "__main__":
    main()
