"""Translator throughput and start-up, side by side with hipify-perl when available.

    .venv/bin/python bench/translate_bench.py [--files 1250] [--perl-sample 40] [--rss]
    HIPIFY_PERL=/path/to/hipify-perl .venv/bin/python bench/translate_bench.py

Generates a corpus of realistic CUDA files (>= 200,000 lines by default), pins everything to one
core, and prints, with the corpus size:
* what users run: the whole tree through the command line (``python -m translator SRC -o DST``:
  start-up, walk, read, translate, write, account) against hipify-perl ``-quiet-warnings`` given all
  files in one process (targets: >= 20x);
* the engine in process on in-memory strings (target: >= 100x hipify-perl's batch speed);
* the command line's start-up on a one-kernel file, median of 5 fresh runs (target: < 150 ms);
* hipify-perl run once per file on a sample, and with --rss the peak RSS for N and 4N files.
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
    parts = [HEADER.format(name=f"file{index}.cu")]
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


def builtin_rate(files: list[Path]) -> tuple[float, int, int]:
    from translator import translate_source

    texts = [(str(p), p.read_text()) for p in files]
    lines = sum(t.count("\n") for _, t in texts)
    warm = time.perf_counter()
    translate_source(texts[0][1], texts[0][0])  # builds the rule table and compiles the scanner once
    print(f"first call (rule table + regex compile): {(time.perf_counter() - warm) * 1000:.0f} ms")
    started = time.perf_counter()
    converted = 0
    for path, text in texts:
        result = translate_source(text, path)
        converted += result.account.converted_total + len(result.account.to_dict()["unconverted"])  # type: ignore[arg-type]
    return time.perf_counter() - started, lines, converted


def startup_ms() -> float:
    code = ("import time; t=time.perf_counter(); from translator.mapping import load_default; load_default(); "
            "print((time.perf_counter()-t)*1000)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return float(out.stdout)


def peak_rss_mb(src: Path, dst: Path) -> float:
    code = ("import resource, sys; from pathlib import Path; from translator import translate_tree; "
            "translate_tree(Path(sys.argv[1]), Path(sys.argv[2])); "
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)")
    out = subprocess.run([sys.executable, "-c", code, str(src), str(dst)], cwd=ROOT, capture_output=True, text=True,
                         check=True)
    return float(out.stdout)


def perl_rate(perl: str, files: list[Path], core: int, out_dir: Path) -> tuple[float, int]:
    lines = 0
    started = time.perf_counter()
    for index, path in enumerate(files):
        subprocess.run(["taskset", "-c", str(core), "perl", perl, "-quiet-warnings", f"-o={out_dir / f'{index}.cu'}",
                        str(path)], check=True, capture_output=True)
        lines += path.read_text().count("\n")
    return time.perf_counter() - started, lines


def perl_batch_rate(perl: str, files: list[Path], core: int) -> tuple[float, int]:
    """hipify-perl with every file on one command line (its startup paid once; output to stdout)."""
    lines = sum(path.read_text().count("\n") for path in files)
    started = time.perf_counter()
    subprocess.run(["taskset", "-c", str(core), "perl", perl, "-quiet-warnings", *map(str, files)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started, lines


def cli_tree_rate(src: Path, dst: Path, core: int) -> float:
    """Seconds for ``python -m translator SRC -o DST`` on one core, start-up included."""
    started = time.perf_counter()
    subprocess.run(["taskset", "-c", str(core), sys.executable, "-m", "translator", str(src), "-o", str(dst)],
                   cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - started


def cli_startup_ms(tmp: Path, core: int, runs: int = 5) -> tuple[float, float]:
    """Median wall and CPU (user + system) time of the command line on a one-kernel file, in a fresh
    interpreter each run; CPU time is what a busy shared machine does not inflate."""
    source = tmp / "tiny.cu"
    source.write_text("#include <cuda_runtime.h>\n__global__ void k(float* x) { x[threadIdx.x] = 0; }\n"
                      "int main() { float* x; cudaMalloc(&x, 4); k<<<1, 1>>>(x); return cudaDeviceSynchronize(); }\n")
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(["taskset", "-c", str(core), sys.executable, "-m", "translator", str(source), "-o",
                        str(tmp / "tiny.hip")], cwd=ROOT, check=True, capture_output=True)
        walls.append((time.perf_counter() - started) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=1250, help="N for the corpus")
    parser.add_argument("--perl-sample", type=int, default=40, help="files given to hipify-perl one by one (0: all)")
    parser.add_argument("--rss", action="store_true", help="also measure peak RSS for N and 4N files")
    args = parser.parse_args()
    core = pin_to_one_core()
    perl = os.environ.get("HIPIFY_PERL")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        total_lines = generate_corpus(tmp / "corpus", args.files)
        files = sorted((tmp / "corpus").rglob("*.cu"))
        size = sum(p.stat().st_size for p in files)
        print(f"corpus: {len(files)} files, {total_lines:,} lines, {size / 1e6:.1f} MB (everything on core {core})")
        print(f"start-up (import + load mapping DB, fresh interpreter): {startup_ms():.1f} ms")
        wall, cpu = cli_startup_ms(tmp, core)
        print(f"command line on a one-kernel file, median of 5: {wall:.0f} ms wall, {cpu:.0f} ms CPU (target < 150 ms)")
        seconds, lines, refs = builtin_rate(files)
        engine = lines / seconds
        print(f"engine in process: {lines:,} lines in {seconds:.2f} s = {engine:,.0f} lines/s ({refs} references accounted)")
        tree_s = cli_tree_rate(tmp / "corpus", tmp / "tree_out", core)
        tree = total_lines / tree_s
        print(f"whole tree, command line (walk, read, translate, write, account): {tree_s:.2f} s = {tree:,.0f} lines/s")
        if perl and shutil.which("taskset"):
            batch_s, batch_lines = perl_batch_rate(perl, files, core)
            batch = batch_lines / batch_s
            print(f"hipify-perl -quiet-warnings, all {len(files)} files in one process: {batch_s:.2f} s = {batch:,.0f} lines/s")
            print(f"ratio whole tree / hipify-perl batch: {tree / batch:.1f}x (target >= 20x)")
            print(f"ratio engine in process / hipify-perl batch: {engine / batch:.1f}x (target >= 100x)")
            sample = files if args.perl_sample == 0 else files[:: max(1, len(files) // args.perl_sample)]
            (tmp / "perl").mkdir()
            perl_s, perl_lines = perl_rate(perl, sample, core, tmp / "perl")
            print(f"hipify-perl one run per file ({len(sample)} files): {perl_lines / perl_s:,.0f} lines/s")
        else:
            print("hipify-perl: not measured (set HIPIFY_PERL=/path/to/hipify-perl)")
        if args.rss:
            generate_corpus(tmp / "big", args.files * 4, seed=8)
            print(f"peak RSS translate_tree N={args.files}: {peak_rss_mb(tmp / 'corpus', tmp / 'o1'):.1f} MB; "
                  f"4N={args.files * 4}: {peak_rss_mb(tmp / 'big', tmp / 'o2'):.1f} MB")


if __name__ == "__main__":
    main()
