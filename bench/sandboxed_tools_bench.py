"""What running PyTorch's hipify and c++filt in the sandbox costs, against running them on the host, in one run.

PyTorch's hipify: "sandbox" is the hipify stage's engine as it runs now (``run_torch_engine``: the root's
python3 in the sandbox over the toolchain root, the copy of the source made there, each output copied
back into ``hip/`` through ``worker/contained.py``); "host" is what the stage did before (copy the source
to ``hip/`` and run the same driver in place with the worker's Python as a child process). c++filt:
"sandbox" is ``demangle`` (one sandboxed c++filt per batch); "host" is one c++filt of the host per batch.
The sides alternate round by round, both on the same ``/var/tmp`` disk, so drift in load hits both alike.

    .venv/bin/python bench/sandboxed_tools_bench.py [--kernels 40] [--rounds 5] [--tree PATH] [--names 200]

``--tree`` takes a PyTorch extension's source folder instead of the generated one (its whole tree is
hipified, as for a project whose scan finds no kernel folders).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from translator.torch_hipify import SCRIPT, SOURCE_SUFFIXES, hipify_package  # noqa: E402
from worker.context import StageContext, Workspace  # noqa: E402
from worker.project_settings import ProjectSettings  # noqa: E402
from worker.stages.torch_engine import run_torch_engine  # noqa: E402
from worker.toolchain.demangle import demangle  # noqa: E402
from worker.toolchain.roots import select_root  # noqa: E402
from worker.toolchain.sandbox import Sandbox  # noqa: E402

KERNEL = """#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/extension.h>

__global__ void scale_kernel_{i}(float* x, float factor, int n) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * factor + __shfl_down_sync(0xffffffff, x[i], 1);
}}

void scale_{i}(torch::Tensor x, float factor) {{
  const at::cuda::OptionalCUDAGuard guard(device_of(x));
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  int n = x.numel();
  scale_kernel_{i}<<<(n + 255) / 256, 256, 0, stream>>>(x.data_ptr<float>(), factor, n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}}
"""


def generated_tree(folder: Path, kernels: int) -> None:
    (folder / "csrc" / "cuda").mkdir(parents=True)
    for index in range(kernels):
        (folder / "csrc" / "cuda" / f"scale_{index}.cu").write_text(KERNEL.format(i=index))
    (folder / "csrc" / "bindings.cpp").write_text("#include <torch/extension.h>\n" + "".join(
        f"void scale_{i}(torch::Tensor, float);\n" for i in range(kernels)))
    (folder / "setup.py").write_text("from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n")


def sandboxed_hipify(source: Path, scratch: Path) -> float:
    workspace = Workspace(scratch / "sandbox-run")
    shutil.rmtree(workspace.root, ignore_errors=True)
    shutil.copytree(source, workspace.source, symlinks=True)
    workspace.ensure()
    ctx = StageContext(1, 1, workspace, ProjectSettings(), scratch / "cache", {"kind": "archive"},
                       previous={"scan": {"project_kind": {"kind": "pytorch-extension", "kernel_dirs": ["."]}}})
    started = time.monotonic()
    account = run_torch_engine(ctx)
    elapsed = time.monotonic() - started
    assert account is not None and account.files, "the engine did not run"
    return elapsed


def host_hipify(source: Path, scratch: Path) -> float:
    """The stage before: the source copied to hip/ by the worker, then the driver in place on the host."""
    run = scratch / "host-run"
    shutil.rmtree(run, ignore_errors=True)
    driver = scratch / "driver"
    if not driver.exists():
        driver.mkdir()
        (driver / "hipify").symlink_to(hipify_package() or "", target_is_directory=True)
        shutil.copy(SCRIPT, driver / "torch_hipify.py")
    files = sorted(p.relative_to(source).as_posix() for p in source.rglob("*")
                   if p.is_file() and not p.is_symlink() and p.suffix.lower() in SOURCE_SUFFIXES)
    started = time.monotonic()
    run.mkdir()
    request = {"source": str(source), "tree": str(run / "hip"), "answer": str(run / "answer.json"),
               "directories": [{"directory": ".", "files": files}]}
    subprocess.run([sys.executable, "-I", "-B", str(driver / "torch_hipify.py")], input=json.dumps(request),
                   text=True, check=True, capture_output=True)
    return time.monotonic() - started


def alternate(rounds: int, first: Callable[[], float], second: Callable[[], float]) -> tuple[list[float], list[float]]:
    a, b = [], []
    for index in range(rounds):
        if index % 2 == 0:
            a.append(first())
            b.append(second())
        else:
            b.append(second())
            a.append(first())
    return a, b


def names(count: int) -> list[str]:
    return [f"_ZN4kern{len(f'launch{i}')}launch{i}IfEEvPKT_S3_PS1_i" for i in range(count)]


def host_cxxfilt(batch: list[str]) -> float:
    started = time.monotonic()
    subprocess.run(["c++filt"], input="\n".join(batch) + "\n", capture_output=True, text=True, check=True)
    return time.monotonic() - started


def sandboxed_cxxfilt(batch: list[str], sandbox: Sandbox) -> float:
    started = time.monotonic()
    plain = demangle(batch, sandbox)
    elapsed = time.monotonic() - started
    assert plain[batch[0]] != batch[0], "not demangled"
    return elapsed


def report(label: str, inside: list[float], outside: list[float]) -> None:
    ratio = statistics.median(inside) / statistics.median(outside)
    print(f"{label}: sandbox median {statistics.median(inside):.3f} s, host median {statistics.median(outside):.3f} s, "
          f"ratio {ratio:.2f} (rounds: {len(inside)}; load average {os.getloadavg()[0]:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernels", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tree", type=Path)
    parser.add_argument("--names", type=int, default=200)
    args = parser.parse_args()
    if hipify_package() is None:
        sys.exit("PyTorch is not installed in this environment: its hipify folder is what is measured")
    root = select_root()
    with tempfile.TemporaryDirectory(dir="/var/tmp") as folder:
        scratch = Path(folder)
        source = scratch / "source"
        if args.tree:
            shutil.copytree(args.tree, source, symlinks=True)
        else:
            generated_tree(source, args.kernels)
        count = sum(1 for p in source.rglob("*") if p.is_file())
        print(f"toolchain {root.name}; tree of {count} files ({args.tree or f'{args.kernels} generated kernels'})")
        inside, outside = alternate(args.rounds, lambda: sandboxed_hipify(source, scratch),
                                    lambda: host_hipify(source, scratch))
        report("PyTorch's hipify", inside, outside)
        (scratch / "ws").mkdir()
        sandbox = Sandbox(root, scratch / "ws")
        batch = names(args.names)
        inside, outside = alternate(args.rounds, lambda: sandboxed_cxxfilt(batch, sandbox), lambda: host_cxxfilt(batch))
        report(f"c++filt, {args.names} names per batch", inside, outside)


if __name__ == "__main__":
    main()
