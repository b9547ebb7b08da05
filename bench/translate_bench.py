"""Translator speed as users get it, side by side with hipify-perl in one run, on code of our own.

    .venv/bin/python bench/translate_bench.py [--files 1250] [--perl PATH] [--rss]

Generates a corpus of realistic CUDA files (each with kernels, a warp reduction and host code; about
200,000 lines by default), pins everything to one core and prints, with the corpus size:
* command-line start-up on a one-kernel file (median of 9 fresh processes, CPU and wall) against
  hipify-perl's, for the product installed three ways: no bytecode at all and Python forbidden to write
  any (PYTHONDONTWRITEBYTECODE=1), the bytecode ./dev precompiles (read even under
  PYTHONDONTWRITEBYTECODE=1), and a writable bytecode cache; the rule and pattern caches the command line
  keeps under $XDG_CACHE_HOME are warm (the first run's figure is printed too). Target: below hipify-perl
  in each way;
* the whole tree through the command line (start-up, walk, read, translate, scan, write; CPU time, one
  core, as every ratio here) against
  hipify-perl ``-quiet-warnings`` given all files in one process, for 1, 10, 100 and all files (target:
  >= 20x for the whole corpus, and never slower);
* the engine in process on in-memory strings, wavefront scan on as users run it (target: >= 100x
  hipify-perl's batch rate), and off, for comparison;
* with --rss, the peak RSS for N and 4N files.
hipify-perl: --perl, $HIPIFY_PERL, or the newest toolchain root's, run with the host's perl (our own
generated code is not user content). Each product run uses a copy of translator/ in a temporary folder,
so the bytecode state is the one measured.
"""
from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

HEADER = """// {name}: generated benchmark source (cudaMalloc in a comment stays)
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <curand_kernel.h>
#include <cuda_fp16.h>
#include <cub/cub.cuh>
#include <stdio.h>
#include <vector>

#define CHECK(call) do {{ cudaError_t err_ = (call); if (err_ != cudaSuccess) {{ \\
    fprintf(stderr, "CUDA error %s at %s:%d\\n", cudaGetErrorString(err_), __FILE__, __LINE__); exit(1); }} }} while (0)
"""
REDUCE = """
__device__ float warp_sum(float v) {{
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffff, v, offset);
  return v;
}}
"""
KERNEL = """
template <typename T>
__global__ void {k}_kernel(const T* __restrict__ in, T* out, int n, float alpha) {{
  __shared__ T tile[256];
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  // load one element per thread; the bounds check keeps the tail safe
  tile[threadIdx.x] = idx < n ? in[idx] : T(0);
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {{
    if (threadIdx.x < stride) tile[threadIdx.x] += tile[threadIdx.x + stride];
    __syncthreads();
  }}
  if (threadIdx.x == 0) atomicAdd(out + blockIdx.x, tile[0] * alpha);
  float r = __shfl_down_sync(0xffffffff, (float)idx, 1);
  if (r < 0.0f) printf("unexpected value in {k}: %f\\n", r);
}}

__global__ void {k}_half(__half* h, int n) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) h[i] = __hadd(h[i], __float2half(1.0f));
  curandState state;
  curand_init(1234, i, 0, &state);
  float u = curand_uniform(&state);
  (void)u;
}}
"""
HOST = """
void run_{k}(int n, cudaStream_t stream) {{
  float *d_in = nullptr, *d_out = nullptr;
  std::vector<float> host(n, 1.0f);
  CHECK(cudaMalloc(&d_in, n * sizeof(float)));
  CHECK(cudaMalloc(&d_out, n * sizeof(float)));
  CHECK(cudaMemcpyAsync(d_in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream));
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start, stream);
  dim3 grid((n + 255) / 256), block(256);
  {k}_kernel<float><<<grid, block, 0, stream>>>(d_in, d_out, n, 0.5f);
  CHECK(cudaGetLastError());
  cudaEventRecord(stop, stream);
  cudaEventSynchronize(stop);
  float ms = 0.0f;
  cudaEventElapsedTime(&ms, start, stop);
  cublasHandle_t handle;
  cublasCreate(&handle);
  cublasSetStream(handle, stream);
  const float one = 1.0f;
  cublasSaxpy(handle, n, &one, d_in, 1, d_out, 1);
  cublasDestroy(handle);
  size_t temp_bytes = 0;
  cub::DeviceReduce::Sum(nullptr, temp_bytes, d_in, d_out, n, stream);
  CHECK(cudaMemcpy(host.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  printf("{k}: %.3f ms, first = %f\\n", ms, host[0]);
  cudaFree(d_in);
  cudaFree(d_out);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
}}
"""
MAIN = """
int main() {{
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
{calls}
  CHECK(cudaStreamSynchronize(stream));
  cudaStreamDestroy(stream);
  cudaDeviceReset();
  return 0;
}}
"""


def generate_file(index: int, kernels: int) -> str:
    names = [f"op{index}_{j}" for j in range(kernels)]
    parts = [HEADER.format(name=f"file{index}.cu"), REDUCE.format()]
    for name in names:
        parts.append(KERNEL.format(k=name))
        parts.append(HOST.format(k=name))
    parts.append(MAIN.format(calls="\n".join(f"  run_{n}(1 << 20, stream);" for n in names)))
    return "".join(parts)


def generate_corpus(root: Path, files: int, seed: int = 7) -> int:
    rng = random.Random(seed)
    lines = 0
    for index in range(files):
        folder = root / f"module{index % 20:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        text = generate_file(index, rng.randint(2, 3))
        (folder / f"file{index}.cu").write_text(text)
        lines += text.count("\n")
    return lines


def pin_to_one_core() -> int:
    core = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {core})
    return core


def builtin_rate(files: list[Path], scan: bool) -> tuple[float, int]:
    """CPU seconds and lines of the engine in process over ``files`` (read beforehand)."""
    from translator import TranslateOptions, translate_source

    options = TranslateOptions(wavefront_scan=scan)
    texts = [(str(p), p.read_text()) for p in files]
    lines = sum(t.count("\n") for _, t in texts)
    translate_source(texts[0][1], texts[0][0], options)  # builds the rule table and compiles the scanner once
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        for path, text in texts:
            translate_source(text, path, options)
        best = min(best, time.process_time() - started)
    return best, lines


def install_copy(tmp: Path, name: str, bytecode: bool) -> Path:
    """translator/ copied to tmp/name, with the bytecode ./dev would precompile or none."""
    target = tmp / name
    shutil.copytree(ROOT / "translator", target / "translator", ignore=shutil.ignore_patterns("__pycache__"))
    if bytecode:
        subprocess.run([sys.executable, "-m", "compileall", "-q", "--invalidation-mode", "checked-hash",
                        str(target / "translator")], check=True, capture_output=True)
    return target


def environment(cache: Path, write_bytecode: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["XDG_CACHE_HOME"] = str(cache)
    if not write_bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def timed(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def perl_command(perl: str, core: int, files: list[Path]) -> list[str]:
    return ["taskset", "-c", str(core), "perl", perl, "-quiet-warnings", *map(str, files)]


def ours_command(core: int, src: Path, dst: Path) -> list[str]:
    return ["taskset", "-c", str(core), sys.executable, "-m", "translator", str(src), "-o", str(dst)]


def startup(tmp: Path, core: int, perl: str | None, runs: int = 9) -> None:
    source = tmp / "tiny.cu"
    source.write_text("#include <cuda_runtime.h>\n__global__ void k(float* x) { x[threadIdx.x] = 0; }\n"
                      "int main() { float* x; cudaMalloc(&x, 4); k<<<1, 1>>>(x); return cudaDeviceSynchronize(); }\n")
    ways = {"no bytecode, PYTHONDONTWRITEBYTECODE=1": (install_copy(tmp, "bare", False), False),
            "precompiled (./dev), PYTHONDONTWRITEBYTECODE=1": (install_copy(tmp, "compiled", True), False),
            "writable bytecode cache": (install_copy(tmp, "writable", False), True)}
    cache = tmp / "xdg"
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in [*ways, "hipify-perl"]}
    for name, (where, write) in ways.items():
        first = timed(ours_command(core, source, tmp / "tiny.hip"), where, environment(cache, write))
        print(f"start-up, first run ({name}; builds the caches): {first[1] * 1000:.0f} ms CPU, {first[0] * 1000:.0f} ms wall")
    for _ in range(runs):  # alternating, so a change of machine load hits every way alike
        for name, (where, write) in ways.items():
            samples[name].append(timed(ours_command(core, source, tmp / "tiny.hip"), where, environment(cache, write)))
        if perl:
            samples["hipify-perl"].append(timed(["taskset", "-c", str(core), "perl", perl, "-quiet-warnings",
                                                 str(source), f"-o={tmp / 'tiny.perl.hip'}"], tmp))
    perl_cpu = statistics.median(c for _, c in samples["hipify-perl"]) if perl else None
    for name, values in samples.items():
        if not values:
            continue
        wall, cpu = statistics.median(w for w, _ in values), statistics.median(c for _, c in values)
        verdict = "" if perl_cpu is None or name == "hipify-perl" else \
            f" -> {'below' if cpu < perl_cpu else 'NOT below'} hipify-perl"
        print(f"start-up, median of {runs} ({name}): {cpu * 1000:.0f} ms CPU, {wall * 1000:.0f} ms wall{verdict}")


def tree_sizes(tmp: Path, files: list[Path], core: int, perl: str | None) -> float | None:
    """The command line on trees of 1, 10, 100 and all files against hipify-perl on the same files;
    hipify-perl's CPU seconds on all files (None without it)."""
    perl_cpu: float | None = None
    where = install_copy(tmp, "tree-install", True)
    env = environment(tmp / "xdg", write_bytecode=False)
    timed(ours_command(core, files[0], tmp / "warm.hip"), where, env)  # caches warm, as after a first use
    for size in sorted({1, 10, 100, len(files)}):
        if size > len(files):
            continue
        chosen = files[:size]
        src = tmp / f"tree{size}"
        for path in chosen:
            (src / path.parent.name).mkdir(parents=True, exist_ok=True)
            shutil.copy(path, src / path.parent.name / path.name)
        lines = sum(p.read_text().count("\n") for p in chosen)
        ours: list[tuple[float, float]] = []
        theirs: list[tuple[float, float]] = []
        for round_ in range(3 if size < len(files) else 1):
            for which in ([0, 1] if round_ % 2 == 0 else [1, 0]):  # alternating order
                if which == 0:
                    shutil.rmtree(tmp / f"out{size}", ignore_errors=True)
                    ours.append(timed(ours_command(core, src, tmp / f"out{size}"), where, env))
                elif perl:
                    theirs.append(timed(perl_command(perl, core, sorted(src.rglob("*.cu"))), tmp))
                    perl_cpu = theirs[-1][1] if size == len(files) else perl_cpu
        wall, mine = min(ours, key=lambda t: t[1])
        line = (f"tree of {size} file{'s' if size > 1 else ''} ({lines:,} lines): command line {mine:.2f} s CPU "
                f"({wall:.2f} s wall) = {lines / mine:,.0f} lines/s")
        if theirs:
            their_wall, their_cpu = min(theirs, key=lambda t: t[1])
            ratio = their_cpu / mine
            target = 20 if size == len(files) else 1
            line += (f"; hipify-perl batch {their_cpu:.2f} s CPU ({their_wall:.2f} s wall) = {lines / their_cpu:,.0f} "
                     f"lines/s; ratio {ratio:.1f}x (target >= {target}x: {'met' if ratio >= target else 'NOT met'})")
        print(line)
    return perl_cpu


def peak_rss_mb(src: Path, dst: Path) -> float:
    code = ("import resource, sys; from pathlib import Path; from translator import translate_tree; "
            "translate_tree(Path(sys.argv[1]), Path(sys.argv[2])); "
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)")
    out = subprocess.run([sys.executable, "-c", code, str(src), str(dst)], cwd=ROOT, capture_output=True, text=True,
                         check=True)
    return float(out.stdout)


def find_perl(given: str | None) -> str | None:
    candidates = [given, os.environ.get("HIPIFY_PERL")]
    store = Path(os.environ.get("MIGRATOR_TOOLCHAIN_DIR") or "/var/cache/migrator/toolchains")
    if store.is_dir():
        candidates += [str(p) for p in sorted(store.glob("*/usr/bin/hipify-perl"), reverse=True)]
    return next((c for c in candidates if c and Path(c).is_file()), None)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=1250, help="N for the corpus")
    parser.add_argument("--perl", help="hipify-perl to compare with (default: $HIPIFY_PERL or a toolchain root's)")
    parser.add_argument("--rss", action="store_true", help="also measure peak RSS for N and 4N files")
    args = parser.parse_args()
    core = pin_to_one_core()
    perl = find_perl(args.perl) if shutil.which("perl") and shutil.which("taskset") else None
    print(f"load average at start: {os.getloadavg()[0]:.2f}; Python {sys.version.split()[0]}; "
          f"hipify-perl: {perl or 'not found (set HIPIFY_PERL)'}")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        total_lines = generate_corpus(tmp / "corpus", args.files)
        files = sorted((tmp / "corpus").rglob("*.cu"))
        size = sum(p.stat().st_size for p in files)
        print(f"corpus: {len(files)} files, {total_lines:,} lines, {size / 1e6:.1f} MB (everything on core {core})")
        startup(tmp, core, perl)
        perl_cpu = tree_sizes(tmp, files, core, perl)
        seconds, lines = builtin_rate(files, scan=True)
        off_seconds, _ = builtin_rate(files, scan=False)
        engine = lines / seconds
        print(f"engine in process, wavefront scan on: {lines:,} lines in {seconds:.2f} s CPU = {engine:,.0f} lines/s "
              f"(scan off: {lines / off_seconds:,.0f} lines/s)")
        if perl_cpu:
            batch = total_lines / perl_cpu
            print(f"hipify-perl batch, all files: {perl_cpu:.2f} s CPU = {batch:,.0f} lines/s; engine in process / hipify-perl: "
                  f"{engine / batch:.1f}x (target >= 100x: {'met' if engine / batch >= 100 else 'NOT met'})")
        if args.rss:
            generate_corpus(tmp / "big", args.files * 4, seed=8)
            print(f"peak RSS translate_tree N={args.files}: {peak_rss_mb(tmp / 'corpus', tmp / 'o1'):.1f} MB; "
                  f"4N={args.files * 4}: {peak_rss_mb(tmp / 'big', tmp / 'o2'):.1f} MB")
        print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
