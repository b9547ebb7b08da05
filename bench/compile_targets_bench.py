"""Compile cost of the three default GPU targets against one, on the same real translation units.

The translation units come from a folder of CUDA code given with ``--from`` (public code fetched at run
time, such as Rodinia's and cuda-samples' sources; nothing of it is kept), else from our own test
fixtures (``tests/fixtures``, ``tests/translator/wavefront_cases``, ``tests/translator/rewrite_fixtures``).
The folder is translated by our engine for the default root, then each ``.cu``/``.hip`` unit (taken
in turn from each project folder) is compiled with the per-file compile's own command (``compile_flags``
+ ``language_flags``, in the sandbox) for ``gfx90a`` and for ``gfx90a, gfx942, gfx1100``, the order
alternating from unit to unit; the first ``--units`` that compile for both are kept, and the compiler
CPU time (user + system, from the sandbox) of the two is compared (target: 3 targets cost at most 2.2x
one). Where the time goes, over the kept units: the host side alone (``--cuda-host-only``), one
target's device side up to the front end (``--cuda-device-only -fsyntax-only``) and each target's whole
device side (``--cuda-device-only``). ``--stage-rounds N`` also times the compile stage itself (fresh
object cache, ``--jobs`` parallel) for both, alternating over N rounds.

    .venv/bin/python bench/compile_targets_bench.py [--from FOLDER] [--units 40] [--stage-rounds 0] [--jobs N]
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
    return sandboxed_run(box, argv, cwd)[1]


def sandboxed_run(box: Sandbox, argv: list[str], cwd: str) -> tuple[bool, float]:
    """(exited 0, CPU seconds) of ``argv`` in the sandbox."""
    done = box.run(["sh", "-c", '"$@" >/dev/null 2>&1; status=$?; times; exit $status', "sh", *argv], cwd,
                   SandboxLimits(timeout_s=600, memory_mb=8192))
    children = done.process.output.strip().splitlines()[-1] if done.process.output.strip() else ""
    return done.process.returncode == 0, sum(int(m) * 60 + float(s) for m, s in _TIMES.findall(children))


def translated_tree(work: Path, toolchain: Toolchain, folder: Path | None) -> Path:
    """``folder`` (else our fixtures) translated by the engine for ``toolchain``."""
    source = work / "source"
    if folder is not None:
        shutil.copytree(folder, source, symlinks=False)
    else:
        for fixture in FIXTURES:
            shutil.copytree(REPO / fixture, source / fixture.replace("/", "_"))
    translate_tree(source, work / "hip", TranslateOptions(target_hip_version=toolchain.hip_version))
    return work / "hip"


def interleaved(units: list[str], depth: int = 2) -> list[str]:
    """Units taken in turn from each project folder (the first ``depth`` path parts), so a few large
    projects do not fill the sample."""
    groups: dict[str, list[str]] = {}
    for unit in sorted(units):
        groups.setdefault("/".join(unit.split("/")[:depth]), []).append(unit)
    order: list[str] = []
    while any(groups.values()):
        for name in list(groups):
            if groups[name]:
                order.append(groups[name].pop(0))
    return order


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


def unit_command(flags: list[str], unit: str, toolchain: Toolchain) -> list[str]:
    return [toolchain.clang, *language_flags(flags, unit), unit, "-o", "/dev/null"]


def measure_units(box: Sandbox, base: list[str], toolchain: Toolchain, candidates: list[str],
                  wanted: int) -> tuple[list[str], dict[tuple[str, ...], float], list[float]]:
    """The first ``wanted`` candidates that compile for one target and for three, each compiled both
    ways with the order alternating by unit; (kept units, CPU s per set of targets, ratio per unit)."""
    flags = {ONE: single_target(base, ONE[0]), THREE: base}
    kept: list[str] = []
    totals = {ONE: 0.0, THREE: 0.0}
    ratios: list[float] = []
    for tried, unit in enumerate(candidates, start=1):
        if len(kept) == wanted:
            break
        order = (ONE, THREE) if len(kept) % 2 == 0 else (THREE, ONE)
        measured: dict[tuple[str, ...], float] = {}
        for archs in order:
            ok, cpu = sandboxed_run(box, unit_command(flags[archs], unit, toolchain), str(TRANSLATED_MOUNT))
            if not ok:
                break
            measured[archs] = cpu
        if len(measured) < 2:
            print(f"  [{tried}] {unit}: does not compile here, not used")
            continue
        kept.append(unit)
        totals[ONE] += measured[ONE]
        totals[THREE] += measured[THREE]
        ratios.append(measured[THREE] / measured[ONE])
        print(f"  [{tried}] {unit}: 1 target {measured[ONE]:6.2f} s, 3 targets {measured[THREE]:6.2f} s CPU "
              f"({ratios[-1]:.2f}x); load {os.getloadavg()[0]:.1f}", flush=True)
    return kept, totals, ratios


def stage_walls(tree: Path, work: Path, units: list[str], rounds: int, jobs: int) -> dict[tuple[str, ...], float]:
    """Wall seconds of the compile stage itself for both sets of targets, alternating over ``rounds``."""
    walls = {ONE: 0.0, THREE: 0.0}
    for round_ in range(rounds):
        for archs in (ONE, THREE) if round_ % 2 == 0 else (THREE, ONE):
            wall, report = compile_units(tree, work, "-".join(archs), archs, units, jobs)
            failed = [f for f in report.files if f.status != "passed"]
            if failed:
                raise SystemExit(f"{archs}: {failed[0].path} failed: {failed[0].output[-1500:]}")
            walls[archs] += wall
            print(f"round {round_ + 1} {','.join(archs):<22} compile stage wall {wall:7.2f} s")
    return walls


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--from", dest="folder", type=Path, help="a folder of CUDA code (default: our fixtures)")
    parser.add_argument("--units", type=int, default=40)
    parser.add_argument("--stage-rounds", type=int, default=0, help="also time the compile stage over N rounds")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    if args.folder is not None and not args.folder.is_dir():
        raise SystemExit(f"--from {args.folder}: not a folder")
    toolchain = detect_toolchain()
    print(f"{toolchain.name}: HIP {toolchain.hipcc_version}, clang {toolchain.clang_version}; "
          f"load average {os.getloadavg()[0]:.2f}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        tree = translated_tree(work, toolchain, args.folder)
        scanned = scan_tree(tree)
        candidates = interleaved([u for u in scanned.translation_units if u.endswith((".cu", ".hip"))])
        print(f"{len(candidates)} CUDA translation units after translation; keeping the first {args.units} that "
              "compile for one target and for three")
        base = compile_flags(ProjectSettings(offload_archs=THREE), "c++17", scanned.include_dirs,
                             version_defines(toolchain.hipcc_version))
        (work / "phases").mkdir()
        box = workspace_sandbox(toolchain, tree, work / "phases")
        units, totals, ratios = measure_units(box, base, toolchain, candidates, args.units)
        if not units:
            raise SystemExit("no translation unit compiled")
        ratio = totals[THREE] / totals[ONE]
        ratios.sort()
        print(f"{len(units)} units: 1 target {totals[ONE]:.1f} s CPU, 3 targets {totals[THREE]:.1f} s CPU: "
              f"{ratio:.2f}x (target <= 2.2x: {'met' if ratio <= 2.2 else 'NOT met'}); per unit "
              f"median {ratios[len(ratios) // 2]:.2f}x, range {ratios[0]:.2f}-{ratios[-1]:.2f}x")
        if args.stage_rounds:
            walls = stage_walls(tree, work, units, args.stage_rounds, args.jobs)
            print(f"compile stage wall, 3 targets / 1 target: {walls[THREE] / walls[ONE]:.2f}x ({args.jobs} jobs)")
        spent = phase_cpu(box, base, toolchain, units)
        whole = spent["host"] + sum(v for k, v in spent.items() if k.startswith("device gfx"))
        for phase, seconds in spent.items():
            print(f"  {phase:<34} CPU {seconds:7.2f} s  ({100 * seconds / whole:4.1f}% of host + 3 device sides)")
    print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
