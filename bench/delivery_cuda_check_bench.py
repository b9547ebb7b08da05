"""The CUDA side of a delivery: the CUDA runner's reference path against the delivering worker's local nvcc.

Run: .venv/bin/python bench/delivery_cuda_check_bench.py [--rounds N] [--fixture NAME] [--smoke COMMAND]

The single-source change of a delivery fixture (default ``make_histogram``) is written over a copy of it,
then both checks run on that tree, alternating which goes first each round, in the sandbox, with the
host's nvcc:
- local: ``worker.delivery.verify.verify_cuda``, the project's own build (make or CMake) with nvcc, as a
  delivering worker without a CUDA runner checks it;
- runner: ``worker.delivery.cuda_check.check_on_cuda_runner``, what the ``cuda`` queue runs: the delivered
  tree built by the CUDA reference path, and with ``--smoke`` (default ``./main``) the smoke command run on a
  leased GPU and compared with the original's output, the original built and run the same way (as when
  the run has no reference of its own);
- runner-ref: the same with the run's own reference output given (the original's output from the first
  ``runner`` round), so only the delivered tree is built and run.
Without an NVIDIA GPU set ``MIGRATOR_FAKE_GPUS=sm_80``: the programs then run without a device, and their
outputs are still compared.
Prints each round's seconds and the medians. No Django, no database.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from worker.context import Workspace  # noqa: E402
from worker.delivery.cuda_check import check_on_cuda_runner  # noqa: E402
from worker.delivery.singlesource import single_source  # noqa: E402
from worker.delivery.verify import SideResult, verify_cuda  # noqa: E402
from worker.project_settings import ProjectSettings  # noqa: E402


def delivered(fixture: Path, scratch: Path) -> tuple[Path, Workspace]:
    workspace = Workspace(scratch / "run")
    shutil.copytree(fixture, workspace.source)
    tree = workspace.root / "delivery" / "single-source" / "tree"
    shutil.copytree(fixture, tree)
    for change in single_source(tree, None).files:
        (tree / change.path).parent.mkdir(parents=True, exist_ok=True)
        (tree / change.path).write_bytes(change.data or b"")
    return tree, workspace


def timed(check: str, tree: Path, workspace: Workspace, settings: ProjectSettings,
          reference: str | None) -> tuple[float, SideResult]:
    started = time.monotonic()
    if check == "local":
        result = verify_cuda(tree, "make" if (tree / "Makefile").is_file() else "cmake", workspace, settings,
                             lambda _: None)
    else:
        given = reference if check == "runner-ref" else None
        result = check_on_cuda_runner(tree, workspace, settings, "bench", given, lambda _: None)
    return time.monotonic() - started, result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--fixture", default="make_histogram")
    parser.add_argument("--smoke", default="./main")
    args = parser.parse_args()
    if shutil.which("nvcc") is None:
        sys.exit("no nvcc on PATH")
    settings = ProjectSettings(smoke_command=args.smoke)
    times: dict[str, list[float]] = {"local": [], "runner": [], "runner-ref": []}
    reference: str | None = None
    print(f"fixture {args.fixture}, smoke {args.smoke!r}, MIGRATOR_FAKE_GPUS={os.environ.get('MIGRATOR_FAKE_GPUS', '')!r}")
    for round_ in range(args.rounds):
        order = ["local", "runner", "runner-ref"] if round_ % 2 == 0 else ["runner", "runner-ref", "local"]
        for check in order:
            with tempfile.TemporaryDirectory() as scratch:
                tree, workspace = delivered(ROOT / "tests/fixtures/delivery" / args.fixture, Path(scratch))
                seconds, result = timed(check, tree, workspace, settings, reference)
            if check == "runner" and reference is None and "original" in result.smoke:
                reference = str(result.smoke["original"])
            times[check].append(seconds)
            smoke = result.smoke.get("comparison", "-") if result.smoke else "-"
            print(f"round {round_ + 1} {check:<6} {seconds:6.1f} s  {result.status:<7} smoke {smoke}: {result.reason[:90]}")
    local, runner, given = (statistics.median(times[k]) for k in ("local", "runner", "runner-ref"))
    print(f"median: local nvcc {local:.1f} s, CUDA runner path {runner:.1f} s with the original built there "
          f"({runner / local:.2f}x local), {given:.1f} s with the run's reference given ({given / local:.2f}x local)")


if __name__ == "__main__":
    main()
