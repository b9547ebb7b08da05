"""Build a delivered tree on both sides before it is offered, each build in the sandbox.

ROCm: over the project's toolchain root, the build as the change documents it (CMake configured with
``-DGPU_PLATFORM=amd``, ``make GPU_PLATFORM=amd``); the build-time translation finds the engine read-only
at ``/mnt/migrator/translator``. CUDA: over the host's CUDA toolkit (read-only), the build exactly as
the team runs it today (no ``GPU_PLATFORM``); skipped with the reason where no ``nvcc`` is installed.
The tree is bound read-only and copied into the run's work area by the sandbox; what the build writes
stays there. Passed or failed from exit status and the sandbox's limit events, nothing else.
"""
from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath

import translator
from worker.context import Workspace
from worker.project_settings import ProjectSettings
from worker.toolchain.detect import detect_toolchain
from worker.toolchain.roots import select_root
from worker.toolchain.sandbox import MOUNT, TOOLS, Sandbox, SandboxLimits, SandboxUnavailable
from worker.toolchain.work import REFERENCE_WORK, WORK, WorkError, make_dirs, open_work, remove, run_sandbox, step

DELIVERED = PurePosixPath("/tmp/delivered")  # the tree, read-only
COPY = MOUNT / "delivered"
BUILD = MOUNT / "delivered-build"
ENGINE = Path(translator.__file__).parent
OUTPUT_TAIL = 4000
Log = Callable[[str], None]


@dataclass
class StepData:
    command: list[str]
    returncode: int
    duration_s: float


@dataclass
class SideResult:
    side: str  # "rocm" | "cuda"
    status: str  # "passed" | "failed" | "skipped"
    reason: str
    steps: list[StepData] = field(default_factory=list)
    output_tail: str = ""
    via: str = ""  # where it was checked: "cuda runner NAME" or "local nvcc" (the CUDA side)
    smoke: dict[str, object] = field(default_factory=dict)  # the smoke comparison with the original (cuda_check)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def rocm_steps(system: str, settings: ProjectSettings, clang: str) -> list[list[str]]:
    archs = ";".join(settings.offload_archs)
    jobs = str(os.cpu_count() or 1)
    if system == "cmake":
        return [["cmake", "-S", str(COPY), "-B", str(BUILD), "-DGPU_PLATFORM=amd", f"-DCMAKE_HIP_COMPILER={clang}",
                 "-DCMAKE_HIP_PLATFORM=amd", f"-DCMAKE_HIP_ARCHITECTURES={archs}", "-DCMAKE_CXX_COMPILER=hipcc"],
                ["cmake", "--build", str(BUILD), "-j", jobs]]
    return [["make", "-C", str(COPY), "-j", jobs, "GPU_PLATFORM=amd", f"AMDGPU_TARGETS={' '.join(settings.offload_archs)}"]]


def cuda_steps(system: str) -> list[list[str]]:
    jobs = str(os.cpu_count() or 1)
    if system == "cmake":
        return [["cmake", "-S", str(COPY), "-B", str(BUILD)], ["cmake", "--build", str(BUILD), "-j", jobs]]
    return [["make", "-C", str(COPY), "-j", jobs]]


def verify_rocm(tree: Path, system: str, workspace: Workspace, settings: ProjectSettings, log: Log) -> SideResult:
    toolchain = detect_toolchain(settings.toolchain)
    if not toolchain.available:
        return SideResult("rocm", "failed", f"no ROCm toolchain: {toolchain.error}")
    with open_work(workspace, size_mb=settings.workspace_mb, log=log, area=WORK) as work:
        sandbox = run_sandbox(select_root(toolchain.name), workspace, work, binds={str(DELIVERED): tree},
                              tools={"translator": ENGINE}, environment={"MIGRATOR_ENGINE": str(TOOLS),
                                                                         "PYTHONDONTWRITEBYTECODE": "1"})
        return build_in_sandbox("rocm", sandbox, rocm_steps(system, settings, toolchain.clang), settings, log)


def verify_cuda(tree: Path, system: str, workspace: Workspace, settings: ProjectSettings, log: Log) -> SideResult:
    if shutil.which("nvcc") is None:
        return SideResult("cuda", "skipped", "no nvcc on this worker: the CUDA build was not checked "
                                             "(a CUDA runner checks it)")
    with open_work(workspace, size_mb=settings.workspace_mb, log=log, area=REFERENCE_WORK) as work:
        sandbox = run_sandbox(None, workspace, work, binds={str(DELIVERED): tree})
        return build_in_sandbox("cuda", sandbox, cuda_steps(system), settings, log)


def build_in_sandbox(side: str, sandbox: Sandbox, steps: list[list[str]], settings: ProjectSettings, log: Log) -> SideResult:
    try:
        remove(sandbox, COPY, BUILD)
        step(sandbox, ["cp", "-a", "--", str(DELIVERED), str(COPY)], "copy the delivered tree")
        make_dirs(sandbox, BUILD)
    except (WorkError, SandboxUnavailable) as exc:
        return SideResult(side, "failed", str(exc))
    result = SideResult(side, "passed", "")
    started = time.monotonic()
    output: list[str] = []
    for argv in steps:
        log(f"$ {' '.join(argv)}\n")
        remaining = max(settings.build_timeout_s - (time.monotonic() - started), 1.0)
        try:
            done = sandbox.run(argv, str(COPY), SandboxLimits(timeout_s=remaining, memory_mb=settings.build_memory_mb),
                               on_line=log)
        except SandboxUnavailable as exc:
            return SideResult(side, "failed", str(exc), result.steps)
        output.append(done.process.output)
        result.steps.append(StepData(argv, done.process.returncode, round(done.process.duration_s, 3)))
        if not done.ok:
            result.status = "failed"
            result.reason = f"{argv[0]} exited with status {done.process.returncode}" + "".join(
                f": {violation}" for violation in done.violations[:1])
            break
    result.output_tail = "".join(output)[-OUTPUT_TAIL:]
    if result.status == "passed":
        result.reason = f"built with {' then '.join(argv[0] + ' ' + argv[1] for argv in steps)}"
    return result
