"""Compile cost of the three default GPU targets against one, on the same real translation units.

Takes the CUDA sources of our own test fixtures (``tests/fixtures``, ``tests/translator/wavefront_cases``,
``tests/translator/rewrite_fixtures``), translates them with the translator for the default root, keeps
the first ``--units`` that compile for gfx90a alone, then compiles those with the product's per-file
compile (sandbox, fresh object cache each time) for ``gfx90a`` and for ``gfx90a, gfx942, gfx1100``,
alternating the order over ``--rounds`` rounds, and prints the CPU-time ratio (target: 3 targets cost at
most 2.2x one). Where the time goes: each unit compiled for the host alone (``--cuda-host-only``), for
one target's device side up to the front end (``--cuda-device-only -fsyntax-only``), and for each
target's whole device side (``--cuda-device-only``), summed over the units.

    .venv/bin/python bench/compile_targets_bench.py [--units 40] [--rounds 2] [--jobs N]
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from translator import TranslateOptions, translate_tree
from worker.project_settings import ProjectSettings
from worker.toolchain.compile import CompileReport, compile_flags, compile_tree, language_flags, workspace_sandbox
from worker.toolchain.detect import Toolchain, detect_toolchain
from worker.toolchain.sandbox import Sandbox, SandboxLimits
from worker.toolchain.sources import BuildUnit, scan_tree
from worker.toolchain.targets import single_target
from worker.toolchain.version_defines import version_defines
from worker.toolchain.work import TRANSLATED_MOUNT

REPO = Path(__file__).resolve().parent.parent
FIXTURES = ("tests/fixtures", "tests/translator/wavefront_cases", "tests/translator/rewrite_fixtures")
ONE, THREE = ("gfx90a",), ("gfx90a", "gfx942", "gfx1100")


_TIMES = re.compile(r"(\d+)m([\d.]+)s")


def sandboxed_cpu_s(box: Sandbox, argv: list[str], cwd: str) -> float:
    """CPU seconds (user + system) of ``argv`` run in the sandbox: the shell's ``times`` of its children."""
    done = box.run(["sh", "-c", '"$@" >/dev/null 2>&1; times', "sh", *argv], cwd,
                   SandboxLimits(timeout_s=600, memory_mb=8192))
    children = done.process.output.strip().splitlines()[-1]
    return sum(int(m) * 60 + float(s) for m, s in _TIMES.findall(children))


def translated_tree(work: Path, toolchain: Toolchain) -> Path:
    source = work / "source"
    for folder in FIXTURES:
        shutil.copytree(REPO / folder, source / folder.replace("/", "_"))
    translate_tree(source, work / "hip", TranslateOptions(target_hip_version=toolchain.hip_version))
    return work / "hip"


def compile_units(tree: Path, work: Path, name: str, archs: tuple[str, ...], units: list[str],
                  jobs: int) -> tuple[float, CompileReport]:
    """(wall s, report) of one fresh compile of ``units`` (all when empty) for ``archs`` by the product."""
    settings = ProjectSettings(offload_archs=archs)
    build, cache = work / f"build-{name}", work / f"cache-{name}"
    for folder in (build, cache):
        shutil.rmtree(folder, ignore_errors=True)
    chosen = [BuildUnit("bench", "executable", "", sources=units)] if units else []
    wall = time.monotonic()
    report = compile_tree(tree, build, settings, cache, jobs=jobs, units=chosen)
    return time.monotonic() - wall, report


def compiler_cpu_s(box: Sandbox, flags: list[str], units: list[str], toolchain: Toolchain) -> float:
    """CPU seconds of compiling every unit with ``flags`` (the per-file compile's command, object discarded)."""
    return sum(sandboxed_cpu_s(box, [toolchain.clang, *language_flags(flags, unit), unit, "-o", "/dev/null"],
                               str(TRANSLATED_MOUNT)) for unit in units)


def phase_cpu(box: Sandbox, base: list[str], toolchain: Toolchain, units: list[str]) -> dict[str, float]:
    """CPU seconds per phase, summed over ``units`` (host; device front end; device per target)."""
    phases = {"host": ["--cuda-host-only", *single_target(base, "gfx90a")],
              "device front end (gfx90a)": ["--cuda-device-only", "-fsyntax-only", *single_target(base, "gfx90a")]}
    phases.update({f"device {arch} (front + back end)": ["--cuda-device-only", *single_target(base, arch)] for arch in THREE})
    return {phase: compiler_cpu_s(box, flags, units, toolchain) for phase, flags in phases.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--units", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    toolchain = detect_toolchain()
    print(f"{toolchain.name}: HIP {toolchain.hipcc_version}, clang {toolchain.clang_version}; "
          f"load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        tree = translated_tree(work, toolchain)
        candidates = [u for u in scan_tree(tree).translation_units if u.endswith((".cu", ".hip"))][:2 * args.units]
        _, probe = compile_units(tree, work, "probe", ONE, candidates, args.jobs)
        units = [f.path for f in probe.files if f.status == "passed" and f.path.endswith((".cu", ".hip"))][:args.units]
        print(f"{len(units)} translation units that compile for gfx90a (of {len(probe.files)} tried)")
        base = compile_flags(ProjectSettings(offload_archs=THREE), "c++17", scan_tree(tree).include_dirs,
                             version_defines(toolchain.hipcc_version))
        (work / "phases").mkdir()
        box = workspace_sandbox(toolchain, tree, work / "phases")
        totals = {ONE: [0.0, 0.0], THREE: [0.0, 0.0]}
        for round_ in range(args.rounds):
            order = (ONE, THREE) if round_ % 2 == 0 else (THREE, ONE)
            for archs in order:
                wall, report = compile_units(tree, work, "-".join(archs), archs, units, args.jobs)
                if not report.ok:
                    failed = [f for f in report.files if f.status != "passed"]
                    raise SystemExit(f"{archs}: {failed[0].path} failed: {failed[0].output[-1500:]}")
                flags = base if archs == THREE else single_target(base, ONE[0])
                cpu = compiler_cpu_s(box, flags, units, toolchain)
                totals[archs][0] += wall
                totals[archs][1] += cpu
                print(f"round {round_ + 1} {','.join(archs):<22} compile stage wall {wall:7.2f} s  compiler CPU {cpu:7.2f} s")
        ratio = totals[THREE][1] / totals[ONE][1]
        print(f"CPU time, 3 targets / 1 target: {ratio:.2f}x (target <= 2.2x: {'met' if ratio <= 2.2 else 'NOT met'}); "
              f"wall {totals[THREE][0] / totals[ONE][0]:.2f}x")
        spent = phase_cpu(box, base, toolchain, units)
        whole = spent["host"] + sum(v for k, v in spent.items() if k.startswith("device gfx"))
        for phase, seconds in spent.items():
            print(f"  {phase:<34} CPU {seconds:7.2f} s  ({100 * seconds / whole:4.1f}% of host + 3 device sides)")
    print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
