"""Benchmark: match a ~20 MB build log against ~2,000 notebook signatures.

Run: .venv/bin/python bench/match_bench.py [--mb 20] [--signatures 2000] [--seed 7]

The log imitates a large CMake/hipcc build: progress lines, compiler commands with long
paths, warnings with source excerpts and carets, notes, and a few real errors from the seed
entries. The signatures are the seed entries' plus generated ones in the shape users write
(text and regex, some matching the log's warnings, a few with no literal for the slow path).
Printed side by side: the prefiltered matcher and a naive baseline (one regex search per
signature over the log) on a small slice of the same log.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from migrator.lib.signatures.matcher import SignatureSpec, compile_signatures
from migrator.lib.signatures.seed import load_seed_entries

WORDS = [
    "tensor",
    "kernel",
    "reduce",
    "scatter",
    "gather",
    "buffer",
    "stream",
    "matrix",
    "vector",
    "block",
    "grid",
    "tile",
    "attn",
    "norm",
]
DIRS = [
    "src/ops",
    "src/kernels/attention",
    "third_party/cutlass/include/cute",
    "csrc/quant",
    "lib/core",
]
REAL_ERRORS = [
    "{path}:{n}:{c}: fatal error: 'cuda_runtime.h' file not found",
    "/usr/bin/ld: cannot find -lcublas: No such file or directory",
    "/usr/bin/ld: {path}:(.text+0x{n}): undefined reference to `hipLaunchKernel'",
    "nvcc fatal   : Unknown option '--offload-arch=gfx90a'",
    "{path}:{n}:{c}: error: use of undeclared identifier '__shfl_down_sync'; did you mean '__shfl_down'?",
    "error: hipErrorInvalidDevice (hipErrorInvalidDevice) at {path}:{n}",
]


def _ident(rng: random.Random) -> str:
    return f"{rng.choice(WORDS)}_{rng.choice(WORDS)}{rng.randint(0, 999)}"


def _path(rng: random.Random) -> str:
    prefix = rng.choice(["/home/ci/build/work/repo", "/tmp/migrator/run-1234/hip", ""])
    name = f"{rng.choice(DIRS)}/{_ident(rng)}.{rng.choice(['hip', 'cpp', 'cu', 'h'])}"
    return f"{prefix}/{name}" if prefix else name


def _chunk(rng: random.Random, done: int, total: int) -> list[str]:
    path = _path(rng)
    n, c = rng.randint(1, 4000), rng.randint(1, 120)
    kind = rng.random()
    if kind < 0.35:
        pct = min(99, done * 100 // max(total, 1))
        return [
            f"[{pct:3d}%] Building HIP object CMakeFiles/ops.dir/{path.split('/')[-1]}.o",
            (
                f"/opt/rocm/bin/hipcc -DUSE_ROCM -I/home/ci/build/work/repo/include -O3 "
                f"--offload-arch=gfx90a -fPIC -std=c++17 -c {path} -o CMakeFiles/ops.dir/{n}.o"
            ),
        ]
    if kind < 0.75:
        var = _ident(rng)
        return [
            f"{path}:{n}:{c}: warning: unused variable '{var}' [-Wunused-variable]",
            f"    int {var} = blockIdx.x * blockDim.x + threadIdx.x;",
            "        ^",
        ]
    if kind < 0.9:
        return [
            (
                f"{path}:{n}:{c}: warning: loop not unrolled: the optimizer was unable to perform "
                f"the requested transformation [-Wpass-failed=transform-warning]"
            ),
            (
                f"{path}:{n + 3}:{c}: note: in instantiation of function template specialization "
                f"'{_ident(rng)}<float, {rng.choice([64, 128, 256])}>' requested here"
            ),
        ]
    if kind < 0.9995:
        return [
            f"-- Checking for module '{_ident(rng)}' - found version {rng.randint(1, 9)}.{n}"
        ]
    return [rng.choice(REAL_ERRORS).format(path=path, n=n, c=c)]


def make_log(size_mb: float, seed: int) -> str:
    rng = random.Random(seed)
    target = int(size_mb * 1_000_000)
    lines: list[str] = []
    size = 0
    while size < target:
        for line in _chunk(rng, size, target):
            lines.append(line)
            size += len(line) + 1
    return "\n".join(lines)


def make_signatures(count: int, seed: int) -> list[SignatureSpec]:
    rng = random.Random(seed)
    specs: list[SignatureSpec] = []
    for entry_id, entry in enumerate(load_seed_entries(), start=1):
        for sig in entry.signatures:
            specs.append(SignatureSpec(entry_id, len(specs) + 1, sig.kind, sig.pattern))
    entry_id = 100
    while len(specs) < count:
        entry_id += 1
        for _ in range(rng.randint(1, 3)):
            kind, pattern = _user_signature(rng, len(specs))
            specs.append(SignatureSpec(entry_id, len(specs) + 1, kind, pattern))
    return specs[:count]


def _letters(number: int) -> str:
    # Identifiers that users put in signatures are distinct by letters, not only by digits
    # (digits are normalised away in text signatures).
    letters = ""
    while True:
        number, digit = divmod(number, 26)
        letters += "abcdefghijklmnopqrstuvwxyz"[digit]
        if number == 0:
            return letters


def _user_signature(rng: random.Random, number: int) -> tuple[str, str]:
    name = f"{rng.choice(WORDS)}{_letters(number).capitalize()}{rng.choice(WORDS).capitalize()}"
    roll = rng.random()
    if number % 250 == 0:  # a few without any literal: slow path over the whole log
        return "regex", rf"^\s*\d+\s+\w+_{rng.randint(0, 9)}$"
    if roll < 0.3:
        return "text", f"error: no member named '{name}' in namespace 'rocprim'"
    if roll < 0.45:
        return (
            "text",
            f"warning: unused variable '{rng.choice(WORDS)}_{rng.choice(WORDS)}'",
        )
    if roll < 0.7:
        return "regex", rf"undefined reference to .{name}\w*"
    if roll < 0.85:
        return "regex", rf"(?:hip|roc)\w+Error\w*: {name}"
    return "text", f"RuntimeError: {name} failed with status"


def naive_rate(specs: list[SignatureSpec], sample: str) -> float:
    """MB/s of one case-insensitive regex search per signature over the whole sample."""
    compiled = [
        re.compile(
            re.escape(s.pattern) if s.kind == "text" else s.pattern,
            re.IGNORECASE | re.MULTILINE,
        )
        for s in specs
    ]
    started = time.perf_counter()
    for pattern in compiled:
        list(pattern.finditer(sample))
    return len(sample.encode()) / 1e6 / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=20.0)
    parser.add_argument("--signatures", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    log = make_log(args.mb, args.seed)
    specs = make_signatures(args.signatures, args.seed)
    size_mb = len(log.encode()) / 1e6
    kinds = {k: sum(1 for s in specs if s.kind == k) for k in ("text", "regex")}
    print(
        f"log: {size_mb:.1f} MB, {log.count(chr(10)) + 1} lines; signatures: {len(specs)} {kinds}"
    )

    started = time.perf_counter()
    matcher = compile_signatures(specs)
    compile_s = time.perf_counter() - started
    print(f"compile_signatures: {compile_s:.3f} s")

    # Best of three, with CPU time beside wall time: on a shared machine the wall time
    # includes waiting for a core.
    runs = []
    for _ in range(3):
        wall, cpu = time.perf_counter(), time.process_time()
        results = matcher.match(log)
        runs.append((time.perf_counter() - wall, time.process_time() - cpu))
    match_s, match_cpu_s = min(runs)
    print(
        f"match (best of 3): {match_s:.3f} s wall, {match_cpu_s:.3f} s CPU, "
        f"{size_mb / match_s:.1f} MB/s; {len(results)} entries matched, "
        f"{sum(m.line_count for m in results)} matching lines, "
        f"{len(results.skipped)} signatures skipped"
    )
    print(
        "  all runs (wall, cpu): " + ", ".join(f"({w:.2f}, {c:.2f})" for w, c in runs)
    )
    for match in results[:5]:
        print(
            f"  entry {match.entry_id}: score {match.score}, lines {match.line_numbers[:5]}"
        )

    sample = log[:100_000]
    naive = naive_rate(specs, sample)
    print(
        f"naive baseline (one regex per signature, 0.1 MB slice): {naive:.2f} MB/s; "
        f"speed-up x{size_mb / match_s / naive:.0f}"
    )


if __name__ == "__main__":
    main()
