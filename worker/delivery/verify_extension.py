"""Both sides of a delivered PyTorch extension (a top-level ``setup.py`` with ``CUDAExtension``), in the sandbox.

Neither side can run the ``setup.py`` here: that needs a ROCm PyTorch or a CUDA PyTorch in the build
environment. What each build would compile is compiled instead, from the extensions as the delivered
``setup.py`` declares them (``worker.scanning.extension_units``, which reads through the helper call the
edit adds):
- ROCm: what ROCm PyTorch's ``BuildExtension`` does at build time. PyTorch's own hipify (the worker's
  ``torch/utils/hipify``, run in the sandbox over the toolchain root, ``translator/torch_hipify.py``)
  translates the delivered sources, guarded wave-size fixes included; each source is then compiled for
  the run's offload targets against PyTorch's hipified headers (``worker.toolchain.extension_build``,
  ``torch_headers``), with the extension's nvcc flags mapped for clang.
- CUDA: every ``.cu`` source compiled with ``nvcc -c`` and the extension's own nvcc flags, as the CUDA
  build gives them, PyTorch's (unhipified) headers on the include path; skipped where no nvcc is installed.
Nothing is linked on either side. Failed or passed from exit status and limit events.
"""
from __future__ import annotations

import json
import shutil
import sysconfig
import time
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from translator.torch_hipify import SCRIPT, TorchHipifyError, hipify_package, parse_answer
from worker.contained import ContainedFileError, read_text_beneath
from worker.context import Workspace
from worker.delivery.verify import BUILD, COPY, DELIVERED, SideResult, StepData, build_in_sandbox
from worker.project_settings import ProjectSettings
from worker.scanning.extension_units import ExtensionUnit, extension_units
from worker.stages.engine_tree import copy_changed, copy_source
from worker.toolchain.detect import detect_toolchain
from worker.toolchain.extension_build import compile_extensions, plan_extension
from worker.toolchain.roots import select_root
from worker.toolchain.sandbox import MOUNT, TOOLS, Sandbox, SandboxLimits, SandboxUnavailable
from worker.toolchain.torch_headers import HeaderTreeUnavailable, ensure_header_tree, torch_install
from worker.toolchain.work import REFERENCE_WORK, WORK, WorkError, make_dirs, open_work, remove, run_sandbox

Log = Callable[[str], None]
HIPIFY_OUT = MOUNT / "delivered-hipify"
HIPIFIED = PurePosixPath("/tmp/delivered-hip")  # the hipified copy (root side), read-only
TORCH_INCLUDE = PurePosixPath("/tmp/torch-include")
PYTHON_INCLUDE = PurePosixPath("/tmp/python-include")
HIPIFY_LIMITS = SandboxLimits(timeout_s=600, memory_mb=4096, processes=256)
TOOL = "torch-hipify"


def extensions_of(tree: Path, settings: ProjectSettings) -> list[ExtensionUnit]:
    return [unit for unit in extension_units(tree, tuple(settings.exclude_globs), []) if unit.sources]


def nvcc_steps(units: list[ExtensionUnit], torch_headers: bool) -> list[list[str]]:
    """One ``nvcc -c`` per ``.cu`` source, with what the CUDA build gives it (as seen in the sandbox)."""
    steps = []
    for unit in units:
        name = unit.name.rsplit(".", 1)[-1]
        includes = [f"-I{COPY / d}" for d in unit.include_dirs]
        if torch_headers:
            includes += ["-isystem", str(TORCH_INCLUDE), "-isystem", f"{TORCH_INCLUDE}/torch/csrc/api/include",
                         "-isystem", str(PYTHON_INCLUDE)]  # nvcc takes the folder as the next word
        defines = [f"-D{d}" for d in unit.defines]
        for source in unit.sources:
            if not source.endswith(".cu"):
                continue
            output = BUILD / (source.replace("/", "__") + ".o")
            steps.append(["nvcc", "-c", str(COPY / source), "-o", str(output), "-std=c++17",
                          f"-DTORCH_EXTENSION_NAME={name}", "-DTORCH_API_INCLUDE_EXTENSION_H", *defines, *includes,
                          *unit.nvcc_flags])
    return steps


def verify_cuda_extension(tree: Path, workspace: Workspace, settings: ProjectSettings, log: Log) -> SideResult:
    if shutil.which("nvcc") is None:
        return SideResult("cuda", "skipped", "no nvcc on this worker: the CUDA build was not checked")
    steps = nvcc_steps(extensions_of(tree, settings), torch_headers=torch_install() is not None)
    if not steps:
        return SideResult("cuda", "failed", "setup.py declares no .cu source that nvcc would compile")
    binds = {str(DELIVERED): tree}
    torch = torch_install()
    if torch is not None:
        binds.update({str(TORCH_INCLUDE): torch.include, str(PYTHON_INCLUDE): Path(sysconfig.get_paths()["include"])})
    with open_work(workspace, size_mb=settings.workspace_mb, log=log, area=REFERENCE_WORK) as work:
        sandbox = run_sandbox(None, workspace, work, binds=binds)
        result = build_in_sandbox("cuda", sandbox, steps, settings, log)
    if result.status == "passed":
        result.reason = f"nvcc compiled the {len(steps)} .cu source(s) of setup.py's CUDAExtension(s) (not linked)"
    return result


def verify_rocm_extension(tree: Path, workspace: Workspace, settings: ProjectSettings, log: Log) -> SideResult:
    toolchain = detect_toolchain(settings.toolchain)
    package = hipify_package()
    if not toolchain.available:
        return SideResult("rocm", "failed", f"no ROCm toolchain: {toolchain.error}")
    if package is None:
        return SideResult("rocm", "failed", "PyTorch is not installed on this worker: its hipify is what "
                                            "BuildExtension runs at build time")
    try:
        headers = ensure_header_tree()
    except HeaderTreeUnavailable as exc:
        return SideResult("rocm", "failed", str(exc))
    units = extensions_of(tree, settings)
    hipified = tree.parent / "hipified"
    started = time.monotonic()
    with open_work(workspace, size_mb=settings.workspace_mb, log=log, area=WORK) as work:
        sandbox = run_sandbox(select_root(toolchain.name), workspace, work, binds={str(DELIVERED): tree},
                              tools={f"{TOOL}/hipify": package, f"{TOOL}/torch_hipify.py": SCRIPT})
        try:
            renames = _hipify(tree, units, sandbox, work, hipified, log)
        except (TorchHipifyError, WorkError, SandboxUnavailable) as exc:
            return SideResult("rocm", "failed", str(exc))
        plan = plan_extension(units, renames, hipified, settings, headers)
        for note in plan.notes:
            log(f"delivery: {note}\n")
        box = sandbox.with_binds({str(HIPIFIED): hipified})
        report = compile_extensions(plan, hipified, work / "delivered-extension-build", settings,
                                    tree.parent / "object-cache", toolchain, box, headers)
    steps = [StepData(f.command, 0 if f.status == "passed" else 1, round(f.duration_s, 3)) for f in report.files]
    failed = [f for f in report.files if f.status != "passed"]
    output = "".join(f"{f.path}: {f.status}\n{f.output}\n" for f in report.files)
    if report.error or failed or not report.files:
        reason = report.error or (f"{len(failed)} of {len(report.files)} extension source(s) failed: "
                                  f"{', '.join(f.path for f in failed[:5])}" if failed else "no source compiled")
        return SideResult("rocm", "failed", reason, steps, output[-4000:])
    log(f"delivery: ROCm side compiled {len(report.files)} source(s) in {time.monotonic() - started:.1f} s\n")
    return SideResult("rocm", "passed", f"PyTorch's hipify then clang for {', '.join(settings.offload_archs)}: "
                                        f"{len(report.files)} extension source(s) compiled against PyTorch "
                                        f"{headers.torch_version}'s hipified headers (not linked)", steps,
                      output[-4000:])


def _hipify(tree: Path, units: list[ExtensionUnit], sandbox: Sandbox, work: Path, hipified: Path,
            log: Log) -> dict[str, str]:
    """PyTorch's hipify over the delivered tree, as BuildExtension runs it; the result copied (contained)
    into ``hipified`` on the root side. Returns original -> hipified path."""
    remove(sandbox, HIPIFY_OUT)
    make_dirs(sandbox, HIPIFY_OUT)
    files = sorted({s for unit in units for s in unit.sources} | _headers(tree))
    includes = sorted({d for unit in units for d in unit.include_dirs if d != "."})
    request = {"source": str(DELIVERED), "tree": f"{HIPIFY_OUT}/tree", "answer": f"{HIPIFY_OUT}/answer.json",
               "directories": [{"directory": ".", "files": files, "include_dirs": includes}]}
    log(f"delivery: PyTorch's hipify over {len(files)} file(s) of the delivered tree, in the sandbox\n")
    done = sandbox.run(["python3", "-I", "-B", str(TOOLS / TOOL / "torch_hipify.py")], str(HIPIFY_OUT),
                       HIPIFY_LIMITS, stdin=json.dumps(request).encode())
    if not done.process.ok:
        lines = done.process.output.strip().splitlines() or ["no output"]
        raise TorchHipifyError(f"PyTorch's hipify failed in the sandbox: {lines[-1][:300]}")
    output = work / HIPIFY_OUT.relative_to(MOUNT)
    try:
        [answer] = parse_answer(read_text_beneath(output, "answer.json", limit=16 * 1024 * 1024), 1)
    except ContainedFileError as exc:
        raise TorchHipifyError(f"PyTorch's hipify left no answer: {exc.strerror}") from exc
    copy_source(tree, hipified)
    copy_changed(output / "tree", tree, hipified, log)
    return {item.path: item.hipified for item in answer if item.hipified != item.path}


def _headers(tree: Path) -> set[str]:
    return {p.relative_to(tree).as_posix() for p in tree.rglob("*")
            if p.suffix in (".h", ".cuh", ".hpp") and p.is_file() and not p.is_symlink()
            and p.relative_to(tree).parts[0] not in (".git", "rocm")}
