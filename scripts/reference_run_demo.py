"""Build and run a small CUDA program through the runner core, as the CUDA reference run does.

    python3 scripts/reference_run_demo.py [--out results.json]

Uses only the standard library and worker.runner (gpus, reference, leasing, execute), so it runs
on a bare GPU machine. It probes the NVIDIA GPUs, compiles a vector add + reduction with nvcc
(per translation unit, then link), leases one GPU, runs the program with a GPU-memory sampler,
classifies a failure and checks the checksum against the host's value. On a machine without an
NVIDIA GPU it shows the no-device classification instead.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from worker.project_settings import ProjectSettings, SmokeCheck
from worker.runner.checks import run_checks
from worker.runner.classify import classify_failure
from worker.runner.execute import run_command
from worker.runner.gpus import GpuProbe, probe
from worker.runner.leasing import default_lock_dir, lease_gpu
from worker.runner.reference import build_cuda_reference
from worker.runner.sampling import gpu_memory_sampler
from worker.toolchain.sandbox import Sandbox

KERNELS = r"""
#include "kernels.h"
__global__ void vector_add(const float* a, const float* b, float* c, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
    c[i] = a[i] + b[i];
}
__global__ void fill(float* a, float* b, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
    a[i] = (float)(i % 1000) / 1000.0f;
    b[i] = (float)(i % 7);
  }
}
__global__ void reduce_sum(const float* c, long n, double* out) {
  __shared__ double partial[256];
  double mine = 0.0;
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
    mine += c[i];
  partial[threadIdx.x] = mine;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, partial[0]);
}
"""

HEADER = r"""
#pragma once
__global__ void vector_add(const float* a, const float* b, float* c, long n);
__global__ void fill(float* a, float* b, long n);
__global__ void reduce_sum(const float* c, long n, double* out);
"""

MAIN = r"""
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include "kernels.h"
#define CHECK(call) do { cudaError_t e = (call); if (e != cudaSuccess) { \
  fprintf(stderr, "CUDA error %s: %s at %s:%d\n", cudaGetErrorName(e), cudaGetErrorString(e), __FILE__, __LINE__); \
  return 1; } } while (0)
int main(int argc, char** argv) {
  const long n = 1L << 27;  // 128 Mi floats, 512 MiB per array
  const int repeats = argc > 1 ? atoi(argv[1]) : 4000;
  float *a, *b, *c; double* sum;
  CHECK(cudaMalloc(&a, n * sizeof(float)));
  CHECK(cudaMalloc(&b, n * sizeof(float)));
  CHECK(cudaMalloc(&c, n * sizeof(float)));
  CHECK(cudaMalloc(&sum, sizeof(double)));
  fill<<<1024, 256>>>(a, b, n);
  for (int r = 0; r < repeats; ++r) vector_add<<<4096, 256>>>(a, b, c, n);
  CHECK(cudaMemset(sum, 0, sizeof(double)));
  reduce_sum<<<1024, 256>>>(c, n, sum);
  CHECK(cudaGetLastError());
  double checksum = 0.0;
  CHECK(cudaMemcpy(&checksum, sum, sizeof(double), cudaMemcpyDeviceToHost));
  double expected = 0.0;
  for (long i = 0; i < n; ++i) expected += (double)((float)(i % 1000) / 1000.0f + (float)(i % 7));
  printf("elements = %ld repeats = %d\n", n, repeats);
  printf("checksum = %.6f\n", checksum);
  printf("expected = %.6f\n", expected);
  printf("%s\n", fabs(checksum - expected) <= 1e-9 * fabs(expected) ? "PASSED" : "MISMATCH");
  return 0;
}
"""


def write_sources(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "kernels.cu").write_text(KERNELS)
    (root / "kernels.h").write_text(HEADER)
    (root / "vecadd_reduce.cu").write_text(MAIN)


def _mib(value: int | None) -> str:
    return "unknown" if value is None else f"{value / 2**20:.0f} MiB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    parser.add_argument("--via-stage", action="store_true", help="also run worker.stages.smoke.run_reference")
    args = parser.parse_args()
    found = probe("cuda")
    print(f"probe: source={found.source or 'none'} reason={found.reason or '-'}")
    for gpu in found.gpus:
        print(f"  GPU {gpu.index}: {gpu.name} {gpu.arch} {_mib(gpu.memory_bytes)} {gpu.uuid}")
    arch = found.gpus[0].arch if found.gpus else ""
    work = Path(tempfile.mkdtemp(prefix="reference-demo-"))
    write_sources(work / "source")
    settings = ProjectSettings(smoke_checks=(SmokeCheck("text", "PASSED"),))
    sandbox = Sandbox(None, work, gpu_devices=True)  # the host's CUDA toolkit, read-only, as a cuda runner
    build = build_cuda_reference(
        work / "source", work / "build", settings, sandbox, arch, log=lambda text: print(text, end="")
    )
    print(f"build: ok={build.ok} arch={build.arch} executables={build.executables} {build.duration_s:.2f} s")
    results: dict[str, object] = {"probe": found.to_dict(), "build": build.to_dict()}
    if build.ok:
        results.update(run_program(found, Path(build.build_dir), settings))
    if args.via_stage:
        results["stage"] = run_via_stage(work / "stage")
    if args.out:
        args.out.write_text(json.dumps(results, indent=1))
    return 0


def run_via_stage(root: Path) -> dict[str, object]:
    """The same program through the stage function the ``cuda`` queue task calls."""
    from worker.context import StageContext, Workspace
    from worker.stages.smoke import run_reference

    workspace = Workspace(root)
    write_sources(workspace.source)
    settings = ProjectSettings.from_dict(
        {"smoke_command": "./vecadd_reduce", "smoke_checks": [{"kind": "text", "pattern": "PASSED"}]}
    )
    ctx = StageContext(0, 0, workspace, settings, root / "cache", {}, log=lambda text: None)
    reference = run_reference(ctx)
    print(f"run_reference: ok={reference['ok']} summary={reference['summary']}")
    print(f"  artifact: {(workspace.artifacts / 'reference.json').stat().st_size} bytes")
    return reference


def run_program(found: GpuProbe, build_dir: Path, settings: ProjectSettings) -> dict[str, object]:
    if not found.gpus:
        execution = run_command(["./vecadd_reduce", "1"], build_dir, None, 120, 100_000)
        env: dict[str, str] = {}
        gpu: dict[str, object] | None = None
    else:
        with lease_gpu(found.gpus, default_lock_dir(), timeout_s=60) as lease:
            env, gpu = lease.env(), lease.gpu.to_dict()
            print(f"leased GPU {lease.gpu.index} env={env}")
            execution = run_command(
                ["./vecadd_reduce"], build_dir, lease.apply_to(dict(os.environ)), 120, 100_000,
                gpu_memory_sampler(lease.gpu),
            )
    print(f"run: exit={execution.exit_code} signal={execution.signal} timed_out={execution.timed_out}")
    print(f"duration: {execution.duration_s:.3f} s")
    print(f"peak host RSS: {_mib(execution.peak_host_rss_bytes)}; peak GPU memory: {_mib(execution.peak_gpu_mem_bytes)}")
    print("stdout:\n" + execution.stdout + ("stderr:\n" + execution.stderr if execution.stderr else ""))
    failed = execution.exit_code != 0 or execution.timed_out
    kind = classify_failure(execution.output, execution.exit_code, execution.signal, execution.timed_out) if failed else None
    print(f"classification: {kind.to_dict() if kind else None}")
    checks = run_checks(execution.stdout, execution.exit_code, execution.signal, 0, settings.smoke_checks)
    for check in checks:
        print(f"check {check.name}: {'ok' if check.passed else 'FAILED'} ({check.detail})")
    return {
        "gpu": gpu, "env": env, "execution": execution.to_dict(),
        "classification": kind.to_dict() if kind else None, "checks": [c.to_dict() for c in checks],
    }


if __name__ == "__main__":
    sys.exit(main())
