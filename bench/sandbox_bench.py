"""Sandbox overhead: the same translation units compiled inside and outside the sandbox, in one run.

Both sides use the same toolchain root and the same clang command line. "Outside" runs it with a
plain ``chroot`` into the root (no namespaces, no limits, no user change: needs root); "inside"
runs it through ``Sandbox.run`` (bubblewrap, setpriv, prlimit), as the compile stage does. The two
alternate file by file so drift in machine load hits both alike. Prints each side's total and
median per file, and the ratio inside/outside (target at most 1.10).

    .venv/bin/python bench/sandbox_bench.py [--files 40]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.compile_bench import generate_tree  # noqa: E402
from worker.toolchain.roots import select_root  # noqa: E402
from worker.toolchain.sandbox import Sandbox, SandboxLimits  # noqa: E402

FLAGS = ["-c", "-std=c++17", "-O3", "-fPIC", "--offload-arch=gfx90a", "-Iinclude", "-x", "hip"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=40)
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("the outside side uses chroot: run as root")
    root = select_root()
    print(f"toolchain {root.name} (HIP {root.hip_version}); {args.files} translation units; "
          f"load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(dir="/var/tmp") as scratch:
        workspace = Path(scratch) / "ws"
        generate_tree(workspace / "hip", args.files)
        (workspace / "out").mkdir()
        box = Sandbox(root, workspace)
        inside, outside = [], []
        for unit in sorted((workspace / "hip" / "src").iterdir()):
            relative = unit.relative_to(workspace / "hip").as_posix()
            inside.append(_inside(box, root.clang, relative))
            outside.append(_outside(root.path, workspace, root.clang, relative))
    total_in, total_out = sum(inside), sum(outside)
    print(f"inside the sandbox : total {total_in:7.2f} s, median {statistics.median(inside):.3f} s per file")
    print(f"outside (chroot)   : total {total_out:7.2f} s, median {statistics.median(outside):.3f} s per file")
    print(f"ratio inside/outside: {total_in / total_out:.3f} (median of per-file ratios "
          f"{statistics.median(i / o for i, o in zip(inside, outside, strict=True)):.3f}; target <= 1.10); "
          f"load average {os.getloadavg()[0]:.2f}")


def _inside(box: Sandbox, clang: str, relative: str) -> float:
    started = time.monotonic()
    result = box.run([clang, *FLAGS, relative, "-o", f"/workspace/out/in-{Path(relative).name}.o"], "/workspace/hip",
                     SandboxLimits(timeout_s=300))
    assert result.ok, result.process.output
    return time.monotonic() - started


def _outside(root: Path, workspace: Path, clang: str, relative: str) -> float:
    # The workspace appears in the chroot through the root's /workspace mount point.
    started = time.monotonic()
    subprocess.run(["unshare", "--mount", "--", "sh", "-c",
                    'mount --bind "$1" "$2/workspace" && exec chroot "$2" sh -c \'cd /workspace/hip && exec "$@"\' - "$3" '
                    + " ".join(FLAGS) + f' "$4" -o /workspace/out/out-{Path(relative).name}.o',
                    "-", str(workspace), str(root), clang, relative], check=True)
    return time.monotonic() - started


if __name__ == "__main__":
    main()
